// `shardplan export`: the layout as a Megatron-LM, torchtitan or DeepSpeed configuration.
#include <iostream>
#include <memory>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/export.h"

namespace shardplan::app {

Run setup_export(CLI::App& cmd) {
    struct Opts {
        ScenarioFlags flags;
        std::string format;
    };
    auto o = std::make_shared<Opts>();
    add_scenario_flags(cmd, o->flags);
    cmd.add_option("--format", o->format, "megatron | torchtitan | deepspeed")->required();
    return [o]() {
        const Framework framework = enum_flag<Framework>(o->format, "--format");
        Case c = resolve_scenario(o->flags);
        const bool named = !c.layout.framework.empty();
        if (!named) c = resolve_scenario(for_framework(o->flags, framework));
        const Export e = export_config(c.model, c.cluster, c.layout, framework);
        if (e.refusal) throw ConfigError("--format", "a framework that can express " + to_string(c.layout) + "; " + *e.refusal);
        if (!named) std::cerr << planned_as(c, framework);  // stderr: stdout stays the configuration
        std::cout << e.text;
        return 0;
    };
}

}  // namespace shardplan::app
