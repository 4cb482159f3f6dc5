/// What the whole-step tests share: a plan of a preset model on a preset cluster resized to `gpus`, a
/// TP · PP · DP layout at micro-batch 1, one axis's communication term of a plan, and a layout as a
/// framework runs it.
///
///   const Plan p = plan_of("llama3-8b", "dgx-h100", 64, layout(1, 1, 64, 256));
///   const CommTerm* dp = find(p, Axis::dp);  // nullptr where the layout has no DP traffic
#pragma once
#include <cstdint>

#include "shardplan/export.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"

namespace shardplan::testing {

/// `l` as framework `f` runs it: named so, with that framework's defaults for this GPU, precision and model
/// (what the CLI, the API and the page plan an export as, where the plan names no framework). Settings a
/// test means to change come after.
inline Layout run_by(Framework f, const ModelSpec& m, const ClusterSpec& c, Layout l) {
    l.framework = framework_name(f);
    apply_framework_defaults(framework_defaults(l.framework, c.gpu.generation, l.precision, m.moe.has_value()), l);
    return l;
}

inline Plan plan_of(const char* model, const char* cluster, int64_t gpus, Layout l) {
    ClusterSpec c = preset_cluster(cluster);
    c.gpus = gpus;
    return evaluate(preset_model(model), c, l);
}

/// TP · PP · DP with `gbs` sequences of `seq` tokens, sequence parallelism where TP is.
inline Layout layout(int64_t tp, int64_t pp, int64_t dp, int64_t gbs, int64_t seq = 4096) {
    Layout l;
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.global_batch = gbs;
    l.seq_len = seq;
    l.sequence_parallel = tp > 1;
    return l;
}

inline const CommTerm* find(const Plan& p, Axis a) {
    for (const CommTerm& c : p.comm)
        if (c.axis == a) return &c;
    return nullptr;
}

}  // namespace shardplan::testing
