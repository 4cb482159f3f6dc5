/// Pipeline schedules in closed form (docs/model.md §7): how layers are split into stages, how many
/// micro-batches of activations each stage keeps alive at its peak, and the bubble each schedule leaves.
///   gpipe        all forwards, then all backwards; keeps m micro-batches (Huang et al. 2019)
///   1f1b         one forward, one backward; stage i keeps pp − i (Narayanan et al. 2021)
///   interleaved  1F1B over vpp chunks per rank; bubble ÷ vpp, memory × (1 + (pp−1)/(pp·vpp))
///   zb           ZB-H1: backward split into input and weight gradients; bubble (pp−1)(F+B−2W) (Qi et al. 2023)
///   dualpipe     DeepSeek-V3: two directions, each rank holds 2 stages; bubble (pp/2−1)(F&B+B−3W)
///
///   auto stages = split_stages(model, layout);     // 126 layers on PP16: 7, 8 × 14, 7
#pragma once
#include <cstdint>
#include <vector>

#include "shardplan/enums.h"
#include "shardplan/memory.h"

namespace shardplan {

struct ModelSpec;
struct Layout;

/// Layers per pipeline rank. Uneven counts fill the middle stages to ceil(L/pp) and share the rest
/// between the two end stages, which also carry the embedding and the LM head (Llama 3 405B:
/// 126 = 7 + 14·8 + 7; DeepSeek-V3 on 16: 61 = 3 + 14·4 + 2).
/// Interleaved ranks own vpp chunks; DualPipe ranks own stage i and stage pp−1−i.
std::vector<Stage> split_stages(const ModelSpec& m, const Layout& l);
/// The same into `out`, reusing its storage (the search's hot loop).
void split_stages(const ModelSpec& m, const Layout& l, std::vector<Stage>& out);

/// Micro-batches of the stage's activations alive at the peak of `stage` (1F1B: min(pp − i, m)).
double in_flight_micro_batches(const Layout& l, int64_t stage, int64_t m);

/// Per-micro-batch times on one stage: forward, backward (incl. recompute), and its weight-gradient part.
struct StageTimes {
    double fwd_s = 0;
    double bwd_s = 0;
    double wgrad_s = 0;
    double recompute_s = 0;  // part of bwd_s: the recomputed forward (with its exposed collectives)
    double total() const { return fwd_s + bwd_s; }
};

/// Idle time of the critical rank: the pipeline fill and drain the schedule cannot hide.
/// `stages` holds each rank's per-micro-batch times; the slowest sets the steady state.
double bubble_time_s(const Layout& l, const std::vector<StageTimes>& stages);
/// The same from the sum of all stages' F + B and the slowest stage's times (the first slowest).
double bubble_time_s(const Layout& l, double sum_of_stage_totals, const StageTimes& slowest);

}  // namespace shardplan
