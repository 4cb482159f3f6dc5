// Discrete-event pipeline simulation (docs/model.md §7.1) and its Chrome trace.
#include "shardplan/simulate.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "shardplan/plan.h"

namespace shardplan {

namespace {

struct Op {
    char kind;
    int64_t mb, chunk;
};

// Forward order of (micro-batch, chunk) pairs on one rank under interleaving (Megatron): groups of pp
// micro-batches run chunk by chunk; the backward order takes the chunks in reverse.
std::vector<std::pair<int64_t, int64_t>> interleaved_order(int64_t pp, int64_t v, int64_t m, bool backward) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t g = 0; g < m; g += pp)
        for (int64_t c = 0; c < v; ++c)
            for (int64_t mb = g; mb < std::min(m, g + pp); ++mb) out.emplace_back(mb, backward ? v - 1 - c : c);
    return out;
}

std::vector<Op> rank_ops(const PipelineSpec& s, int64_t r) {
    const int64_t pp = s.pp, m = s.micro_batches;
    std::vector<Op> ops;
    switch (s.schedule) {
        case Schedule::gpipe:
            for (int64_t i = 0; i < m; ++i) ops.push_back({'F', i, 0});
            for (int64_t i = 0; i < m; ++i) ops.push_back({'B', i, 0});
            break;
        case Schedule::one_f_one_b:
        case Schedule::zb: {
            // 1F1B: pp − r − 1 warm-up forwards, then one forward and one backward, then the drain.
            // For ZB-H1 the list holds F and B (input gradients) only: the weight-gradient passes are
            // placed by simulate_pipeline() into the rank's idle time (Qi et al. 2023).
            const int64_t warm = std::min(pp - r - 1, m);
            for (int64_t i = 0; i < warm; ++i) ops.push_back({'F', i, 0});
            for (int64_t i = 0; i + warm < m; ++i) {
                ops.push_back({'F', warm + i, 0});
                ops.push_back({'B', i, 0});
            }
            for (int64_t i = std::max<int64_t>(0, m - warm); i < m; ++i) ops.push_back({'B', i, 0});
            break;
        }
        case Schedule::interleaved: {
            const int64_t v = s.vpp;
            const auto fwd = interleaved_order(pp, v, m, false), bwd = interleaved_order(pp, v, m, true);
            const int64_t total = m * v;
            const int64_t warm = std::min((pp - r - 1) * 2 + (v - 1) * pp, total);
            size_t fi = 0, bi = 0;
            for (int64_t i = 0; i < warm; ++i, ++fi) ops.push_back({'F', fwd[fi].first, fwd[fi].second});
            while (fi < fwd.size()) {
                ops.push_back({'F', fwd[fi].first, fwd[fi].second});
                ++fi;
                ops.push_back({'B', bwd[bi].first, bwd[bi].second});
                ++bi;
            }
            for (; bi < bwd.size(); ++bi) ops.push_back({'B', bwd[bi].first, bwd[bi].second});
            break;
        }
        case Schedule::dualpipe: break;
    }
    return ops;
}

}  // namespace

bool simulated(Schedule s) { return s != Schedule::dualpipe; }

SimResult simulate_pipeline(const PipelineSpec& s) {
    SimResult res;
    const int64_t pp = s.pp, v = s.schedule == Schedule::interleaved ? s.vpp : 1, m = s.micro_batches;
    if (!simulated(s.schedule)) {
        res.error = "the DualPipe timeline is not simulated yet (its bubble is the closed form of docs/model.md §7)";
        return res;
    }
    const bool split = s.schedule == Schedule::zb;
    const int64_t V = pp * v;  // virtual stages: chunk c of rank r is stage c·pp + r
    auto idx = [&](int64_t r, int64_t c) { return static_cast<size_t>(r * s.vpp + c); };
    // Finish times of each pass, by (virtual stage, micro-batch); -1 = not yet run.
    std::vector<double> f_end(static_cast<size_t>(V * m), -1), b_end(static_cast<size_t>(V * m), -1);
    auto at = [&](int64_t vs, int64_t mb) { return static_cast<size_t>(vs * m + mb); };
    std::vector<std::vector<Op>> lists(static_cast<size_t>(pp));
    for (int64_t r = 0; r < pp; ++r) lists[static_cast<size_t>(r)] = rank_ops(s, r);
    std::vector<size_t> next(static_cast<size_t>(pp), 0);
    std::vector<double> free(static_cast<size_t>(pp), 0);
    std::vector<int64_t> alive(static_cast<size_t>(pp), 0);
    res.busy_s.assign(static_cast<size_t>(pp), 0);
    res.peak_in_flight.assign(static_cast<size_t>(pp), 0);
    size_t remaining = 0;
    for (const auto& l : lists) remaining += l.size();
    // ZB-H1: weight-gradient passes wait in a per-rank queue and run when more than pp − 1 are held (the
    // schedule keeps 1F1B's peak activation memory) or, in the drain, when the rank would otherwise idle.
    std::vector<std::vector<int64_t>> held(static_cast<size_t>(pp));
    size_t held_total = 0;
    while (remaining > 0 || held_total > 0) {
        // Of the ranks that can do something, run the one that can start first.
        int64_t best = -1;
        double best_start = 0;
        bool best_is_w = false;
        for (int64_t r = 0; r < pp; ++r) {
            const size_t ri = static_cast<size_t>(r);
            const auto& l = lists[ri];
            double ready = -1;
            if (next[ri] < l.size()) {
                const Op& o = l[next[ri]];
                const int64_t vs = o.chunk * pp + r;
                ready = free[ri];
                if (o.kind == 'F' && vs > 0) {
                    const double d = f_end[at(vs - 1, o.mb)];
                    ready = d < 0 ? -1 : std::max(ready, d + s.p2p_s);
                }
                if (o.kind == 'B' && ready >= 0) {
                    if (f_end[at(vs, o.mb)] < 0) ready = -1;
                    else if (vs < V - 1) {
                        const double d = b_end[at(vs + 1, o.mb)];
                        ready = d < 0 ? -1 : std::max(ready, d + s.p2p_s);
                    }
                }
            }
            double start = ready;
            bool is_w = false;
            if (split && !held[ri].empty()) {
                // In the steady state a W runs only when more than pp − 1 are held, so no rank keeps more
                // activations than 1F1B's first stage (pp); the held ones fill the drain, where the rank
                // waits for gradients (no forward is left to do).
                bool forwards_left = false;
                for (size_t q = next[ri]; q < l.size() && !forwards_left; ++q) forwards_left = l[q].kind == 'F';
                const bool over = static_cast<int64_t>(held[ri].size()) > pp - 1;
                const bool waits = ready < 0 || ready > free[ri];
                if (over || (!forwards_left && waits) || next[ri] >= l.size()) {
                    start = free[ri];
                    is_w = true;
                }
            }
            if (start < 0) continue;
            if (best < 0 || start < best_start) {
                best = r;
                best_start = start;
                best_is_w = is_w;
            }
        }
        if (best < 0) {
            res.error = "the schedule deadlocks";
            return res;
        }
        const size_t r = static_cast<size_t>(best);
        Op o{'W', 0, 0};
        if (best_is_w) {
            o.mb = held[r].front();
            held[r].erase(held[r].begin());
            --held_total;
        } else {
            o = lists[r][next[r]++];
            --remaining;
        }
        const int64_t vs = o.chunk * pp + best;
        const size_t k = idx(best, o.chunk);
        const double dur = o.kind == 'F' ? s.f_s[k] : (o.kind == 'W' ? s.w_s[k] : s.b_s[k] + (split ? 0.0 : s.w_s[k]));
        const double end = best_start + dur;
        if (o.kind == 'F') {
            f_end[at(vs, o.mb)] = end;
            res.peak_in_flight[r] = std::max(res.peak_in_flight[r], ++alive[r]);
        } else if (o.kind == 'B') {
            b_end[at(vs, o.mb)] = end;
            if (split) {
                held[r].push_back(o.mb);
                ++held_total;
            } else {
                --alive[r];
            }
        } else {
            --alive[r];  // the weight gradient was the last use of the stored inputs
        }
        free[r] = end;
        res.busy_s[r] += dur;
        res.ops.push_back({best, o.chunk, o.mb, o.kind, best_start, end});
        res.makespan_s = std::max(res.makespan_s, end);
    }
    return res;
}

PipelineSpec pipeline_spec(const Plan& p) {
    PipelineSpec s;
    const Layout& l = p.layout;
    s.pp = l.pp;
    s.vpp = l.schedule == Schedule::interleaved ? l.vpp : 1;
    s.micro_batches = p.micro_batches;
    s.schedule = l.schedule;
    for (const StageReport& st : p.stages) {
        const double v = static_cast<double>(s.vpp);
        for (int64_t c = 0; c < s.vpp; ++c) {
            s.f_s.push_back(st.times.fwd_s / v);
            s.w_s.push_back(st.times.wgrad_s / v);
            s.b_s.push_back((st.times.bwd_s - st.times.wgrad_s) / v);
        }
    }
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::pp && c.calls_per_step > 0) s.p2p_s = c.time_s / static_cast<double>(c.calls_per_step);
    return s;
}

std::optional<LayoutProblem> trace_refusal(const Plan& p, int64_t max_passes) {
    if (!simulated(p.layout.schedule))
        return LayoutProblem{"schedule_not_simulated", "layout.schedule",
                             "gpipe, 1f1b, interleaved or zb for a timeline; the DualPipe timeline is not simulated yet "
                             "(its bubble is the closed form of docs/model.md §7)"};
    const int64_t passes = p.micro_batches * p.layout.pp * p.layout.vpp;
    if (passes > max_passes)
        return LayoutProblem{"trace_too_large", "layout.global_batch",
                             fmt::format("a timeline of at most {} passes (micro-batches × pp × vpp), got {}", max_passes,
                                         passes)};
    return std::nullopt;
}

double closed_form_pipeline_s(const Plan& p) {
    double dp_exposed_s = 0;
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::dp || c.axis == Axis::edp) dp_exposed_s += c.exposed_s;
    return p.time.step_s - p.time.optimizer_s - dp_exposed_s;
}

nlohmann::json trace_json(const Plan& p, const SimResult& r, const PipelineSpec& s) {
    using nlohmann::json;
    json events = json::array();
    const double us = 1e6;
    enum { kCompute = 0, kSend = 1, kLayerComm = 2, kDp = 3 };
    for (int64_t rank = 0; rank < s.pp; ++rank) {
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", rank}, {"tid", 0},
                          {"args", {{"name", fmt::format("pipeline rank {}", rank)}}}});
        events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", rank}, {"tid", 0}, {"args", {{"sort_index", rank}}}});
        for (auto [tid, name] : {std::pair{kCompute, "compute"}, {kSend, "pp send"}, {kLayerComm, "tp/cp/ep collectives"},
                                 {kDp, "dp reduction"}})
            events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", rank}, {"tid", tid}, {"args", {{"name", name}}}});
    }
    // Per-layer collectives that stay exposed are inside each pass's time; show them on their own thread.
    double layer_comm_per_pass = 0;
    std::string layer_comm_name;
    double layer_comm_bytes = 0;
    for (const CommTerm& c : p.comm)
        if ((c.axis == Axis::tp || c.axis == Axis::cp || c.axis == Axis::ep) && p.micro_batches > 0 && c.exposed_s > 0) {
            layer_comm_per_pass += c.exposed_s / static_cast<double>(2 * p.micro_batches * s.vpp);
            layer_comm_name += (layer_comm_name.empty() ? "" : " + ") + std::string(enum_name(c.axis)) + " " + c.collective;
            layer_comm_bytes += c.bytes_per_step / static_cast<double>(2 * p.micro_batches * s.vpp);
        }
    double pp_bytes = 0;
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::pp && c.calls_per_step > 0) pp_bytes = c.bytes_per_step / static_cast<double>(c.calls_per_step);
    std::vector<double> last_backward(static_cast<size_t>(s.pp), 0), end_of_passes(static_cast<size_t>(s.pp), 0);
    const int64_t V = s.pp * s.vpp;
    for (const SimOp& o : r.ops) {
        const int64_t vs = o.chunk * s.pp + o.rank;
        events.push_back({{"ph", "X"}, {"name", fmt::format("{}{}", o.kind, o.micro_batch)}, {"pid", o.rank},
                          {"tid", kCompute}, {"ts", o.start_s * us}, {"dur", (o.end_s - o.start_s) * us},
                          {"args", {{"micro_batch", o.micro_batch}, {"chunk", o.chunk}, {"virtual_stage", vs}}}});
        if (o.kind != 'W' && layer_comm_per_pass > 0)
            events.push_back({{"ph", "X"}, {"name", layer_comm_name}, {"pid", o.rank}, {"tid", kLayerComm},
                              {"ts", o.start_s * us}, {"dur", std::min(layer_comm_per_pass, o.end_s - o.start_s) * us},
                              {"args", {{"bytes", layer_comm_bytes}, {"exposed", true}}}});
        const bool sends = (o.kind == 'F' && vs < V - 1) || (o.kind == 'B' && vs > 0);
        if (sends && s.p2p_s > 0)
            events.push_back({{"ph", "X"}, {"name", "send"}, {"pid", o.rank}, {"tid", kSend}, {"ts", o.end_s * us},
                              {"dur", s.p2p_s * us},
                              {"args", {{"bytes", pp_bytes}, {"to_virtual_stage", o.kind == 'F' ? vs + 1 : vs - 1},
                                        {"what", o.kind == 'F' ? "activations" : "gradients"}}}});
        auto& lb = last_backward[static_cast<size_t>(o.rank)];
        if (o.kind != 'F') lb = std::max(lb, o.end_s);
        end_of_passes[static_cast<size_t>(o.rank)] = std::max(end_of_passes[static_cast<size_t>(o.rank)], o.end_s);
    }
    // DP reduction of each rank overlaps the tail of its last backward, then the optimizer step.
    double dp_time = 0, dp_exposed = 0, dp_bytes = 0;
    for (const CommTerm& c : p.comm)
        if (c.axis == Axis::dp || c.axis == Axis::edp) {
            dp_time += c.time_s;
            dp_exposed += c.exposed_s;
            dp_bytes += c.bytes_per_step;
        }
    for (int64_t rank = 0; rank < s.pp; ++rank) {
        const double end = end_of_passes[static_cast<size_t>(rank)];
        double opt_start = end;
        if (dp_time > 0) {
            const double start = std::max(0.0, end - (dp_time - dp_exposed));
            events.push_back({{"ph", "X"}, {"name", "dp gradient reduction"}, {"pid", rank}, {"tid", kDp},
                              {"ts", start * us}, {"dur", dp_time * us}, {"args", {{"bytes", dp_bytes}}}});
            opt_start = start + dp_time;
        }
        events.push_back({{"ph", "X"}, {"name", "optimizer"}, {"pid", rank}, {"tid", kCompute},
                          {"ts", std::max(opt_start, end) * us}, {"dur", p.time.optimizer_s * us}, {"args", json::object()}});
    }
    return {{"traceEvents", events}, {"displayTimeUnit", "ms"},
            {"otherData", {{"layout", to_string(p.layout)}, {"schedule", enum_name(p.layout.schedule)},
                           {"simulated_makespan_s", r.makespan_s}, {"micro_batches", p.micro_batches}}}};
}

}  // namespace shardplan
