// Discrete-event pipeline simulation (docs/model.md §7.1); the Chrome trace is io/trace.cpp's.
#include "shardplan/simulate.h"

#include <algorithm>
#include <deque>
#include <tuple>

namespace shardplan {

namespace {

struct Op {
    char kind;          // 'F', 'B' or 'W' ('W' from the list pops the rank's oldest held weight gradient)
    int64_t mb, chunk;
    bool split = false;  // B computes input gradients only; its W is held for later
    bool join = false;   // F that starts together with the next B (DualPipe's overlapped F&B pair)
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

// DualPipe (DeepSeek-V3 report §3.2.1; deepseek-ai/DualPipe): half of the micro-batches enter at rank 0,
// half at rank pp − 1. Rank r runs direction 0 at position r and direction 1 at position pp − 1 − r (its
// chunks 0 and 1). Ranks r and pp − 1 − r mirror each other: "phase 0" is the direction that enters on
// their side. The order has eight parts, with h = min(r, pp − 1 − r), d = pp/2 and n = m/2 micro-batches
// per direction: 2(d−h−1) F0 · (h+1) F0 F1 · (d−h−1) B1 W F1 · (n−pp+h+1) F0&B1 F1&B0 · (d−h−1) B1 F1&B0 ·
// (h+1) B1 B0 (the second half input-gradient only) · (d−h−1) W B0 (input-gradient only) · (h+1) W.
std::vector<Op> dualpipe_ops(int64_t pp, int64_t m, int64_t r) {
    const int64_t d = pp / 2, h = std::min(r, pp - 1 - r), n = m / 2;
    const bool middle = h == d - 1;
    auto chunk = [&](int ph) -> int64_t { return r < d ? ph : 1 - ph; };
    int64_t fc[2] = {0, 0}, bc[2] = {0, 0};
    std::vector<Op> ops;
    auto F = [&](int ph, bool join = false) { ops.push_back({'F', fc[ph]++, chunk(ph), false, join}); };
    auto B = [&](int ph, bool zb = false) { ops.push_back({'B', bc[ph]++, chunk(ph), zb, false}); };
    auto W = [&] { ops.push_back({'W', -1, -1}); };
    for (int64_t i = 0; i < 2 * (d - h - 1); ++i) F(0);
    for (int64_t i = 0; i <= h; ++i) F(0), F(1);
    for (int64_t i = 0; i < d - h - 1; ++i) B(1, true), W(), F(1);
    for (int64_t i = 0; i < n - pp + h + 1; ++i) {
        F(0, !(i == 0 && middle));  // the middle ranks run their first pair one after the other
        B(1);
        F(1, true), B(0);
    }
    for (int64_t i = 0; i < d - h - 1; ++i) B(1), F(1, true), B(0);
    bool zb = false;
    for (int64_t i = 0; i <= h; ++i) {
        if (i == (h + 1) / 2 && h % 2 == 1) zb = true;
        B(1, zb);
        if (i == (h + 1) / 2 && h % 2 == 0) zb = true;
        B(0, zb);
    }
    for (int64_t i = 0; i < d - h - 1; ++i) W(), B(0, true);
    for (int64_t i = 0; i <= h; ++i) W();
    return ops;
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
            const bool split = s.schedule == Schedule::zb;
            const int64_t warm = std::min(pp - r - 1, m);
            for (int64_t i = 0; i < warm; ++i) ops.push_back({'F', i, 0});
            for (int64_t i = 0; i + warm < m; ++i) {
                ops.push_back({'F', warm + i, 0});
                ops.push_back({'B', i, 0, split});
            }
            for (int64_t i = std::max<int64_t>(0, m - warm); i < m; ++i) ops.push_back({'B', i, 0, split});
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
        case Schedule::dualpipe: ops = dualpipe_ops(pp, m, r); break;
    }
    return ops;
}

// Where a rank's chunk sits: on which line (the pipeline a micro-batch runs along; DualPipe has one per
// direction) and at which position of it.
struct Geometry {
    int64_t pp, chunks, lines, length, per_line;
    Geometry(const PipelineSpec& s)
        : pp(s.pp), chunks(chunks_per_rank(s)), lines(s.schedule == Schedule::dualpipe ? 2 : 1),
          length(s.schedule == Schedule::dualpipe ? s.pp : s.pp * chunks),
          per_line(s.schedule == Schedule::dualpipe ? s.micro_batches / 2 : s.micro_batches) {}
    int64_t line(int64_t chunk) const { return lines == 2 ? chunk : 0; }
    int64_t position(int64_t rank, int64_t chunk) const {
        if (lines == 2) return chunk == 0 ? rank : pp - 1 - rank;
        return chunk * pp + rank;
    }
    size_t at(int64_t line, int64_t pos, int64_t mb) const {
        return static_cast<size_t>((line * length + pos) * per_line + mb);
    }
};

/// One simulation: the ranks' pass lists, when each pass's inputs are ready, and the sweep that runs
/// every rank as far as its inputs allow.
class Simulation {
public:
    explicit Simulation(const PipelineSpec& s) : s_(s), g_(s), auto_w_(s.schedule == Schedule::zb) {
        const size_t pp = static_cast<size_t>(s.pp);
        for (int64_t r = 0; r < s.pp; ++r) chunk_.push_back(chunk_times(s, r));
        const size_t slots = static_cast<size_t>(g_.lines * g_.length * g_.per_line);
        f_end_.assign(slots, -1);
        b_end_.assign(slots, -1);
        lists_.resize(pp);
        last_f_.assign(pp, 0);
        for (int64_t r = 0; r < s.pp; ++r) {
            auto& l = lists_[static_cast<size_t>(r)];
            l = rank_ops(s, r);
            for (size_t q = 0; q < l.size(); ++q)
                if (l[q].kind == 'F') last_f_[static_cast<size_t>(r)] = q + 1;
            remaining_ += l.size();
        }
        next_.assign(pp, 0);
        free_.assign(pp, 0);
        alive_.assign(pp, 0);
        held_.resize(pp);
        res_.line_length = g_.length;
        res_.busy_s.assign(pp, 0);
        res_.peak_in_flight.assign(pp, 0);
        if (s.record_ops) res_.ops.reserve(remaining_ + remaining_ / 2);
    }

    /// Each rank runs its list in order, every pass as soon as the rank is free and its inputs are
    /// there. A rank goes as far as it can, then waits for inputs another rank has yet to compute; the
    /// sweep over the ranks repeats until all are done. Start times depend only on these dependencies,
    /// so the order of the sweep does not change them.
    SimResult run() {
        size_t done = 0;
        while (done < remaining_) {
            bool progress = false;
            for (int64_t r = 0; r < s_.pp; ++r) progress = advance(r, done) || progress;
            if (!progress) {
                res_.error = "the schedule deadlocks";
                return std::move(res_);
            }
        }
        std::sort(res_.ops.begin(), res_.ops.end(), [](const SimOp& a, const SimOp& b) {
            return a.start_s != b.start_s ? a.start_s < b.start_s : a.rank < b.rank;
        });
        return std::move(res_);
    }

private:
    /// When a pass's inputs are there: -1 while one of them is still to be computed.
    double inputs_ready(int64_t r, const Op& o) const {
        const int64_t line = g_.line(o.chunk), pos = g_.position(r, o.chunk);
        if (o.kind == 'F') {
            if (pos == 0) return 0;
            const double d = f_end_[g_.at(line, pos - 1, o.mb)];
            return d < 0 ? -1 : d + s_.p2p_s;
        }
        if (f_end_[g_.at(line, pos, o.mb)] < 0) return -1;
        if (pos == g_.length - 1) return 0;
        const double d = b_end_[g_.at(line, pos + 1, o.mb)];
        return d < 0 ? -1 : d + s_.p2p_s;
    }

    /// Whether a ZB-H1 rank runs one of its held weight-gradient passes now: before a forward that
    /// would keep more than pp micro-batches alive (1F1B's peak, on its first stage), so no rank holds
    /// more than that (later ranks, which 1F1B leaves below it, defer their W passes by up to r); in
    /// the drain (no forward left), when the rank would otherwise wait for gradients. -1: not known yet.
    int held_w_now(int64_t r) const {
        const size_t ri = static_cast<size_t>(r);
        const auto& l = lists_[ri];
        if (next_[ri] >= l.size()) return 1;
        if (l[next_[ri]].kind == 'F' && alive_[ri] >= std::min(s_.pp, s_.micro_batches)) return 1;
        if (next_[ri] < last_f_[ri]) return 0;
        const double in = inputs_ready(r, l[next_[ri]]);
        if (in < 0) return -1;  // decided once the gradient's arrival is known
        return in > free_[ri] ? 1 : 0;
    }

    /// Runs rank r's passes as far as their inputs allow; whether any ran.
    bool advance(int64_t r, size_t& done) {
        const size_t ri = static_cast<size_t>(r);
        const auto& l = lists_[ri];
        bool progress = false;
        while (true) {
            if (auto_w_ && !held_[ri].empty()) {
                const int w = held_w_now(r);
                if (w < 0) break;
                if (w == 1) {
                    execute(r, Op{'W', -1, -1}, free_[ri]);
                    progress = true;
                    continue;
                }
            }
            if (next_[ri] >= l.size()) break;
            const Op& o = l[next_[ri]];
            double start = free_[ri];
            if (o.kind == 'W') {
                if (held_[ri].empty()) break;  // nothing held: the order is wrong, reported as a deadlock
            } else {
                const double in = inputs_ready(r, o);
                if (in < 0) break;
                start = std::max(start, in);
                if (o.join && next_[ri] + 1 < l.size()) {
                    const double b = inputs_ready(r, l[next_[ri] + 1]);  // its own F is done before the pair
                    if (b < 0) break;
                    start = std::max(start, b);
                }
            }
            ++next_[ri];
            ++done;
            execute(r, o, start);
            progress = true;
        }
        return progress;
    }

    /// One pass on `rank` from `start`: its end, the activations it stores or frees, the rank's clock.
    /// Weight-gradient passes whose B has run wait in `held_`, oldest first; DualPipe's order says
    /// where each one runs, ZB-H1's is decided by held_w_now().
    void execute(int64_t rank, Op o, double start) {
        const size_t r = static_cast<size_t>(rank);
        if (o.kind == 'W') {
            std::tie(o.mb, o.chunk) = held_[r].front();
            held_[r].pop_front();
        }
        const int64_t line = g_.line(o.chunk), pos = g_.position(rank, o.chunk);
        const ChunkTimes& t = chunk_[r];
        const double dur = o.kind == 'F' ? t.f_s : (o.kind == 'W' ? t.w_s : t.b_s + (o.split ? 0.0 : t.w_s));
        const double end = start + dur;
        if (o.kind == 'F') {
            f_end_[g_.at(line, pos, o.mb)] = end;
            res_.peak_in_flight[r] = std::max(res_.peak_in_flight[r], ++alive_[r]);
        } else if (o.kind == 'B') {
            b_end_[g_.at(line, pos, o.mb)] = end;
            if (o.split) held_[r].emplace_back(o.mb, o.chunk);
            else --alive_[r];
        } else {
            --alive_[r];  // the weight gradient was the last use of the stored inputs
        }
        // Blocking sends: a pass that sends (a forward short of the line's end, a backward past its start)
        // frees its rank one send later.
        const bool sends = (o.kind == 'F' && pos < g_.length - 1) || (o.kind == 'B' && pos > 0);
        free_[r] = s_.blocking_sends && sends ? end + s_.p2p_s : end;
        res_.busy_s[r] += dur;
        // Micro-batches are numbered across DualPipe's two directions: direction 1's first is m/2.
        if (s_.record_ops) res_.ops.push_back({rank, o.chunk, o.mb + line * g_.per_line, o.kind, start, end, line, pos});
        res_.makespan_s = std::max(res_.makespan_s, end);
    }

    const PipelineSpec& s_;
    const Geometry g_;
    const bool auto_w_;  // ZB-H1 places the held W passes itself
    std::vector<ChunkTimes> chunk_;  // per rank
    std::vector<double> f_end_, b_end_;  // finish times by (line, position, micro-batch); -1 = not yet run
    std::vector<std::vector<Op>> lists_;
    std::vector<size_t> last_f_;  // one past the last forward of each list
    std::vector<size_t> next_;
    std::vector<double> free_;
    std::vector<int64_t> alive_;
    std::vector<std::deque<std::pair<int64_t, int64_t>>> held_;
    size_t remaining_ = 0;
    SimResult res_;
};

}  // namespace

SimResult simulate_pipeline(const PipelineSpec& s) {
    if (s.schedule == Schedule::dualpipe && (s.pp % 2 != 0 || s.micro_batches % 2 != 0 || s.micro_batches < 2 * s.pp)) {
        SimResult res;
        res.line_length = s.pp;
        res.error = "DualPipe needs an even pp and an even number of micro-batches, at least 2·pp";
        return res;
    }
    if (s.ranks.size() != static_cast<size_t>(s.pp)) {
        SimResult res;
        res.error = "the pipeline needs one stage's times per rank";
        return res;
    }
    return Simulation(s).run();
}

}  // namespace shardplan
