/// The one resolver of changes made on top of a case: the command line's flags (`plan --case X --tp 4`)
/// and a search request's pins (`{"pins": {"tp": 4}}`) are the same Overrides, checked by the same code
/// with the same defaults and derivations, and name their fields the way their user wrote them
/// ("--micro-batch" or "pins.micro_batch"). Before them, what a case given to plan may hold
/// (check_case_keys) and what pins a search can honour (check_pins).
///
///   Overrides o;  o.tp = 4;  o.recompute = "selective";
///   Case c = apply_overrides(case_from_json(j), o, Naming::flags);   // dp derived again: gpus ÷ (tp·cp·pp)
///   SearchSpace sp = search_space(o, Naming::pins);                   // tp pinned to 4
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "shardplan/io.h"
#include "shardplan/search.h"

namespace shardplan {

/// Values given on top of a case; unset (nullopt, or an empty string) keeps the case's own. Settings
/// with names are text, as typed: apply_overrides and search_space read and check them.
struct Overrides {
    std::optional<int64_t> gpus, tp, cp, pp, dp, ep, etp, vpp, micro_batch, global_batch, seq_len, zero;
    std::optional<int64_t> recompute_layers;  // with recompute full: Megatron's --recompute-num-layers
    std::string recompute, precision, schedule, grad_dtype, order, sequence_parallel;
    std::string recompute_modules;  // "core_attn,mlp" (Megatron's names): implies recompute selective
    std::string recompute_method;   // with recompute full: uniform | block
    std::string attention_kernel, kernels, stage_split, grad_buckets, grad_accumulation, cross_entropy, dropout, tp_recompute_allgather,
        tp_comm_overlap, ep_comm_overlap, dp_comm_overlap, fp8_params, fp32_shards;
    std::string moe_dispatcher, expert_gemms, allocator, zero3_comm, cuda_graphs, pipeline_pacing, pipeline_sends,
        pipeline_scatter_gather;
    std::string moe_imbalance, moe_capacity_factor;  // numbers, as typed ("1.3"; "0" = dropless)
    /// The framework that runs the layout ("nanotron", "torchtitan", "Megatron-LM"): its defaults for the
    /// kernels, the stage split, the gradient buckets and accumulation, the loss, the allocator, TP, EP and DP
    /// overlap, the MoE dispatcher and expert GEMMs, ZeRO-3's collectives, CUDA graphs and the pipeline's pacing and sends, unless those are
    /// given too (framework_defaults).
    std::string framework;
    std::optional<bool> no_crossing;  // search only
    std::optional<double> headroom;   // search only: SearchSpace::headroom, a share in [0, 1]
};

/// How a field is named in messages: `--micro-batch` (the command line) or `pins.micro_batch` (a request).
enum class Naming { flags, pins };
std::string override_name(const std::string& key, Naming n);

/// A model named as the command line and the Python module take it: a preset name, or a JSON file (a
/// shardplan model or a Hugging Face config.json). A cluster likewise: a preset name, or a cluster JSON
/// file (a cluster object or a calibrated profile). Throw ConfigError on `field`.
ModelSpec model_from_arg(const std::string& arg, const std::string& field);
ClusterSpec cluster_from_arg(const std::string& arg, const std::string& field);

/// A model's parameter counts as `shardplan model --json` prints them (per layer, embedding, head, FLOPs
/// per token at `seq_len`, and the model itself).
json model_report_json(const ModelSpec& m, int64_t seq_len);

/// The case with the overrides applied. dp: as given, else derived again (derive_dp) when a degree or
/// the GPU count changes, or when the case left it unstated (0). A schedule follows vpp (vpp > 1 →
/// interleaved; vpp 1 leaves interleaved for 1F1B) unless given; sequence parallelism follows a given
/// tp (on when tp > 1) unless given. Throws ConfigError naming the override.
Case apply_overrides(Case c, const Overrides& o, Naming n);

/// Every override given pins that dimension of a search; the case's own degrees do not. Naming
/// recompute_modules pins recompute to selective (the modules themselves travel in the base layout,
/// with attention_kernel and dropout, which the search never varies).
SearchSpace search_space(const Overrides& o, Naming n);

/// Throws ConfigError naming the first top-level key of `j` that is neither a case's (model, cluster,
/// layout and the metadata a case file carries: id, source, source_location, measured, derived, quality,
/// quality_note) nor one of `extra` (a request's options): "gpus: expected a known field of `what`
/// (model, cluster, layout, ...)". A case given to plan (--case, a request body) is checked; validate is
/// not, as a file of published runs may carry fields of its own beside them.
void check_case_keys(const json& j, const std::string& what, std::initializer_list<const char*> extra = {});

/// Throws ConfigError naming the first pin no layout of `m` on `c` can have: a degree that does not
/// divide the GPUs (nor tp the heads, nor ep the experts), pinned degrees whose product does not, a
/// pipeline longer than the layers allow, or EP or expert TP pinned for a dense model. Without it such a
/// search evaluates nothing and reads as "no layout fits".
void check_pins(const SearchSpace& sp, const ModelSpec& m, const ClusterSpec& c, Naming n);

/// A request's `pins` object: integers for degrees, micro_batch and zero; names for recompute and
/// schedule (as in a case); true/false for sequence_parallel and no_crossing; a number in [0, 1] for
/// headroom. Unknown keys are refused.
Overrides overrides_from_json(const json& pins, const std::string& field = "pins");

}  // namespace shardplan
