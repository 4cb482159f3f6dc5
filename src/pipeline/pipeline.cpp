// The pipeline stage: closed forms or the simulation, one result (docs/model.md §7).
#include "shardplan/pipeline.h"

#include <algorithm>

#include <fmt/format.h>

namespace shardplan {

void closed_form_pipeline(const PipelineSpec& s, PipelineResult& r) {
    r.bubble_s = bubble_time_s(s);
    r.sends_exposed_s = exposed_sends_s(s);
    r.in_flight.resize(static_cast<size_t>(s.pp));
    for (int64_t i = 0; i < s.pp; ++i)
        r.in_flight[static_cast<size_t>(i)] = in_flight_micro_batches(s.schedule, s.pp, s.vpp, i, s.micro_batches);
    r.simulated = false;
    r.note.clear();
    r.passes = {};
}

PipelineResult closed_form_pipeline(const PipelineSpec& s) {
    PipelineResult r;
    closed_form_pipeline(s, r);
    return r;
}

namespace {

bool same_input(const PipelineSpec& a, const PipelineSpec& b) {
    return a.schedule == b.schedule && a.pp == b.pp && a.vpp == b.vpp && a.micro_batches == b.micro_batches &&
           a.p2p_s == b.p2p_s && a.blocking_sends == b.blocking_sends && a.ranks == b.ranks;
}

PipelineResult simulated_fresh(const PipelineSpec& s, int64_t max_passes);

}  // namespace

std::optional<PipelineResult> PipelineMemo::find(const PipelineSpec& s, int64_t max_passes) const {
    const std::lock_guard<std::mutex> hold(mutex_);
    for (const Entry& e : entries_)
        if (e.max_passes == max_passes && same_input(e.spec, s)) return e.result;
    return std::nullopt;
}

void PipelineMemo::keep(const PipelineSpec& s, int64_t max_passes, const PipelineResult& r) {
    const std::lock_guard<std::mutex> hold(mutex_);
    Entry e{s, max_passes, r};
    if (entries_.size() < kEntries) entries_.push_back(std::move(e));
    else entries_[next_++ % kEntries] = std::move(e);
}

PipelineResult simulated_pipeline(const PipelineSpec& s, int64_t max_passes, PipelineMemo* memo) {
    if (!memo || s.record_ops) return simulated_fresh(s, max_passes);
    if (std::optional<PipelineResult> known = memo->find(s, max_passes)) return *std::move(known);
    PipelineResult r = simulated_fresh(s, max_passes);
    memo->keep(s, max_passes, r);
    return r;
}

namespace {

PipelineResult simulated_fresh(const PipelineSpec& s, int64_t max_passes) {
    // In double: m can be near 2^63 (a global batch that large).
    if (double(s.micro_batches) * double(s.pp) * double(s.vpp) > double(max_passes)) {
        PipelineResult r = closed_form_pipeline(s);
        r.note = fmt::format("more than {} passes to simulate", max_passes);
        return r;
    }
    PipelineSpec no_sends = s;
    no_sends.p2p_s = 0;
    no_sends.record_ops = false;
    SimResult with = simulate_pipeline(s);
    const SimResult without = simulate_pipeline(no_sends);
    if (!with.error.empty() || !without.error.empty()) {
        PipelineResult r = closed_form_pipeline(s);
        r.note = !with.error.empty() ? with.error : without.error;
        r.passes = std::move(with);  // its error, for a trace that asked for the passes
        return r;
    }
    PipelineResult r;
    r.simulated = true;
    r.bubble_s = std::max(0.0, without.makespan_s - without.busy_s[static_cast<size_t>(slowest_rank(s))]);
    r.sends_exposed_s = std::max(0.0, with.makespan_s - without.makespan_s);
    const double chunks = static_cast<double>(chunks_per_rank(s));
    for (int64_t peak : with.peak_in_flight) r.in_flight.push_back(static_cast<double>(peak) / chunks);
    r.passes = std::move(with);
    return r;
}

}  // namespace

}  // namespace shardplan
