// The per-layer work a search shares between layouts, and the bound on throughput it gives
// (docs/search.md): what the search reads before it decides whether a layout is worth timing.
#include "shardplan/plan.h"

#include <algorithm>
#include <vector>

#include "shardplan/compute.h"
#include "shardplan/memory.h"
#include "shardplan/schedule.h"

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

double tokens_per_s_per_gpu_bound(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const StepWork& w,
                                  const std::vector<Stage>& stages) {
    // Full recomputation's block method replays only some layers: the model-wide share of them.
    double share = 1.0;
    if (l.recompute == Recompute::full && l.recompute_method == RecomputeMethod::block)
        share = replayed_share(l, stages, m.layers);
    const double dense_f = w.dense.fwd_s, dense_b = w.dense.bwd_s + share * w.dense.recompute_s;
    const double moe_f = w.moe.fwd_s, moe_b = w.moe.bwd_s + share * w.moe.recompute_s;
    // Each rank's compute per micro-batch as its stage's layers (and the LM head on the last) give it,
    // no communication counted, filled as the simulated pipeline's floor fills its ranks
    // (PipelineFill, pipeline_floor_s): so it bounds the ceiling the search ranks by as well as the
    // closed forms. DualPipe's ranks each hold a chunk from each end (their sum counts every layer
    // twice) and it hides their fill: m passes of half the mean rank.
    const double mb = static_cast<double>(micro_batches(l));
    const double v = l.schedule == Schedule::interleaved ? static_cast<double>(std::max<int64_t>(1, l.vpp)) : 1.0;
    PipelineFill fill;
    double sum = 0;
    for (const Stage& st : stages) {
        const double dense = static_cast<double>(st.layers - st.moe_layers), moe = static_cast<double>(st.moe_layers);
        const double f = dense * dense_f + moe * moe_f + (st.last ? w.head.fwd_s : 0.0);
        const double b = dense * dense_b + moe * moe_b + (st.last ? w.head.bwd_s : 0.0);
        sum += f + b;
        fill.add_rank(mb * (f + b), f / v + (l.schedule == Schedule::zb ? 0.0 : b / v));
    }
    const double span = l.schedule == Schedule::dualpipe ? mb * sum / (2.0 * static_cast<double>(stages.size()))
                                                         : fill.span_s;
    // A hair below, so a layout whose evaluation rounds to its bound is never pruned by it.
    const double step_lb = (1.0 - 1e-9) * span;
    if (step_lb <= 0) return 1e300;
    return static_cast<double>(global_batch(l)) * static_cast<double>(l.seq_len) / (step_lb * static_cast<double>(c.gpus));
}

double tokens_per_s_per_gpu_bound(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const StepWork& w) {
    return tokens_per_s_per_gpu_bound(m, c, l, w, split_stages(m, l));
}

}  // namespace shardplan
