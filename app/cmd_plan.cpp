// `shardplan plan`: one layout's memory, communication, time and throughput.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/plan.h"
#include "shardplan/report.h"
#include "shardplan/table.h"

namespace shardplan::app {

Run setup_plan(CLI::App& cmd) {
    struct Opts {
        ScenarioFlags flags;
        bool json = false;
        std::string format = "table", color = "auto";
    };
    auto o = std::make_shared<Opts>();
    add_scenario_flags(cmd, o->flags);
    add_format_flags(cmd, o->format, o->json);
    cmd.add_option("--color", o->color, "auto | always | never");
    return [o]() {
        const bool color = use_color(o->color);
        const OutputFormat fmt = output_format(o->format, o->json);
        const Case c = resolve_scenario(o->flags);
        const Plan p = evaluate(c.model, c.cluster, c.layout);
        if (p.rejection) throw ConfigError(p.rejection->field, p.rejection->expected);
        switch (fmt) {
            case OutputFormat::as_json: std::cout << plan_to_json(p).dump(2) << "\n"; break;
            case OutputFormat::as_csv: std::cout << to_csv(plan_table(p)); break;
            case OutputFormat::as_markdown: std::cout << to_markdown(plan_table(p)); break;
            case OutputFormat::as_table:
                std::cout << format_plan(p, color);
                if (!p.memory_fits) std::cout << format_fit_changes(p, fit_changes(c.model, c.cluster, c.layout, p));
                break;
        }
        return 0;
    };
}

}  // namespace shardplan::app
