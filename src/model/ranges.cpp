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
        // RANGES-BEGIN (tools/fit_ranges.py: kind, generation, family, runs, log half-width; q = 0.84 of |residual|, unseen-source coverage 80 %)
        {"", "", "", 324, 0.1468},
        {"dense", "", "", 256, 0.1301},
        {"dense", "ampere", "", 98, 0.0877},
        {"dense", "ampere", "fsdp", 79, 0.0812},
        {"dense", "ampere", "megatron", 19, 0.1248},
        {"dense", "blackwell", "", 26, 0.1357},
        {"dense", "blackwell", "megatron", 26, 0.1357},
        {"dense", "hopper", "", 132, 0.1430},
        {"dense", "hopper", "fsdp", 57, 0.1425},
        {"dense", "hopper", "jax", 18, 0.1713},
        {"dense", "hopper", "megatron", 57, 0.1006},
        {"moe", "", "", 68, 0.1945},
        {"moe", "blackwell", "", 38, 0.2453},
        {"moe", "blackwell", "megatron", 38, 0.2453},
        {"moe", "hopper", "", 30, 0.1899},
        {"moe", "hopper", "megatron", 30, 0.1899},
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
