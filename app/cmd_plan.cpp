// `shardplan plan`: one layout's memory, communication, time and throughput.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/plan.h"
#include "shardplan/report.h"

namespace shardplan::app {

Run setup_plan(CLI::App& cmd) {
    struct Opts {
        ScenarioFlags flags;
        bool json = false;
        std::string color = "auto";
    };
    auto o = std::make_shared<Opts>();
    add_scenario_flags(cmd, o->flags);
    cmd.add_flag("--json", o->json, "Print the plan as JSON (docs/json.md)");
    cmd.add_option("--color", o->color, "auto | always | never");
    return [o]() {
        const bool color = use_color(o->color);
        const Case c = resolve_scenario(o->flags);
        const Plan p = evaluate(c.model, c.cluster, c.layout);
        if (p.rejection) throw ConfigError(p.rejection->field, p.rejection->expected);
        if (o->json) std::cout << plan_to_json(p).dump(2) << "\n";
        else std::cout << format_plan(p, color);
        return 0;
    };
}

}  // namespace shardplan::app
