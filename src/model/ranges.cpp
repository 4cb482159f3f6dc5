// The 80 % ranges of predicted throughput (include/shardplan/ranges.h).
#include "shardplan/ranges.h"

#include <cmath>
#include <string_view>

#include "shardplan/enums.h"

namespace shardplan {

std::string framework_family(const std::string& framework) {
    const std::string f = ascii_lower(framework);
    auto has = [&](std::string_view s) { return f.find(s) != std::string::npos; };
    // DeepSpeed's engine first: Megatron-DeepSpeed runs Megatron's layers under DeepSpeed's pipeline
    // engine, ZeRO and optimizer, and its runs stray from the model as DeepSpeed's do, not as Megatron's.
    if (has("deepspeed")) return "deepspeed";
    if (has("megatron") || has("nemo")) return "megatron";
    if (has("nanotron")) return "nanotron";  // its own 3D engine: DDP or ZeRO-1, no FSDP
    if (has("torchtitan") || has("fsdp") || has("composer") || has("llm-foundry")) return "fsdp";
    if (has("maxtext") || has("paxml") || has("jax")) return "jax";
    return "";
}

const std::vector<ResidualBand>& residual_bands() {
    static const std::vector<ResidualBand> bands = {
        // RANGES-BEGIN (tools/fit_ranges.py: kind, generation, family, scope, runs, log half-width; q = 0.85 of the band each run needs, unseen-source coverage 81 %)
        {"", "", "", "", 324, 0.1399},
        {"dense", "", "", "", 256, 0.1210},
        {"dense", "ampere", "", "", 98, 0.0746},
        {"dense", "ampere", "deepspeed", "", 1480, 0.1233},
        {"dense", "ampere", "deepspeed", "one", 1440, 0.1144},
        {"dense", "ampere", "deepspeed", "several", 40, 0.2375},
        {"dense", "ampere", "fsdp", "", 79, 0.0721},
        {"dense", "ampere", "fsdp", "one", 56, 0.0919},
        {"dense", "ampere", "fsdp", "several", 23, 0.0577},
        {"dense", "ampere", "megatron", "", 19, 0.0948},
        {"dense", "ampere", "megatron", "one", 2, 0.0591},
        {"dense", "ampere", "megatron", "several", 17, 0.0957},
        {"dense", "blackwell", "", "", 26, 0.1074},
        {"dense", "blackwell", "megatron", "", 57, 0.1218},
        {"dense", "blackwell", "megatron", "one", 42, 0.1257},
        {"dense", "blackwell", "megatron", "several", 15, 0.0535},
        {"dense", "hopper", "", "", 132, 0.1345},
        {"dense", "hopper", "fsdp", "", 57, 0.1366},
        {"dense", "hopper", "fsdp", "one", 27, 0.1799},
        {"dense", "hopper", "fsdp", "several", 30, 0.1016},
        {"dense", "hopper", "jax", "", 18, 0.1571},
        {"dense", "hopper", "jax", "several", 18, 0.1571},
        {"dense", "hopper", "megatron", "", 57, 0.1022},
        {"dense", "hopper", "megatron", "one", 5, 0.2349},
        {"dense", "hopper", "megatron", "several", 52, 0.0887},
        {"dense", "hopper", "nanotron", "", 1171, 1.3233},
        {"dense", "hopper", "nanotron", "one", 55, 0.1641},
        {"dense", "hopper", "nanotron", "several", 1116, 1.3923},
        {"moe", "", "", "", 68, 0.2188},
        {"moe", "blackwell", "", "", 38, 0.2419},
        {"moe", "blackwell", "megatron", "", 50, 0.1990},
        {"moe", "blackwell", "megatron", "one", 24, 0.1119},
        {"moe", "blackwell", "megatron", "several", 26, 0.2690},
        {"moe", "hopper", "", "", 30, 0.1841},
        {"moe", "hopper", "megatron", "", 30, 0.1841},
        {"moe", "hopper", "megatron", "one", 2, 0.1423},
        {"moe", "hopper", "megatron", "several", 28, 0.1851},
        // RANGES-END
    };
    return bands;
}

ThroughputRange throughput_range(double predicted, bool moe, const std::string& generation, const std::string& family,
                                 const std::string& scope) {
    const std::string kind = moe ? "moe" : "dense";
    // From the most specific class to the widest: kind · generation · family · scope, kind · generation ·
    // family, kind · generation, kind, all.
    const struct { bool gen, fam, scope, kind; } levels[] = {
        {true, true, true, true}, {true, true, false, true}, {true, false, false, true}, {false, false, false, true},
        {false, false, false, false}};
    for (const auto& lv : levels) {
        if (lv.fam && family.empty()) continue;  // no framework named: no family class to look in
        if (lv.scope && scope.empty()) continue;
        for (const ResidualBand& b : residual_bands()) {
            if ((lv.kind ? kind : std::string()) != b.kind) continue;
            if ((lv.gen ? generation : std::string()) != b.generation) continue;
            if ((lv.fam ? family : std::string()) != b.family) continue;
            if ((lv.scope ? scope : std::string()) != b.scope) continue;
            if (b.runs < kMinBandRuns && lv.kind) continue;
            std::string basis = lv.kind ? kind : "all runs";
            if (lv.gen) basis += " · " + generation;
            basis += lv.fam ? " · " + family : " · all frameworks";
            if (lv.scope) basis += scope == "one" ? " · within one domain" : " · across domains";
            // residual = log(pred/meas) within ±w: measured within [P·e^−w, P·e^w].
            return {predicted / std::exp(b.log_half_width), predicted * std::exp(b.log_half_width), b.runs, basis};
        }
    }
    return {predicted, predicted, 0, "no held-out runs"};
}

}  // namespace shardplan
