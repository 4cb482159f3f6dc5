/// A discrete-event simulation of one pipeline-parallel step: every rank runs its schedule's ordered
/// list of forward (F), backward (B, input gradients; the full backward where W is not split off) and
/// weight-gradient (W) passes, each starting when its rank is free and its inputs have arrived
/// (activations from the previous stage, gradients from the next, one point-to-point send later).
/// Schedules: GPipe, 1F1B, interleaved 1F1B (Megatron's order), ZB-H1 (W deferred into the drain) and
/// DualPipe (micro-batches from both ends, DeepSeek's order with overlapped F&B pairs).
/// It checks the closed forms of schedule.h and draws the timeline `shardplan trace` writes.
///
///   SimResult r = simulate_pipeline(spec);   // spec: schedule.h; r.makespan_s, r.peak_in_flight, r.ops
/// Evaluation reaches it through pipeline.h, which turns the result into a step's bubble and memory.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardplan/schedule.h"

namespace shardplan {

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

SimResult simulate_pipeline(const PipelineSpec& spec);

}  // namespace shardplan
