/// How far a prediction of tokens/s per GPU can be trusted: an 80 % range from the held-out residuals
/// (docs/validation.md, "Ranges") of published runs like it — dense or MoE, GPU generation, framework
/// family, inside one scale-up domain or across several — with fallbacks to wider classes where too few
/// runs are alike. The range is symmetric about the prediction (in ratio), as wide as a source the bands
/// were not built from needs to fall inside it 80 % of the time. tools/fit_ranges.py writes the table from
/// `validate calibration.json --leave-one-source-out --json` and from the other validation files, whose runs
/// no fit has seen; those add to their own framework family's classes only.
/// Beside it, how close two predictions may be before the model cannot order them (kRankingResolution).
///
///   ThroughputRange r = throughput_range(1500, false, "hopper", "megatron", "several");   // r.low, r.high, r.runs
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace shardplan {

/// "megatron" (Megatron-LM, Megatron-Core, NeMo, Megatron-Bridge), "deepspeed" (DeepSpeed, and
/// Megatron-DeepSpeed, Megatron's model code on DeepSpeed's engine), "nanotron", "fsdp" (torchtitan,
/// llm-foundry/Composer, FSDP), "jax" (MaxText, PaxML), or "" when the text names none.
std::string framework_family(const std::string& framework);

/// "one" when the job's GPUs fit in one scale-up domain (all its traffic on NVLink), else "several".
inline const char* domain_scope(int64_t gpus, int64_t scale_up_domain) {
    return gpus <= std::max<int64_t>(1, scale_up_domain) ? "one" : "several";
}

/// One class of runs and the half-width w of its band: measured within [P·e^−w, P·e^w] of a prediction P.
/// w is one quantile (the same for every class) over the class's runs of the band each needs: its
/// held-out |log(predicted/measured)|, less (in quadrature) what the host launch cost's widening already
/// gives it on its side (ThroughputRange::host_slower, host_faster). An empty field matches any value.
struct ResidualBand {
    const char* kind;        // "dense", "moe" or ""
    const char* generation;  // "hopper", ... or ""
    const char* family;      // framework_family() or ""
    const char* scope;       // domain_scope() or ""
    int64_t runs;
    double log_half_width;
};
const std::vector<ResidualBand>& residual_bands();

struct ThroughputRange {
    double low = 0, high = 0;  // tokens/s per GPU: measured runs like this one fell inside 80 % of the time
    int64_t runs = 0;          // how many held-out runs the band comes from
    std::string basis;         // "moe · hopper · megatron · across domains", "dense · all frameworks", ...
    // Log shifts of throughput, towards slower and faster, that the host launch cost's range adds to the
    // class band in quadrature (plan.cpp, widen_for_host); 0 where the host does not set the pace.
    double host_slower = 0, host_faster = 0;
};
/// Two layouts of one job whose predictions are closer than this share of the slower one are closer
/// than the model can order: on published runs, pairs predicted less than 5 % apart were ordered as
/// measured about as often as by a coin (validate's ranking by predicted gap; docs/validation.md,
/// "Ranking"). The search says which of its answers are that close to its first.
inline constexpr double kRankingResolution = 0.05;
/// How far apart two predictions are, as a share of the smaller: |a − b| / min(a, b).
inline double predicted_gap(double a, double b) { return std::fabs(a - b) / std::max(std::min(a, b), 1e-30); }

/// The most specific band with at least kMinBandRuns runs.
ThroughputRange throughput_range(double predicted, bool moe, const std::string& generation, const std::string& family,
                                 const std::string& scope);
inline constexpr int64_t kMinBandRuns = 20;

}  // namespace shardplan
