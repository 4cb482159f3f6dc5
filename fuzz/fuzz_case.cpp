// libFuzzer target: the case / model / cluster / layout JSON readers, then the planner on what they accept.
// Any input must end in a ConfigError or a plan: never a crash, a hang, UB or a non-finite number.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shardplan/error.h"
#include "shardplan/io.h"
#include "shardplan/plan.h"
#include "shardplan/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace shardplan;
    try {
        // The production parser: its nesting and duplicate-key limits are part of what is fuzzed.
        const json j = parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "input");
        const Case c = case_from_json(j);
        const Plan p = evaluate(c.model, c.cluster, c.layout);
        if (!p.rejection) {
            for (double v : {p.time.step_s, p.memory.total_bytes(), p.throughput.mfu, p.throughput.tokens_per_s})
                if (!std::isfinite(v)) std::abort();
            (void)plan_to_json(p).dump();
            (void)format_plan(p, false);
        }
    } catch (const ConfigError&) {
    }
    return 0;
}
