/// A discrete-event simulation of one pipeline-parallel step: every rank runs its schedule's ordered
/// list of forward (F), backward (B, input gradients; the full backward where W is not split off) and
/// weight-gradient (W) passes, each starting when its rank is free and its inputs have arrived
/// (activations from the previous stage, gradients from the next, one point-to-point send later).
/// Schedules: GPipe, 1F1B, interleaved 1F1B (Megatron's order), ZB-H1 (W deferred into the drain) and
/// DualPipe (micro-batches from both ends, DeepSeek's order with overlapped F&B pairs).
/// It checks the closed forms of schedule.h and draws the timeline `shardplan trace` writes.
///
///   PipelineSpec s = pipeline_spec(plan);   // plan.h: a plan's stages as simulator input
///   SimResult r = simulate_pipeline(s);   // r.makespan_s, r.peak_in_flight, r.ops
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardplan/enums.h"

namespace shardplan {

struct PipelineSpec {
    int64_t pp = 1, vpp = 1, micro_batches = 1;
    Schedule schedule = Schedule::one_f_one_b;
    /// Per rank and chunk (index rank·chunks_per_rank + chunk): forward, input-gradient and weight-gradient time of one
    /// micro-batch. Schedules that do not split the backward run B + W as one pass.
    std::vector<double> f_s, b_s, w_s;
    std::vector<double> r_s;  // the recomputed forward at the start of each B (part of b_s; may be empty)
    double p2p_s = 0;  // one boundary send, activations or gradients
    bool record_ops = true;  // false: only the span, busy times and peaks (SimResult::ops stays empty)
};

struct SimOp {
    int64_t rank = 0, chunk = 0, micro_batch = 0;
    char kind = 'F';  // 'F', 'B' or 'W'
    double start_s = 0, end_s = 0;
    int64_t line = 0;      // the pipeline the micro-batch runs along (DualPipe: its direction, 0 or 1)
    int64_t position = 0;  // virtual stage along that line: 0 takes the input, line_length − 1 the loss
};

struct SimResult {
    std::vector<SimOp> ops;
    int64_t line_length = 0;              // virtual stages a micro-batch crosses
    double makespan_s = 0;                // first forward to last backward pass, all ranks
    std::vector<double> busy_s;           // per rank: time spent in passes
    std::vector<int64_t> peak_in_flight;  // per rank: most micro-batch chunks whose activations are alive
    std::string error;                    // set when the schedule cannot run (it deadlocks)
};

/// Chunks of the model on each rank: vpp when interleaved, 2 for DualPipe (one per direction), else 1.
int64_t chunks_per_rank(const PipelineSpec& s);

SimResult simulate_pipeline(const PipelineSpec& spec);



}  // namespace shardplan
