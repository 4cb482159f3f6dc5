// Exhaustive layout search (docs/search.md).
#include "shardplan/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "shardplan/schedule.h"

namespace shardplan {

std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> lo, hi;
    for (int64_t d = 1; d * d <= n; ++d) {
        if (n % d) continue;
        lo.push_back(d);
        if (d != n / d) hi.push_back(n / d);
    }
    lo.insert(lo.end(), hi.rbegin(), hi.rend());
    return lo;
}

namespace {

// The parallel degrees of one candidate family; everything else is varied inside it.
struct Shape {
    int64_t tp, cp, pp, dp, ep, etp;
};

// A feasible layout as the search ranks it: cheap to copy, totally ordered.
struct Scored {
    double tokens_per_s_per_gpu;
    // Plan::needed_bytes, what the allocations and runtime need: the device figure less the allocator's
    // cache, which fills what they leave, so tight layouts would all read usable HBM.
    double needed_bytes;
    Layout layout;
    // The most the simulated pipeline can give: the closed-form step less what a simulation could take
    // off its bubble and exposed sends (TimeBreakdown::pipeline_slack_s, down to pipeline_floor_s()); the
    // rest of the step is the same.
    double ceiling = 0;
};

double ceiling_of(const Plan& p, const Layout& l, const ClusterSpec& c) {
    const double rest_s = p.time.step_s - p.time.pipeline_slack_s;
    if (rest_s <= 0) return 1e300;
    // A hair above, so rounding never drops a layout the simulation would keep.
    return (1.0 + 1e-9) * static_cast<double>(global_batch(l)) * static_cast<double>(l.seq_len) /
           (rest_s * static_cast<double>(c.gpus));
}

int64_t rank_of(Schedule s) { return static_cast<int64_t>(s); }

std::array<int64_t, 13> key(const Layout& l) {
    return {l.tp, l.cp, l.pp, l.dp, l.ep, l.etp, l.vpp, l.micro_batch, l.zero, static_cast<int64_t>(l.recompute),
            l.sequence_parallel ? 1 : 0, rank_of(l.schedule), static_cast<int64_t>(l.order[0]) * 10 + static_cast<int64_t>(l.order[3])};
}

// The key but the rank order: layouts of one such key that plan exactly alike are one answer.
std::array<int64_t, 12> key_but_order(const Layout& l) {
    const std::array<int64_t, 13> k = key(l);
    std::array<int64_t, 12> out{};
    std::copy_n(k.begin(), out.size(), out.begin());
    return out;
}

// Faster first; then less memory needed; then the smaller layout tuple, so the order is total.
bool better(const Scored& a, const Scored& b) {
    if (a.tokens_per_s_per_gpu != b.tokens_per_s_per_gpu) return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
    if (a.needed_bytes != b.needed_bytes) return a.needed_bytes < b.needed_bytes;
    return key(a.layout) < key(b.layout);
}

struct Partial {
    int64_t evaluated = 0, feasible = 0;
    std::map<std::string, int64_t> rejected;
    int64_t does_not_fit = 0;  // kept apart from `rejected`: the commonest reason, counted in the inner loop
    double shortest_miss = -1;
    std::vector<Scored> top;     // the pool: sorted by higher_ceiling(), at most `top` long
    std::vector<Scored> pareto;  // non-dominated (memory needed ↓, throughput ↑)
};

// Higher ceiling first, then better(): the order the pool is kept and re-timed in.
bool higher_ceiling(const Scored& a, const Scored& b) {
    if (a.ceiling != b.ceiling) return a.ceiling > b.ceiling;
    return better(a, b);
}

// The pool: the k layouts with the highest ceilings. A layout left out has a ceiling no higher than the
// pool's last, so once the re-timed answers beat that, nothing left out could have entered them.
void keep_top(std::vector<Scored>& top, const Scored& s, size_t k) {
    if (top.size() == k && !higher_ceiling(s, top.back())) return;
    top.insert(std::upper_bound(top.begin(), top.end(), s, higher_ceiling), s);
    if (top.size() > k) top.pop_back();
}

void keep_pareto(std::vector<Scored>& front, const Scored& s) {
    for (const Scored& f : front)
        if (f.needed_bytes <= s.needed_bytes && f.tokens_per_s_per_gpu >= s.tokens_per_s_per_gpu &&
            (f.needed_bytes < s.needed_bytes || f.tokens_per_s_per_gpu > s.tokens_per_s_per_gpu || !better(s, f)))
            return;  // dominated (or an equal point that ranks first)
    std::erase_if(front, [&](const Scored& f) {
        return s.needed_bytes <= f.needed_bytes && s.tokens_per_s_per_gpu >= f.tokens_per_s_per_gpu;
    });
    front.push_back(s);
}

template <typename T>
std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all) {
    if (pin) return {*pin};
    return all;
}

std::vector<Shape> shapes(const ModelSpec& m, const ClusterSpec& c, const SearchSpace& sp) {
    std::vector<Shape> out;
    const int64_t G = c.gpus;
    auto within = [](int64_t v, int64_t max) { return max <= 0 || v <= max; };
    for (int64_t tp : pinned_or(sp.tp, divisors(G))) {
        if (G % tp || !within(tp, sp.max_tp) || m.heads % tp) continue;  // TP must split the heads
        for (int64_t cp : pinned_or(sp.cp, divisors(G / tp))) {
            if ((G / tp) % cp || !within(cp, sp.max_cp)) continue;
            for (int64_t pp : pinned_or(sp.pp, divisors(G / (tp * cp)))) {
                if ((G / (tp * cp)) % pp || !within(pp, sp.max_pp) || pp > m.layers + 2) continue;
                const int64_t dp = G / (tp * cp * pp);
                if (sp.dp && *sp.dp != dp) continue;
                if (!m.moe) {
                    out.push_back({tp, cp, pp, dp, 1, 0});
                    continue;
                }
                const int64_t inner = tp * cp * dp;
                std::vector<int64_t> etps = sp.etp ? std::vector<int64_t>{*sp.etp} : std::vector<int64_t>{tp};
                if (!sp.etp && tp > 1) etps.push_back(1);
                for (int64_t etp : etps)
                    for (int64_t ep : pinned_or(sp.ep, divisors(m.moe->experts)))
                        // Bounded by inner before they multiply: pinned degrees may be anything positive.
                        if (etp > 0 && ep > 0 && etp <= inner && ep <= inner && inner % (ep * etp) == 0)
                            out.push_back({tp, cp, pp, dp, ep, etp == tp ? 0 : etp});
            }
        }
    }
    return out;
}

struct Variant {
    Schedule schedule;
    int64_t vpp;
};

std::vector<Variant> schedules(const ModelSpec& m, const Shape& s, const SearchSpace& sp) {
    std::vector<Variant> v;
    if (s.pp == 1) {
        if (!sp.schedule || *sp.schedule == Schedule::one_f_one_b) v.push_back({Schedule::one_f_one_b, 1});
        return v;
    }
    for (Schedule sc : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zb, Schedule::dualpipe}) {
        if (sp.schedule && *sp.schedule != sc) continue;
        if (sc == Schedule::dualpipe && s.pp % 2) continue;
        v.push_back({sc, 1});
    }
    if (!sp.schedule || *sp.schedule == Schedule::interleaved)
        for (int64_t vpp : pinned_or<int64_t>(sp.vpp, {2, 3, 4, 6, 8, 12, 16}))
            if (vpp > 1 && s.pp * vpp <= m.layers + 2) v.push_back({Schedule::interleaved, vpp});
    return v;
}

std::vector<std::array<Axis, 5>> orders(const ModelSpec& m, const Shape& s, const SearchSpace& sp) {
    if (sp.order) return {*sp.order};
    std::vector<std::array<Axis, 5>> o{{Axis::tp, Axis::cp, Axis::ep, Axis::dp, Axis::pp}};
    if (s.pp > 1 && s.dp > 1) o.push_back({Axis::tp, Axis::cp, Axis::ep, Axis::pp, Axis::dp});  // PP inside DP
    if (s.cp > 1 && s.tp > 1) o.push_back({Axis::cp, Axis::tp, Axis::ep, Axis::dp, Axis::pp});  // CP innermost
    (void)m;
    return o;
}

bool crosses(const Plan& p) {
    for (const GroupPlacement& g : p.groups)
        if (g.crosses_domain() && (g.axis == Axis::tp || g.axis == Axis::cp || g.axis == Axis::ep || g.axis == Axis::etp))
            return true;
    return false;
}

// `base` with the shape's degrees.
Layout with_shape(Layout base, const Shape& s) {
    base.tp = s.tp;
    base.cp = s.cp;
    base.pp = s.pp;
    base.dp = s.dp;
    base.ep = s.ep;
    base.etp = s.etp;
    return base;
}

// The ZeRO stages worth trying on a shape: stage 0 alone where no data-parallel group has two ranks,
// where every stage shards nothing and plans the same.
std::vector<int> zero_stages(const Shape& s, const SearchSpace& sp) {
    if (sp.zero) return {*sp.zero};
    const Layout l = with_shape(Layout{}, s);
    return zero_shards_dense(l) || zero_shards_experts(l) ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0};
}

void run_shape(const ModelSpec& m, const ClusterSpec& c, const Layout& base, const SearchSpace& sp, const Shape& s,
               size_t top, double floor, bool pareto, Partial& out) {
    const std::vector<int64_t> mbs = [&] {
        if (sp.micro_batch) return std::vector<int64_t>{*sp.micro_batch};
        std::vector<int64_t> v;
        for (int64_t b = 1; b <= std::max<int64_t>(1, sp.max_micro_batch); b *= 2) v.push_back(b);
        return v;
    }();
    const std::vector<int> zeros = zero_stages(s, sp);
    const std::vector<Recompute> rcs =
        pinned_or(sp.recompute, {Recompute::none, Recompute::selective, Recompute::full});
    const std::vector<bool> sps = sp.sequence_parallel ? std::vector<bool>{*sp.sequence_parallel}
                                                        : (s.tp > 1 ? std::vector<bool>{true, false} : std::vector<bool>{false});
    Plan p;         // reused for every variant of this shape
    StepWork work;  // per-layer work, shared by the ZeRO stages and rank orders of one variant
    Layout l = with_shape(base, s);
    const std::vector<std::array<Axis, 5>> ords = orders(m, s, sp);
    std::vector<Stage> stages;  // the variant's stages: the bound reads them for every micro-batch and more
    for (const Variant& v : schedules(m, s, sp)) {
        l.schedule = v.schedule;
        l.vpp = v.vpp;
        split_stages(m, l, stages);
        for (int64_t b : mbs)
            for (Recompute rc : rcs)
                for (bool seqpar : sps)
                    for (int z : zeros)  // innermost: ZeRO stage and rank order share the per-layer work
                        for (size_t oi = 0; oi < ords.size(); ++oi) {
                            l.order = ords[oi];
                            l.micro_batch = b;
                            l.zero = z;
                            l.recompute = rc;
                            l.sequence_parallel = seqpar;
                            ++out.evaluated;
                            if (work.key != work_key(l)) work = step_work(m, c, l);
                            // Exact pruning, independent of threads: this worker's pool already holds
                            // `top` layouts whose ceilings pass what this variant could reach (the bound
                            // counts its computation alone, below any step its ceiling allows), or an
                            // earlier pass re-timed answers faster than it (`floor`), so the global pool
                            // cannot want it; only whether it fits is still counted.
                            const double bound = pareto ? 0.0 : tokens_per_s_per_gpu_bound(m, c, l, work, stages);
                            const bool hopeless = !pareto && ((out.top.size() == top && bound < out.top.back().ceiling) ||
                                                              bound < floor);
                            evaluate_into(m, c, l, p,
                                          {.depth = hopeless ? Depth::memory : Depth::lean,
                                           .pipeline = PipelineMethod::closed_form, .work = &work});
                            if (p.rejection) {
                                ++out.rejected[p.rejection->code];
                                continue;
                            }
                            if (!p.memory_fits) {
                                // Memory does not depend on the rank order: the other orders miss by as much.
                                const int64_t same = static_cast<int64_t>(ords.size() - oi);
                                out.does_not_fit += same;
                                out.evaluated += same - 1;
                                const double miss = p.memory.total_bytes() - p.capacity_bytes;
                                if (out.shortest_miss < 0 || miss < out.shortest_miss) out.shortest_miss = miss;
                                break;
                            }
                            if (!p.leaves_headroom(sp.headroom)) {
                                // Nor does the memory's margin: the other orders leave as little.
                                const int64_t same = static_cast<int64_t>(ords.size() - oi);
                                out.rejected["too_little_headroom"] += same;
                                out.evaluated += same - 1;
                                break;
                            }
                            if (sp.no_crossing && crosses(p)) {
                                ++out.rejected["crosses_domain"];
                                continue;
                            }
                            ++out.feasible;
                            if (hopeless && !sp.no_crossing) {
                                // Neither the bound nor whether it fits depends on the rank order (nor
                                // does check_layout()): the other orders fit and are as hopeless.
                                const int64_t rest = static_cast<int64_t>(ords.size() - oi - 1);
                                out.feasible += rest;
                                out.evaluated += rest;
                                break;
                            }
                            if (hopeless) continue;
                            const Scored sc{p.throughput.tokens_per_s_per_gpu, p.needed_bytes, l, ceiling_of(p, l, c)};
                            keep_top(out.top, sc, top);
                            if (pareto) keep_pareto(out.pareto, sc);
                        }
    }
}

int64_t variants(const ModelSpec& m, const Shape& s, const SearchSpace& sp) {
    const int64_t mbs = sp.micro_batch ? 1 : static_cast<int64_t>(std::floor(std::log2(double(std::max<int64_t>(1, sp.max_micro_batch))))) + 1;
    const int64_t zeros = static_cast<int64_t>(zero_stages(s, sp).size()), rcs = sp.recompute ? 1 : 3;
    const int64_t sps = sp.sequence_parallel ? 1 : (s.tp > 1 ? 2 : 1);
    return static_cast<int64_t>(schedules(m, s, sp).size() * orders(m, s, sp).size()) * mbs * zeros * rcs * sps;
}

/// Every shape's layouts on `threads` workers, each into its own Partial (the result does not depend on
/// how shapes fall to threads). Returns 0 when done, 1 when cancelled, 2 when out of time (counted from
/// `t0`, the search's start, so a second pass shares the first's budget).
int run_workers(const ModelSpec& m, const ClusterSpec& c, const Layout& base, const SearchSpace& space,
                const std::vector<Shape>& all, size_t pool, double floor, const SearchOptions& opt,
                std::chrono::steady_clock::time_point t0, std::vector<Partial>& parts) {
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    std::atomic<size_t> next{0};
    std::atomic<int64_t> done{0};
    std::atomic<int> stop_reason{0};
    auto should_stop = [&] {
        if (stop_reason.load(std::memory_order_relaxed)) return true;
        if (opt.cancel && opt.cancel->load(std::memory_order_relaxed)) stop_reason = 1;
        else if (opt.time_budget_s > 0 && elapsed() > opt.time_budget_s) stop_reason = 2;
        return stop_reason.load() != 0;
    };
    auto worker = [&](Partial& part) {
        for (size_t i; !should_stop() && (i = next.fetch_add(1)) < all.size();) {
            run_shape(m, c, base, space, all[i], pool, floor, opt.pareto, part);
            done.fetch_add(1);
        }
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < parts.size(); ++t) threads.emplace_back(worker, std::ref(parts[t]));
    if (opt.progress) {
        // The calling thread only reports progress; the first share of the work goes to the pool too.
        threads.emplace_back(worker, std::ref(parts[0]));
        while (done.load() < static_cast<int64_t>(all.size()) && !stop_reason.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            opt.progress(done.load(), static_cast<int64_t>(all.size()), elapsed());
        }
    } else {
        worker(parts[0]);
    }
    for (std::thread& t : threads) t.join();
    return stop_reason.load();
}

/// Layouts [first, last) of `kept` re-timed as `plan` shows them (evaluate(): the pipeline simulated) on
/// up to `threads` workers, appended in the kept order; those whose simulated in-flight memory no longer
/// fits, or no longer leaves the search's `headroom`, drop out.
void retime(const ModelSpec& m, const ClusterSpec& c, const std::vector<Scored>& kept, size_t first, size_t last,
            int threads, double headroom, PipelineMemo& memo, std::vector<std::pair<Scored, Plan>>& out) {
    std::vector<Plan> plans(last - first);
    const size_t n = std::min(plans.size(), static_cast<size_t>(std::max(1, threads)));
    auto worker = [&](size_t from) {
        for (size_t i = from; i < plans.size(); i += n) {
            // The answer's layout says what runs: the base's overlaps where this variant (SP off, PP
            // without interleaving) cannot run them are off, as the API would have them (timing unchanged).
            Layout l = kept[first + i].layout;
            clear_unrunnable_overlaps(l);
            plans[i] = evaluate(m, c, l, EvalOptions{.memo = &memo});
        }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < n; ++t) pool.emplace_back(worker, t);
    if (n > 0) worker(0);
    for (std::thread& t : pool) t.join();
    for (size_t i = 0; i < plans.size(); ++i) {
        if (!plans[i].feasible() || !plans[i].leaves_headroom(headroom)) continue;
        const Plan& p = plans[i];
        out.push_back({Scored{p.throughput.tokens_per_s_per_gpu, p.needed_bytes, kept[first + i].layout},
                       std::move(plans[i])});
    }
}

std::vector<std::pair<Scored, Plan>> retimed(const ModelSpec& m, const ClusterSpec& c, const std::vector<Scored>& kept,
                                             int threads, double headroom) {
    std::vector<std::pair<Scored, Plan>> out;
    PipelineMemo memo;
    retime(m, c, kept, 0, kept.size(), threads, headroom, memo, out);
    return out;
}

// What two twins share: the layout but its rank order, and the throughput and memory it planned to.
using TwinKey = std::tuple<std::array<int64_t, 12>, double, double>;
TwinKey twin_key(const Scored& s) { return {key_but_order(s.layout), s.tokens_per_s_per_gpu, s.needed_bytes}; }

/// For each entry of `out`, sorted by better(), the index of the answer it belongs to: its own, or that of
/// the earlier entry it differs from only in its rank order while planning exactly as it does (the same
/// throughput and memory: every group lands on the same tier either way), whose twin it is.
std::vector<size_t> answer_of(const std::vector<std::pair<Scored, Plan>>& out) {
    std::map<TwinKey, size_t> first;
    std::vector<size_t> of(out.size());
    for (size_t i = 0; i < out.size(); ++i) of[i] = first.emplace(twin_key(out[i].first), i).first->second;
    return of;
}

struct Answers {
    std::vector<std::pair<Scored, Plan>> best;         // distinct, best first
    std::vector<std::vector<std::string>> same_orders;  // per answer: its twins' rank orders
    // Whether a layout left out of the pool could still have entered `best`: the pool was re-timed to
    // its end without its ceilings falling below the top-th answer (or without `top` answers).
    bool open = false;
};

/// The `top` best distinct answers of the kept pool as re-timed, best first. The simulation is the
/// costly part, so the pool is re-timed by falling ceiling, `threads` layouts at a time, and stops once
/// the next ceiling is below the top-th answer's re-timed throughput: what is left could not enter. The
/// same answers as re-timing the whole pool. `full`: the pool holds as many as it may, so layouts were
/// left out of it, each with a ceiling no higher than its last.
Answers best_retimed(const ModelSpec& m, const ClusterSpec& c, std::vector<Scored> kept, size_t top, int threads,
                     double headroom, bool full) {
    std::stable_sort(kept.begin(), kept.end(), higher_ceiling);
    std::vector<std::pair<Scored, Plan>> out;
    std::vector<size_t> of, reps;  // each entry's answer; the answers' entries, best first
    PipelineMemo memo;
    const size_t step = static_cast<size_t>(std::max(1, threads));
    auto by_rank = [](const auto& a, const auto& b) { return better(a.first, b.first); };
    bool closed = false;
    for (size_t i = 0; i < kept.size(); i += step) {
        if (reps.size() >= top && kept[i].ceiling < out[reps[top - 1]].first.tokens_per_s_per_gpu) {
            closed = true;
            break;
        }
        retime(m, c, kept, i, std::min(kept.size(), i + step), threads, headroom, memo, out);
        std::stable_sort(out.begin(), out.end(), by_rank);
        of = answer_of(out);
        reps.clear();
        for (size_t k = 0; k < of.size(); ++k)
            if (of[k] == k) reps.push_back(k);
    }
    if (full && !closed)
        closed = reps.size() >= top && kept.back().ceiling < out[reps[top - 1]].first.tokens_per_s_per_gpu;
    if (reps.size() > top) reps.resize(top);
    Answers a;
    a.open = full && !closed;
    a.same_orders.resize(reps.size());
    for (size_t i = 0; i < out.size(); ++i) {
        if (of[i] == i) continue;
        const auto at = std::lower_bound(reps.begin(), reps.end(), of[i]);  // its answer's place, if kept
        if (at != reps.end() && *at == of[i]) a.same_orders[at - reps.begin()].push_back(order_string(out[i].first.layout));
    }
    for (size_t r : reps) a.best.push_back(std::move(out[r]));
    return a;
}

/// The Pareto front of the re-timed plans, memory needed ascending.
std::vector<Plan> pareto_front(std::vector<std::pair<Scored, Plan>> plans) {
    std::vector<Scored> front;
    for (const auto& [s, p] : plans) keep_pareto(front, s);
    std::sort(front.begin(), front.end(), [](const Scored& a, const Scored& b) {
        return a.needed_bytes != b.needed_bytes ? a.needed_bytes < b.needed_bytes : better(b, a);
    });
    std::vector<Plan> out;
    for (const Scored& s : front)
        for (auto& [k, p] : plans)
            if (key(k.layout) == key(s.layout)) {
                out.push_back(std::move(p));
                break;
            }
    return out;
}

}  // namespace

int64_t search_space_size(const ModelSpec& m, const ClusterSpec& c, const SearchSpace& space) {
    int64_t n = 0;
    for (const Shape& s : shapes(m, c, space)) n += variants(m, s, space);
    return n;
}

SearchResult search(const ModelSpec& m, const ClusterSpec& c, const Layout& base, const SearchSpace& space,
                    const SearchOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<Shape> all = shapes(m, c, space);
    const int threads = std::max(1, opt.threads > 0 ? opt.threads : static_cast<int>(std::thread::hardware_concurrency()));
    const size_t top = static_cast<size_t>(std::max(1, opt.top));
    // The loop ranks by the closed forms, which can order close layouts differently from the simulated
    // pipeline (the bubble of few micro-batches, interleaving): it keeps a pool of the layouts the
    // simulation could make fastest (their ceilings), re-timed by the simulation before the `top` are
    // chosen. Should a layout left out of the pool still have a ceiling above the answers, the search
    // runs again with a pool eight times wider, until none has (or every layout that fits is in it).
    SearchResult r;
    Answers answers;
    std::vector<Scored> front;
    double floor = 0;  // the top-th re-timed answer of the last pass: none slower can enter
    for (size_t pool = std::max(top, kRetimedPool);; pool *= 8) {
        std::vector<Partial> parts(static_cast<size_t>(threads));
        const int stop = run_workers(m, c, base, space, all, pool, floor, opt, t0, parts);
        r = SearchResult{};
        if (stop == 1) r.stopped = "cancelled";
        if (stop == 2) r.stopped = fmt::format("time budget of {:g} s", opt.time_budget_s);
        if (!r.stopped.empty()) {  // nothing is re-timed for a result nobody will use
            r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            return r;
        }
        std::vector<Scored> kept;
        front.clear();
        double miss = -1;
        for (Partial& p : parts) {
            r.evaluated += p.evaluated;
            r.feasible += p.feasible;
            for (const auto& [k, v] : p.rejected) r.rejected[k] += v;
            if (p.does_not_fit) r.rejected["does_not_fit"] += p.does_not_fit;
            for (const Scored& s : p.top) keep_top(kept, s, pool);
            for (const Scored& s : p.pareto) keep_pareto(front, s);
            if (p.shortest_miss >= 0 && (miss < 0 || p.shortest_miss < miss)) miss = p.shortest_miss;
        }
        r.shortest_miss_bytes = std::max(0.0, miss);
        const bool full = kept.size() == pool;
        answers = best_retimed(m, c, std::move(kept), top, threads, space.headroom, full);
        if (!answers.open || pool >= kMaxRetimedPool) break;
        if (answers.best.size() >= top) floor = answers.best[top - 1].first.tokens_per_s_per_gpu;
    }
    if (opt.pareto) {
        // The closed forms chose the front, and the simulation moves its points: an answer they put behind
        // a front point of the same memory can come out ahead of it. The best answers, re-timed, stand
        // for themselves, so the fastest point of the front is the first answer.
        std::vector<std::pair<Scored, Plan>> points = retimed(m, c, front, threads, space.headroom);
        points.insert(points.end(), answers.best.begin(), answers.best.end());
        r.pareto = pareto_front(std::move(points));
    }
    for (auto& [s, p] : answers.best) r.best.push_back(std::move(p));
    r.same_orders = std::move(answers.same_orders);
    r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace shardplan
