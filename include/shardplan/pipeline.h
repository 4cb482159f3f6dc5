/// The pipeline stage of an evaluation: a PipelineSpec (schedule.h: each rank's per-micro-batch
/// times, the boundary send) in, one PipelineResult out, whether by the closed forms (docs/model.md §7)
/// or by simulating the step pass by pass (§7.1). Evaluation reads both the same way: the bubble, what
/// the sends add, and how many micro-batches of activations each rank holds at its peak.
///
///   PipelineResult r = simulated_pipeline(spec, 1'000'000);   // r.bubble_s, r.in_flight[rank]
///   if (!r.simulated) r.note;                                   // why the closed forms stand in
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "shardplan/schedule.h"
#include "shardplan/simulate.h"

namespace shardplan {

struct PipelineResult {
    double bubble_s = 0;             // the slowest rank's idle time within the step's passes, sends left out
    double sends_exposed_s = 0;      // what the boundary sends add to the step
    std::vector<double> in_flight;   // per rank: micro-batches of its activations alive at its peak
    bool simulated = false;
    std::string note;                // why a simulation that was asked for did not run (a finding)
    SimResult passes;                // the simulation, every pass when spec.record_ops (a trace)
};

/// The closed forms of schedule.h.
PipelineResult closed_form_pipeline(const PipelineSpec& s);
/// The same into `out`, reusing its storage (the search's inner loop).
void closed_form_pipeline(const PipelineSpec& s, PipelineResult& out);

/// The step simulated: the bubble is the span without sends less the slowest rank's busy time, the
/// sends add the difference of the spans with and without them, each rank holds the most chunks it
/// had alive (in whole-rank units). A step of more than `max_passes` passes (micro-batches × pp × vpp)
/// or one the schedule cannot run gets the closed forms, with the reason in `note`.
/// With a memo, a spec it already holds (the same schedule, ranks, micro-batches and sends) is not
/// simulated again: same input, same result, only time is saved.
class PipelineMemo;
PipelineResult simulated_pipeline(const PipelineSpec& s, int64_t max_passes, PipelineMemo* memo = nullptr);

/// The last simulations run without recording passes, by their whole input; any thread may use it. A
/// search's re-timing holds one: the layouts of its pool that differ only where the pipeline cannot
/// see (the ZeRO stage, often the rank order) hand the simulation the same input.
class PipelineMemo {
public:
    std::optional<PipelineResult> find(const PipelineSpec& s, int64_t max_passes) const;
    void keep(const PipelineSpec& s, int64_t max_passes, const PipelineResult& r);

private:
    struct Entry {
        PipelineSpec spec;
        int64_t max_passes = 0;
        PipelineResult result;
    };
    static constexpr size_t kEntries = 32;
    mutable std::mutex mutex_;
    std::vector<Entry> entries_;
    size_t next_ = 0;  // the entry replaced next once all are used
};

}  // namespace shardplan
