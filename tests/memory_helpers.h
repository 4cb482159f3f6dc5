/// What the memory tests share: an H100 server cluster resized to `gpus`, and the whole model as one
/// pipeline stage (first and last, every layer, its MoE layers counted).
///
///   const MemoryBreakdown b = stage_memory(m, cluster(8), l, whole(m), 1);
#pragma once
#include <cstdint>

#include "shardplan/memory.h"
#include "shardplan/model.h"
#include "shardplan/presets.h"

namespace shardplan::testing {

inline ClusterSpec cluster(int64_t gpus) {
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = gpus;
    return c;
}

inline Stage whole(const ModelSpec& m) {
    Stage s;
    s.layers = m.layers;
    s.moe_layers = moe_layers_in(m, 0, m.layers);
    s.first = s.last = true;
    return s;
}

}  // namespace shardplan::testing
