// The 80 % ranges of predicted throughput (include/shardplan/ranges.h).
#include "shardplan/ranges.h"

#include <cmath>
#include <string_view>

#include "shardplan/enums.h"

namespace shardplan {

std::string framework_family(const std::string& framework) {
    const std::string f = ascii_lower(framework);
    auto has = [&](std::string_view s) { return f.find(s) != std::string::npos; };
    if (has("megatron") || has("nemo")) return "megatron";
    if (has("torchtitan") || has("fsdp") || has("composer") || has("llm-foundry") || has("nanotron")) return "fsdp";
    if (has("maxtext") || has("paxml") || has("jax")) return "jax";
    if (has("deepspeed")) return "deepspeed";
    return "";
}

const std::vector<ResidualBand>& residual_bands() {
    static const std::vector<ResidualBand> bands = {
        // RANGES-BEGIN (tools/fit_ranges.py: kind, generation, family, runs, log half-width; q = 0.86 of |residual|, unseen-source coverage 82 %)
        {"", "", "", 324, 0.1461},
        {"dense", "", "", 256, 0.1277},
        {"dense", "ampere", "", 98, 0.0892},
        {"dense", "ampere", "fsdp", 79, 0.0744},
        {"dense", "ampere", "megatron", 19, 0.1083},
        {"dense", "blackwell", "", 26, 0.1391},
        {"dense", "blackwell", "megatron", 26, 0.1391},
        {"dense", "hopper", "", 132, 0.1433},
        {"dense", "hopper", "fsdp", 57, 0.1478},
        {"dense", "hopper", "jax", 18, 0.1602},
        {"dense", "hopper", "megatron", 57, 0.0983},
        {"moe", "", "", 68, 0.2298},
        {"moe", "blackwell", "", 38, 0.2569},
        {"moe", "blackwell", "megatron", 38, 0.2569},
        {"moe", "hopper", "", 30, 0.1951},
        {"moe", "hopper", "megatron", 30, 0.1951},
        // RANGES-END
    };
    return bands;
}

ThroughputRange throughput_range(double predicted, bool moe, const std::string& generation, const std::string& family) {
    const std::string kind = moe ? "moe" : "dense";
    // From the most specific class to the widest: kind · generation · family, kind · generation, kind, all.
    const struct { bool gen, fam, kind; } levels[] = {{true, true, true}, {true, false, true}, {false, false, true},
                                                      {false, false, false}};
    for (const auto& lv : levels) {
        if (lv.fam && family.empty()) continue;  // no framework named: no family class to look in
        for (const ResidualBand& b : residual_bands()) {
            if ((lv.kind ? kind : std::string()) != b.kind) continue;
            if ((lv.gen ? generation : std::string()) != b.generation) continue;
            if ((lv.fam ? family : std::string()) != b.family) continue;
            if (b.runs < kMinBandRuns && lv.kind) continue;
            std::string basis = lv.kind ? kind : "all runs";
            if (lv.gen) basis += " · " + generation;
            basis += lv.fam ? " · " + family : " · all frameworks";
            // residual = log(pred/meas) within ±w: measured within [P·e^−w, P·e^w].
            return {predicted / std::exp(b.log_half_width), predicted * std::exp(b.log_half_width), b.runs, basis};
        }
    }
    return {predicted, predicted, 0, "no held-out runs"};
}

}  // namespace shardplan
