// `shardplan trace`: one simulated step as a Chrome trace (open it in Perfetto or chrome://tracing).
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/plan.h"
#include "shardplan/report.h"
#include "shardplan/simulate.h"
#include "shardplan/trace.h"

namespace shardplan::app {

Run setup_trace(CLI::App& cmd) {
    struct Opts {
        ScenarioFlags flags;
        std::string out;
    };
    auto o = std::make_shared<Opts>();
    add_scenario_flags(cmd, o->flags);
    cmd.add_option("-o,--output", o->out, "Write the trace here (Chrome Trace Event JSON)")->required();
    return [o]() {
        const Case c = resolve_scenario(o->flags);
        // Refused before planning: a layout too large to draw would be simulated for nothing.
        if (const auto no = trace_refusal(c.model, c.cluster, c.layout, 2'000'000))  // 2 M passes: ~1 GB
            throw ConfigError(no->field, no->expected);
        SimulatedStep step;  // one evaluation, one recorded simulation
        const Plan p = evaluate_traced(c.model, c.cluster, c.layout, step);
        const PipelineSpec& spec = step.spec;
        const SimResult& r = step.result;
        if (!r.error.empty()) throw std::runtime_error("internal error: " + r.error);
        std::ofstream f(o->out);
        if (!f) throw ConfigError("--output", "a writable file path, cannot write \"" + o->out + "\"");
        write_trace(f, p, r, spec);
        f.flush();
        if (!f) throw ConfigError("--output", "a file path with room for the trace, writing \"" + o->out + "\" failed");
        const double closed = closed_form_pipeline_s(p);
        double busy = 0;
        for (double b : r.busy_s) busy = std::max(busy, b);
        std::cout << fmt::format("{} · {} · {} micro-batches\n", to_string(p.layout), enum_name(p.layout.schedule),
                                 p.micro_batches);
        std::cout << fmt::format("  simulated passes  {:>10}   (closed form: step − DP tail − optimizer = {})\n",
                                 format_value(r.makespan_s, Unit::seconds), format_value(closed, Unit::seconds));
        std::cout << fmt::format("  idle on the busiest rank {:>10}  ({:.1f} % of the passes)\n",
                                 format_value(r.makespan_s - busy, Unit::seconds),
                                 r.makespan_s > 0 ? 100 * (r.makespan_s - busy) / r.makespan_s : 0.0);
        std::cout << "wrote " << o->out << " (open it in Perfetto or chrome://tracing)\n";
        return 0;
    };
}

}  // namespace shardplan::app
