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
/// Interleaved ranks own vpp chunks; DualPipe ranks own stage i and stage pp−1−i. With
/// layout.stage_split = cost (nanotron, one chunk per rank), ranks take layers in order until their
/// compute cost, the LM head's V·h included, passes their share: early ranks hold more layers, and the
/// ranks after the one holding the head may hold none.
std::vector<Stage> split_stages(const ModelSpec& m, const Layout& l);
/// The same into `out`, reusing its storage (the search's hot loop).
void split_stages(const ModelSpec& m, const Layout& l, std::vector<Stage>& out);

/// Per-micro-batch times on one stage: forward, backward (incl. recompute), and its weight-gradient part.
struct StageTimes {
    double fwd_s = 0;
    double bwd_s = 0;
    double wgrad_s = 0;
    double recompute_s = 0;  // part of bwd_s: the recomputed forward (with its exposed collectives)
    double total() const { return fwd_s + bwd_s; }
    bool operator==(const StageTimes&) const = default;
};

/// A pipeline as its schedule sees it: what evaluation hands to the closed forms below and to the
/// simulation (simulate.h), and what a trace draws.
struct PipelineSpec {
    Schedule schedule = Schedule::one_f_one_b;
    int64_t pp = 1;
    int64_t vpp = 1;  // chunks per rank when interleaved (1 otherwise)
    int64_t micro_batches = 1;
    /// Per rank: one micro-batch through all of the rank's layers (DualPipe: through one of its two
    /// stages, as a micro-batch crosses only one of them). The rank's chunks share it evenly.
    std::vector<StageTimes> ranks;
    double p2p_s = 0;             // one boundary send, activations or gradients
    bool blocking_sends = false;  // a rank waits for each of its sends before its next pass (PipelineSends)
    bool record_ops = true;  // simulation: false keeps only the span, busy times and peaks
};

/// Chunks of the model on each rank: vpp when interleaved, 2 for DualPipe (one per direction), else 1.
int64_t chunks_per_rank(const PipelineSpec& s);

/// One chunk's passes of one micro-batch: forward, input gradient (with the recomputed forward, r_s,
/// at its start) and weight gradient. Schedules that do not split the backward run b_s + w_s as one.
struct ChunkTimes {
    double f_s = 0, b_s = 0, w_s = 0, r_s = 0;
};
ChunkTimes chunk_times(const PipelineSpec& s, int64_t rank);

/// Micro-batches of the stage's activations alive at the peak of `stage` (1F1B: min(pp − i, m)), in
/// units of the whole stage (all its chunks).
double in_flight_micro_batches(Schedule schedule, int64_t pp, int64_t vpp, int64_t stage, int64_t m);
double in_flight_micro_batches(const Layout& l, int64_t stage, int64_t m);

/// The rank that sets the steady state: the slowest per micro-batch, the first of equals.
int64_t slowest_rank(const PipelineSpec& s);

/// Idle time of the slowest rank: the pipeline fill and drain the schedule cannot hide (sends left out).
double bubble_time_s(const PipelineSpec& s);

/// The floor of a line of ranks, built rank by rank: rank r starts its m passes (busy_s = m·T_r) once
/// micro-batch 0's first chunk has crossed ranks 0…r−1 (each: a chunk forward and a send), and unless
/// weight gradients are deferred its last pass is a backward those ranks must still pass back (each: a
/// chunk backward and a send). Both sums run over the ranks before r, so `wait_s` is each rank's share
/// of the two and the span is at least the most any rank's fill + busy + drain comes to.
/// pipeline_floor_s() and the search's bound (tokens_per_s_per_gpu_bound) both build it, one from timed
/// ranks, one from compute alone.
struct PipelineFill {
    double before_s = 0;  // the fill and drain ranks 0…r−1 add to rank r's span
    double span_s = 0;    // max over ranks 0…r of before + busy
    void add_rank(double busy_s, double wait_s) {
        span_s = span_s > before_s + busy_s ? span_s : before_s + busy_s;
        before_s += wait_s;
    }
};

/// The least simulate_pipeline() can find for the bubble and the exposed sends together, each send
/// taking `p2p_s` (the spec's, or 0 for the bubble alone): PipelineFill's span over the spec's ranks,
/// less the slowest rank's m·T_max. Zero for DualPipe (two directions) and for pp 1.
double pipeline_floor_s(const PipelineSpec& s, double p2p_s);

/// What the boundary sends add to the step in closed form: the fill and drain ones, forward and
/// backward, per virtual stage boundary (the steady-state sends overlap compute); with blocking sends
/// also the busiest rank's own, 2·v a micro-batch (2·v − 1 at pp 2). The simulation, which validate and
/// the search's re-ranking use, also shows 1F1B's steady state waiting on each round trip.
double exposed_sends_s(const PipelineSpec& s);

}  // namespace shardplan
