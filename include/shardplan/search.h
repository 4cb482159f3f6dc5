/// The best layout for a model on a cluster. search() enumerates every tp·cp·pp·dp factorisation of
/// the GPU count (and ep, etp for MoE), then schedules and vpp, micro-batch sizes, ZeRO stages,
/// recomputation, sequence parallelism and rank orders; evaluates each with evaluate(); keeps the
/// fastest that fit (tokens/s per GPU, ties to lower memory, then to the smaller layout), the
/// memory-vs-throughput Pareto front, and a count of every rejected layout by reason. Work is split
/// over threads by parallel shape; the result does not depend on the thread count.
///
///   SearchSpace space;                 // nothing pinned
///   space.tp = 8;                      // pin TP
///   SearchResult r = search(model, cluster, base, space, {.top = 5});
///   r.best[0].throughput.tokens_per_s_per_gpu;
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "shardplan/plan.h"

namespace shardplan {

/// What the search may vary. An engaged optional pins that dimension; max_* bound a range.
struct SearchSpace {
    std::optional<int64_t> tp, cp, pp, dp, ep, etp, vpp, micro_batch;
    std::optional<int> zero;
    std::optional<Recompute> recompute;
    std::optional<Schedule> schedule;
    std::optional<bool> sequence_parallel;
    std::optional<std::array<Axis, 5>> order;
    int64_t max_tp = 0, max_cp = 0, max_pp = 0;  // 0 = no bound beyond divisibility
    int64_t max_micro_batch = 16;
    bool no_crossing = false;  // reject layouts whose TP, CP or EP group leaves its scale-up domain
    /// Reject layouts that fit with less than this share of what their allocations need still free
    /// (Plan::leaves_headroom; "too_little_headroom"): 0.1 keeps to those without the "may not fit"
    /// finding. 0 = any layout that fits.
    double headroom = 0;
};

/// How many layouts the search re-times with the simulated pipeline before it picks the `top` (more when
/// `top` is larger): those whose ceilings, the most the simulation could make of them, are highest. The
/// closed forms and the simulation can order close layouts differently, and the simulated in-flight
/// memory can exceed the closed form's. Where a layout left out could still have entered the answers,
/// the search runs again with a pool eight times wider, up to kMaxRetimedPool.
inline constexpr size_t kRetimedPool = 512;
inline constexpr size_t kMaxRetimedPool = 512 * 8 * 8;

struct SearchOptions {
    int top = 5;
    bool pareto = false;
    int threads = 0;  // 0 = all hardware threads
    /// Called from the calling thread about every 100 ms while workers run: (done, total, elapsed_s).
    std::function<void(int64_t, int64_t, double)> progress;
    /// Stops the search early (checked between layout shapes): when *cancel turns true (the HTTP
    /// server sets it when the client leaves), or once time_budget_s (> 0) has passed. The result then
    /// says so in `stopped` and holds no layouts (a partial ranking would mislead).
    const std::atomic<bool>* cancel = nullptr;
    double time_budget_s = 0;
};

struct SearchResult {
    int64_t evaluated = 0;
    int64_t feasible = 0;
    double elapsed_s = 0;
    std::map<std::string, int64_t> rejected;  // reason → count; sums to evaluated − feasible
    double shortest_miss_bytes = 0;           // among layouts that do not fit: the smallest shortfall
    std::string stopped;                      // empty, or why the search ended early ("cancelled", "time budget")
    std::vector<Plan> best;                   // fastest first, one per answer
    /// Per entry of `best`: the other rank orders under which its layout plans exactly as it does (every
    /// group on the same tier either way), folded into it rather than listed as answers of their own.
    std::vector<std::vector<std::string>> same_orders;
    std::vector<Plan> pareto;                 // memory ascending, throughput ascending (only when asked)
};

/// `base` supplies seq_len, global_batch, precision and grad_dtype; its degrees are ignored.
SearchResult search(const ModelSpec& m, const ClusterSpec& c, const Layout& base, const SearchSpace& space,
                    const SearchOptions& opt = {});

/// How many layouts search() would evaluate: the size of the space, counted without evaluating it
/// (the server refuses searches above a limit instead of tying up a worker).
int64_t search_space_size(const ModelSpec& m, const ClusterSpec& c, const SearchSpace& space);

/// Divisors of n in increasing order.
std::vector<int64_t> divisors(int64_t n);

}  // namespace shardplan
