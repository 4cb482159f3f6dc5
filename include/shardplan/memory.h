/// Memory per GPU of one pipeline stage, by category (docs/model.md §2): weights, gradients and Adam
/// state by ZeRO stage (Rajbhandari et al.), activations per Korthikanti et al. Table 2 generalised to
/// GQA/MLA, SwiGLU, flash attention, MoE routed tokens and CP, times the micro-batches the schedule keeps
/// in flight, and the rest (framework reserve, FP8 weight copies, ZeRO-3 gathered layers).
///
///   StageParams p = stage_params(model, layout, stage);
///   MemoryBreakdown mem = stage_memory(model, cluster, layout, stage, in_flight);
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "shardplan/model.h"

namespace shardplan {

struct ClusterSpec;
struct Layout;

/// One GPU's memory at its peak, as three figures (docs/model.md §2.5): what tensors hold (allocated:
/// torch.cuda.max_memory_allocated), what the caching allocator holds for them (reserved), and what the
/// device shows (nvidia-smi: + CUDA context, NCCL buffers, library workspaces). `fits` compares the device
/// figure with usable HBM; total_bytes() is that figure.
struct MemoryBreakdown {
    double weights_bytes = 0;
    double grads_bytes = 0;
    double optimizer_bytes = 0;
    double activations_bytes = 0;  // stored for the backward, of every micro-batch in flight
    double other_bytes = 0;        // buffers: the loss's transient logits or one block's gradients (whichever
                                   // is larger: `peak`), FP8 copies, gathered FSDP layers, PP send/recv, SP gathers
    double pass_bytes = 0;         // the share of other_bytes alive only while forward and backward passes run
                                   // (the loss or a block's gradients, FSDP's gathered layers, PP send/recv)
    double step_bytes = 0;         // what the optimizer step holds beyond the state and the lasting buffers:
                                   // fp32 copies of the 16-bit gradients it owns (counted in other_bytes when
                                   // `peak` is the optimizer step)
    PeakMoment peak = PeakMoment::backward;
    double allocator_bytes = 0;    // reserved − allocated: the caching allocator's rounding and fragmentation
    double runtime_bytes = 0;      // device − reserved: CUDA context, NCCL communicators, library workspaces
    double allocated_bytes() const { return weights_bytes + grads_bytes + optimizer_bytes + activations_bytes + other_bytes; }
    double reserved_bytes() const { return allocated_bytes() + allocator_bytes; }
    double device_bytes() const { return reserved_bytes() + runtime_bytes; }
    double total_bytes() const { return device_bytes(); }
    /// Activations of `bytes` more stored, with the allocator's share of their churn.
    void add_activations(double bytes, double fragmentation) {
        activations_bytes += bytes;
        allocator_bytes += bytes * fragmentation;
    }
    /// The optimizer step's moment, weighed once the activations in flight are added: every activation
    /// and pass buffer is freed by then, the fp32 gradient copies (step_bytes) are not yet. When it holds
    /// more, it is the peak: activations 0, buffers the lasting ones and the copies; the caching allocator
    /// still keeps the segments the passes reserved, which the copies reuse first, so reserved is the larger
    /// of the passes' reserved figure and the step's allocated one (docs/model.md §2.5).
    void settle_step_moment() {
        if (peak == PeakMoment::optimizer || step_bytes <= 0) return;
        const double lasting = other_bytes - pass_bytes;
        const double at_step = weights_bytes + grads_bytes + optimizer_bytes + lasting + step_bytes;
        if (at_step <= allocated_bytes()) return;
        const double reserved_in_passes = reserved_bytes();
        activations_bytes = 0;
        other_bytes = lasting + step_bytes;
        pass_bytes = 0;
        allocator_bytes = std::max(0.0, reserved_in_passes - at_step);
        peak = PeakMoment::optimizer;
    }
    /// The caching allocator keeps freed blocks for reuse, but an allocation that would not fit makes it
    /// release them and retry (PyTorch's CUDACachingAllocator, release_cached_blocks): its cache fills
    /// what HBM the allocations leave and never takes the device past `usable_bytes`.
    void trim_cache(double usable_bytes) {
        allocator_bytes = std::max(0.0, std::min(allocator_bytes, usable_bytes - allocated_bytes() - runtime_bytes));
    }
};

/// The share of the activations' churn the caching allocator holds on top of them: the (not fitted)
/// `fragmentation` under PyTorch's classic allocator, none with expandable segments (docs/model.md §2.5).
double allocator_cache_share(const ClusterSpec& c, const Layout& l);

/// Bytes `params` parameters, `embedding` of them in the embeddings, move in a ZeRO parameter all-gather
/// and occupy gathered under ZeRO-3: a GEMM weight 1 where per-tensor FP8 parameters are gathered as they
/// are held (keeps_fp8_params), else 2; the embeddings 2, in bf16 always. MXFP8 parameters are gathered
/// in bf16 through the gradient buffer and quantized after (Megatron-Core's
/// reuse_grad_buf_for_mxfp8_param_ag, which its fp8_param_gather with MXFP8 requires).
double gathered_weight_bytes(const Layout& l, double params, double embedding = 0.0);

/// The layers of one pipeline rank (for interleaved schedules: all its chunks together).
struct Stage {
    int64_t index = 0;
    int64_t layers = 0;
    int64_t moe_layers = 0;
    bool first = false;  // holds the input embedding
    bool last = false;   // holds the LM head and the loss
    int64_t first_layer = 0;  // index of its first layer (of its first chunk)
};

/// Parameters held on one GPU of a stage before any ZeRO sharding.
struct StageParams {
    double dense = 0;      // attention, dense MLPs, shared experts, router, norms, embeddings (÷ tp)
    double expert = 0;     // routed experts (÷ ep·etp)
    double embedding = 0;  // input embedding / output layer share of `dense` (first and last stage)
    double largest_layer = 0;  // one layer's local parameters that ZeRO shards (ZeRO-3 gathers one at a time)
    double total() const { return dense + expert; }
};

/// What one dense and one MoE layer hold, computed once per layout and shared by every stage.
struct LayerMemory {
    LayerParams dense, moe;
    double act_dense = 0, act_moe = 0;            // stored per micro-batch (after recomputation rules)
    double act_full_dense = 0, act_full_moe = 0;  // the working set while one layer's backward runs
    double grad_dense = 0, grad_moe = 0;          // gradients alive during one block's backward
    int64_t recompute_layers = 0;  // full recomputation's N (0: not full); uniform groups N layers
    int64_t recompute_block = 0;   // block method: layers recomputed per rank (N × chunks); 0 = uniform
    double act_head = 0;                          // final norm, LM-head input and logits (last stage)
};
LayerMemory layer_memory(const ModelSpec& m, const Layout& l);

/// One layer's parameters on one GPU: `dense` (attention and dense MLP ÷ tp, router and norms
/// replicated), `expert` (routed experts ÷ ep·etp); nothing else set.
StageParams layer_params_on_gpu(const LayerParams& x, const Layout& l);
StageParams stage_params(const ModelSpec& m, const Layout& l, const Stage& s);
StageParams stage_params(const ModelSpec& m, const Layout& l, const Stage& s, const LayerMemory& lm);

/// Activation bytes one micro-batch leaves stored on one GPU for one layer (after recomputation rules).
double layer_activation_bytes(const ModelSpec& m, const Layout& l, bool moe_layer);
/// The same without any recomputation: the working set while a layer's backward runs.
double layer_activation_bytes_full(const ModelSpec& m, const Layout& l, bool moe_layer);

/// Memory of one GPU of this stage at its peak, with `in_flight` micro-batches of activations alive while
/// the passes run (the optimizer step's moment weighed against it: settle_step_moment).
MemoryBreakdown stage_memory(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                             double in_flight);
MemoryBreakdown stage_memory(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                             double in_flight, const LayerMemory& lm);
/// The same while the passes run, before the optimizer step is weighed: further activations may still be
/// added (add_activations), then settle_step_moment() gives the peak.
MemoryBreakdown stage_memory_in_passes(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                                       double in_flight);
MemoryBreakdown stage_memory_in_passes(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                                       double in_flight, const LayerMemory& lm);
/// What each further micro-batch in flight adds to the stage's stored activations (before the allocator's
/// share): stage_memory_in_passes(in_flight) = stage_memory_in_passes(0) with add_activations(in_flight × this,
/// fragmentation).
double stage_activation_bytes_per_micro_batch(const Stage& s, const LayerMemory& lm);
/// The layers of a stage full recomputation replays: every one (uniform), the first recompute_layers of
/// each of the rank's chunks (block), none without full recomputation.
int64_t recomputed_layers(const Layout& l, const Stage& s);
/// The share of a stage's layers whose forward is replayed in the backward: recomputed_layers / layers
/// under full recomputation (below 1 only for the block method), else 1 (selective replays its modules
/// in every layer; none replays nothing, its recompute times being zero).
double replayed_share(const Layout& l, const Stage& s);
/// The same over all the model's layers, the stages together.
double replayed_share(const Layout& l, const std::vector<Stage>& stages, int64_t layers);

}  // namespace shardplan
