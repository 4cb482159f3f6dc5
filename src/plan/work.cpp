// The per-layer work a search shares between layouts, and the bound on throughput it gives
// (docs/search.md): what the search reads before it decides whether a layout is worth timing.
#include "shardplan/plan.h"

#include <algorithm>

#include "shardplan/compute.h"
#include "shardplan/memory.h"

namespace shardplan {

StepWork::Key work_key(const Layout& l) {
    // Eager gradient accumulation's pass (compute.h) reads zero, pp and the DP shards as well.
    const bool eager = l.grad_accumulation == GradAccumulation::eager, shards = eager && reduces_grads_per_micro_batch(l);
    return {l.tp, l.cp, l.ep, effective_etp(l), l.micro_batch, l.seq_len, l.sequence_parallel ? 1 : 0,
            static_cast<int64_t>(l.precision), static_cast<int64_t>(l.recompute), shards ? l.dp * l.cp : 0,
            shards ? expert_dp(l) : 0, eager && l.pp == 1 ? 1 : 0};
}

StepWork step_work(const ModelSpec& m, const ClusterSpec& c, const Layout& l) {
    StepWork w;
    w.dense = layer_work(m, c, l, false);
    if (m.moe) w.moe = layer_work(m, c, l, true);
    w.head = head_work(m, c, l);
    w.memory = layer_memory(m, l);
    w.key = work_key(l);
    return w;
}

double tokens_per_s_per_gpu_bound(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const StepWork& w) {
    const double n_moe = static_cast<double>(moe_layers_in(m, 0, m.layers));
    const double n_dense = static_cast<double>(m.layers) - n_moe;
    // Full recomputation's block method replays only some layers: the model-wide share of them.
    double share = 1.0;
    if (l.recompute == Recompute::full && l.recompute_method == RecomputeMethod::block)
        share = replayed_share(l, split_stages(m, l), m.layers);
    const double per_mb = n_dense * (w.dense.fwd_s + w.dense.bwd_s + share * w.dense.recompute_s) +
                          n_moe * (w.moe.fwd_s + w.moe.bwd_s + share * w.moe.recompute_s) + w.head.fwd_s + w.head.bwd_s;
    // The slowest stage does at least the average share of the work, m times, one pass after another.
    // No fill or drain is counted: where the stages are uneven the simulated pipeline can start its
    // slowest rank at once and end with it (its floor, pipeline_floor_s, can be less than the closed
    // forms' bubble), so only m·per_mb/pp bounds every schedule's ceiling (search.cpp).
    const double mb = static_cast<double>(micro_batches(l)), pp = static_cast<double>(l.pp);
    // A hair below, so a layout whose evaluation rounds to its bound is never pruned by it.
    const double step_lb = (1.0 - 1e-9) * mb * per_mb / pp;
    if (step_lb <= 0) return 1e300;
    return static_cast<double>(global_batch(l)) * static_cast<double>(l.seq_len) / (step_lb * static_cast<double>(c.gpus));
}

}  // namespace shardplan
