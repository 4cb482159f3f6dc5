/// Why a layout does not fit, answered with the changes that would make it: each single change a
/// practitioner reaches for first (recompute, full recomputation of only the first N layers of each stage
/// with the smallest N that fits, ZeRO stage, TP×2, PP×2, CP×2, for a MoE model the smallest doubling of EP
/// that fits, micro-batch ÷2, sequence parallelism,
/// fp32 gradients where the optimizer step's copies of 16-bit ones set the peak, flash attention),
/// planned in full, the ones that fit first and fastest first, each with what it costs in throughput. Used by `plan` (text), POST /api/fit and the page's "make it fit" list.
///
///   for (const FitChange& f : fit_changes(model, cluster, layout, evaluate(model, cluster, layout)))
///       if (f.plan.feasible()) std::cout << f.change << ": " << f.plan.throughput.tokens_per_s_per_gpu;
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "shardplan/plan.h"

namespace shardplan {

struct FitChange {
    std::string change;  // "recompute full", "TP 8 → 16 (DP 8 → 4)", "micro-batch 2 → 1"
    Layout layout;       // the layout with that one change (dp re-derived where a degree moved)
    Plan plan;           // its plan: fits or not, and how fast
};

/// The recomputation settings heavier than `l`'s, lightest first: Megatron's default selective set
/// (core_attn); the cheap replays without the attention core, each alone and all together (layernorm,
/// moe_act under MoE, mla_up_proj under MLA, as Megatron-Bridge's recipes name them); those with core_attn;
/// those and every MLP, expert and shared-expert block; full recomputation of only the first N layers of each
/// stage chunk (Megatron's block method) with the smallest N that `plan` says fits; full. Each comes with
/// its label ("recompute selective (core_attn,layernorm)"). `plan` is the evaluation to bisect N with
/// (the simulated plan, or the closed form inside the fit's loop). Used by fit_changes and by validate,
/// which plans a run whose assumed recomputation does not fit with the fastest of these that does.
std::vector<std::pair<std::string, Layout>> recompute_options(const ModelSpec& m, const ClusterSpec& c, const Layout& l,
                                                              const std::function<Plan(const Layout&)>& plan);

/// Every candidate change that yields a runnable layout, fitting ones first (fastest first), then the
/// others by how much memory they still lack. Empty when no change applies. `planned` is `l`'s own plan
/// (the caller has it): its peak's moment decides whether fp32 gradients are a candidate.
std::vector<FitChange> fit_changes(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Plan& planned);

}  // namespace shardplan
