/// Why a layout does not fit, answered with the changes that would make it: each single change a
/// practitioner reaches for first (recompute, full recomputation of only the first N layers of each stage
/// with the smallest N that fits, ZeRO stage, TP×2, PP×2, CP×2, micro-batch ÷2, sequence parallelism,
/// flash attention), planned in full, the ones that fit first and fastest first, each with
/// what it costs in throughput. Used by `plan` (text), POST /api/fit and the page's "make it fit" list.
///
///   for (const FitChange& f : fit_changes(model, cluster, layout))
///       if (f.plan.feasible()) std::cout << f.change << ": " << f.plan.throughput.tokens_per_s_per_gpu;
#pragma once
#include <string>
#include <vector>

#include "shardplan/plan.h"

namespace shardplan {

struct FitChange {
    std::string change;  // "recompute full", "TP 8 → 16 (DP 8 → 4)", "micro-batch 2 → 1"
    Layout layout;       // the layout with that one change (dp re-derived where a degree moved)
    Plan plan;           // its plan: fits or not, and how fast
};

/// Every candidate change that yields a runnable layout, fitting ones first (fastest first), then the
/// others by how much memory they still lack. Empty when no change applies.
std::vector<FitChange> fit_changes(const ModelSpec& m, const ClusterSpec& c, const Layout& l);

}  // namespace shardplan
