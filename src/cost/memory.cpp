// Memory per GPU by category (docs/model.md §2). Sources: ZeRO (Rajbhandari et al. 2019) for the
// 2 + 2 + 12 bytes per parameter and their sharding; Megatron-LM theoretical_memory_usage.py for fp32
// gradients, embeddings on the end stages and logits; Korthikanti et al. 2022 Table 2 for activations,
// re-derived per tensor so GQA, MLA, SwiGLU, flash attention, MoE and CP are covered.
#include "shardplan/memory.h"

#include <algorithm>

#include "shardplan/hardware.h"
#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan {

namespace {
constexpr double kWeightBytes = 2.0;     // bf16/fp16 working weights
constexpr double kOptimizerBytes = 12.0; // fp32 master + Adam m + v
constexpr double kMasterBytes = 4.0;     // the fp32 master, of kOptimizerBytes
constexpr double kElem = 2.0;            // bf16 activations

double grad_bytes(GradDtype g) { return g == GradDtype::fp32 ? 4.0 : 2.0; }

// A low-precision copy of a tensor for a GEMM, with its scales: FP8 1 B; MXFP8 1 B + one e8m0 scale per
// 32; NVFP4 4 bits + one e4m3 scale per 16 (Transformer Engine's quantized tensors).
double quantized_bytes(Precision p) {
    switch (p) {
        case Precision::fp8: return 1.0;
        case Precision::mxfp8: return 1.0 + 1.0 / 32.0;
        case Precision::nvfp4: return 0.5 + 1.0 / 16.0;
        default: return kElem;
    }
}

// Transformer Engine caches each weight's quantized copy between the micro-batches of a step, row-wise for
// the forward and column-wise (its transpose) for the backward's data gradient. Block-scaled formats
// always need both (the scales run along different axes); per-tensor FP8 needs the transpose only where
// the tensor cores take FP8 operands in TN layout alone (Hopper, CDNA), not on Blackwell.
double weight_copy_bytes(Precision p, const std::string& generation) {
    if (p == Precision::bf16 || p == Precision::fp16) return 0.0;
    const bool transpose = p != Precision::fp8 || generation != "blackwell";
    return quantized_bytes(p) * (transpose ? 2.0 : 1.0);
}

struct ActParts {
    double kept = 0;          // stored across forward → backward with the chosen recomputation
    double full = 0;          // stored with no recomputation
    double working = 0;       // gradients alive while the layer's larger block (attention or MLP) runs backward
};

ActParts layer_activations(const ModelSpec& m, const Layout& l, bool moe_layer) {
    const double tp = static_cast<double>(l.tp);
    const double T = static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len) / static_cast<double>(l.cp);
    const double h = static_cast<double>(m.hidden);
    const double sp = (l.sequence_parallel && l.tp > 1) ? tp : 1.0;
    const double qw = static_cast<double>(q_width(m)), kw = static_cast<double>(k_width(m)),
                 vw = static_cast<double>(v_width(m));
    const double a_local = static_cast<double>(m.heads) / tp;
    const double gated = gated_mlp(m) ? 2.0 : 1.0;
    const bool mla = m.attention == AttentionKind::mla && m.mla;
    // A GEMM's input kept only for that GEMM's weight gradient is kept as the quantized copy the forward
    // made (Transformer Engine's Linear/LayerNormLinear save it instead of the bf16 tensor).
    const double gin = is_fp8(l.precision) || l.precision == Precision::nvfp4 ? quantized_bytes(l.precision) : kElem;
    // Each tensor a layer stores for its backward, by the module that would recompute it
    // (Korthikanti et al. 2022 §4.1, re-derived for GQA/MLA, SwiGLU, flash attention and MoE; docs/model.md §2.2).
    double full = 0, dropped = 0, dispatch = 0;
    auto keep = [&](double bytes, bool recomputed) {
        full += bytes;
        if (recomputed) dropped += bytes;
    };
    const bool rc_core = recomputes(l, RecomputeModule::core_attn);
    // every_second_gemm: torchtitan's op-level policy keeps its save list's outputs (matmuls, attention,
    // reduce-scatters) except every second matmul of a layer's (torchtitan parallelize.py, _custom_policy);
    // replayed are K, the output projection and a gated MLP's up projection, and all that is rebuilt from
    // them. Modelled for dense attention and MLPs; a MoE layer's experts keep Megatron's accounting.
    const bool alt = recomputes(l, RecomputeModule::every_second_gemm) && !mla;
    // The two norms' inputs: the layer input stays; the residual after attention is rebuilt when the
    // output projection is replayed. Their outputs feed the QKV and first MLP GEMMs, which keep them
    // unless the norms are replayed.
    keep(kElem * T * h / sp, false);
    keep(kElem * T * h / sp, alt);
    // Without the backward's re-gather, the QKV GEMM and a dense layer's first MLP GEMM keep their inputs
    // gathered to the full sequence (layout.h: tp_recompute_allgather).
    const double gathered = l.tp_recompute_allgather ? 1.0 : sp;
    keep(gin * T * h * (gathered + (moe_layer ? 1.0 : gathered)) / sp, recomputes(l, RecomputeModule::layernorm));
    if (l.dropout) keep(2.0 * T * h / sp, false);  // 1-byte masks after attention and after the MLP
    const double before_attention = full;
    // Attention: Q, K, V feed the core; its output O feeds the output projection.
    keep(kElem * T * (qw + vw) / tp, mla && recomputes(l, RecomputeModule::mla_up_proj));
    keep(kElem * T * kw / tp, alt || (mla && recomputes(l, RecomputeModule::mla_up_proj)));  // K: the second matmul
    // O: the output projection keeps it (its quantized copy under FP8); flash attention's backward needs
    // it in bf16 as well, a tensor of its own where the projection's is quantized, which the attention
    // core's replay makes again when core_attn is recomputed (the checkpointed region keeps only its
    // inputs). The unfused core's backward needs the probabilities and V, not O.
    const double o_elems = T * (mla ? vw : qw) / tp;
    keep(gin * o_elems, false);
    if (l.attention_kernel != AttentionKernel::unfused && gin != kElem) keep(kElem * o_elems, rc_core);
    if (mla)  // the compressed q and kv latents feed the up-projections (replicated over tp)
        keep(gin * T * static_cast<double>(m.mla->q_lora_rank + m.mla->kv_lora_rank + m.mla->qk_rope_head_dim), false);
    // Sandwich norms (Gemma 2/3) normalise the attention's and the MLP's outputs before each residual
    // add and keep those outputs as their inputs; the attention's is rebuilt when the output projection
    // is replayed.
    if (m.sandwich_norms) keep(kElem * T * h / sp, alt);
    if (l.attention_kernel != AttentionKernel::unfused) {
        keep(4.0 * T * a_local, rc_core);  // fp32 log-sum-exp per head and token
    } else {
        // Unfused: the softmax of the scores (2 B per score, T × s per head), and with dropout its 1-byte
        // mask and 2-byte output: Korthikanti's 5·a·s²·b (2·a·s²·b without dropout).
        const double scores = T * static_cast<double>(l.seq_len) * a_local;
        keep(scores * (l.dropout ? 5.0 : 2.0), rc_core);
    }
    // MLP: the first GEMM's output(s) (gate and up for SwiGLU) and the activation's output feeding the
    // second GEMM.
    // Eager gated MLPs (`act(gate) * up` as two autograd nodes) also keep the activation's output for
    // the product's backward; a fused SwiGLU kernel recomputes it from gate (Megatron's bias_swiglu).
    const bool eager_glu = l.kernels == Kernels::eager && gated_mlp(m);
    const double before_mlp = full;
    auto mlp = [&](double tokens, double ffn_local, double extra_in, bool whole, bool act, bool second) {
        keep(kElem * tokens * ffn_local + extra_in, whole);
        if (gated > 1.0) keep(kElem * tokens * ffn_local, whole || second);  // up: replayed with every second GEMM
        keep(gin * tokens * ffn_local, whole || act);
        if (eager_glu) keep(kElem * tokens * ffn_local, whole || act);
    };
    if (moe_layer && m.moe) {
        const MoeSpec& e = *m.moe;
        const double etp = static_cast<double>(effective_etp(l));
        const double fe = static_cast<double>(e.expert_ffn_hidden);
        const bool rc_moe = recomputes(l, RecomputeModule::moe);
        keep(4.0 * T * static_cast<double>(e.experts) / sp, rc_moe);  // router probabilities (fp32)
        if (e.shared_experts > 0)
            mlp(T, fe * static_cast<double>(e.shared_experts) / tp, 0, rc_moe || recomputes(l, RecomputeModule::shared_experts),
                recomputes(l, RecomputeModule::mlp_act), false);
        const double assign = routed_assignments(l, e.top_k, T);  // routed tokens on the busiest rank
        mlp(assign, fe / etp, gin * assign * h, rc_moe, recomputes(l, RecomputeModule::moe_act), false);  // + permuted inputs
        // With EP the dispatch and combine all-to-alls run between a send and a receive buffer of the routed
        // tokens (Megatron-Core's MoEAlltoAllTokenDispatcher: permute, all-to-all, sort by expert), and the
        // backward sends their gradients the same way: two bf16 copies of them while the block runs.
        if (l.ep > 1) dispatch = 2.0 * kElem * assign * h;
    } else {
        mlp(T, static_cast<double>(m.ffn_hidden) / tp, 0, recomputes(l, RecomputeModule::mlp),
            recomputes(l, RecomputeModule::mlp_act), alt);
        // What the policy saves that autograd would not keep: the down projection's output (the seventh
        // matmul, a full-sequence partial sum under TP) and, under sequence parallelism, the outputs of
        // the two reduce-scatters.
        if (alt && gated > 1.0) keep(kElem * T * h, false);
        if (alt && sp > 1.0) keep(2.0 * kElem * T * h / sp, false);
    }
    if (m.sandwich_norms) keep(kElem * T * h / sp, false);
    ActParts parts;
    parts.full = full;
    // A block's backward makes the gradient of each tensor it kept, about as many bytes, before freeing
    // what it no longer needs: the larger block's share is the working set of one layer's backward.
    // With CP the ring attention's backward double-buffers the K/V chunk it passes on and the dK/dV it
    // returns (TransformerEngine's AttnFuncWithCPAndKVP2P: two p2p buffers each).
    const double ring = l.cp > 1 ? 2.0 * 2.0 * kElem * T * (kw + vw) / tp : 0.0;
    parts.working = std::max(before_mlp - before_attention + ring, full - before_mlp + dispatch);
    switch (l.recompute) {
        case Recompute::none: parts.kept = full; break;
        case Recompute::selective: parts.kept = full - dropped; break;
        // Full: only the layer input survives the forward (Korthikanti Table 2: 2·s·b·h, ÷ tp with SP).
        case Recompute::full: parts.kept = kElem * T * h / sp; break;
    }
    return parts;
}

// Final norm input, LM-head input and the fp32 logits the loss keeps for its backward
// (Megatron theoretical_memory_usage.py: 4·s·b·h·(1 + V/h)/t; fused cross-entropy frees the bf16 copy).
double head_activations(const ModelSpec& m, const Layout& l) {
    const double tp = static_cast<double>(l.tp);
    const double T = static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len) / static_cast<double>(l.cp);
    const double sp = (l.sequence_parallel && l.tp > 1) ? tp : 1.0;
    const double gathered = l.tp_recompute_allgather ? 1.0 : sp;  // the LM head's input, as a layer's GEMMs keep theirs
    return (1.0 + gathered) * kElem * T * static_cast<double>(m.hidden) / sp + 4.0 * T * static_cast<double>(m.vocab) / tp;
}

}  // namespace

LayerMemory layer_memory(const ModelSpec& m, const Layout& l) {
    LayerMemory lm;
    lm.dense = layer_params(m, false);
    const ActParts d = layer_activations(m, l, false);
    lm.act_dense = d.kept;
    lm.act_full_dense = d.full;
    lm.grad_dense = d.working;
    if (m.moe) {
        lm.moe = layer_params(m, true);
        const ActParts e = layer_activations(m, l, true);
        lm.act_moe = e.kept;
        lm.act_full_moe = e.full;
        lm.grad_moe = e.working;
    }
    lm.act_head = head_activations(m, l);
    if (l.recompute == Recompute::full) {
        lm.recompute_layers = l.recompute_layers;
        if (l.recompute_method == RecomputeMethod::block) lm.recompute_block = l.recompute_layers * rank_chunks(l);
    }
    return lm;
}

StageParams stage_params(const ModelSpec& m, const Layout& l, const Stage& s) {
    return stage_params(m, l, s, layer_memory(m, l));
}

StageParams layer_params_on_gpu(const LayerParams& x, const Layout& l) {
    StageParams p;
    p.dense = static_cast<double>(x.attn + x.mlp) / static_cast<double>(l.tp) + static_cast<double>(x.router + x.replicated);
    p.expert = static_cast<double>(x.experts) / static_cast<double>(l.ep * effective_etp(l));
    return p;
}

// What ZeRO shards of `x`: the parts whose data-parallel group holds more than one rank (a routed expert
// whose EP covers dp·cp is whole on its GPU, never gathered or reduce-scattered).
static double zero_sharded(const StageParams& x, const Layout& l) {
    return (zero_shards_dense(l) ? x.dense : 0.0) + (zero_shards_experts(l) ? x.expert : 0.0);
}

StageParams stage_params(const ModelSpec& m, const Layout& l, const Stage& s, const LayerMemory& lm) {
    StageParams p;
    const int64_t n_dense = s.layers - s.moe_layers;
    const StageParams dense = layer_params_on_gpu(lm.dense, l), moe = layer_params_on_gpu(lm.moe, l);
    p.dense = static_cast<double>(n_dense) * dense.dense;
    p.largest_layer = n_dense > 0 ? zero_sharded(dense, l) : 0;
    if (s.moe_layers > 0) {
        p.dense += static_cast<double>(s.moe_layers) * moe.dense;
        p.expert = static_cast<double>(s.moe_layers) * moe.expert;
        p.largest_layer = std::max(p.largest_layer, zero_sharded(moe, l));
    }
    const double vh = static_cast<double>(m.vocab * m.hidden) / static_cast<double>(l.tp);
    if (s.first) p.embedding += vh;
    // The last stage holds the output layer; with tied embeddings on PP > 1 it keeps its own copy.
    if (s.last && (!m.tied_embeddings || !s.first)) p.embedding += vh;
    p.dense += p.embedding;
    if (s.last) p.dense += static_cast<double>(head_params(m) - (m.tied_embeddings ? 0 : m.vocab * m.hidden));
    return p;
}

double layer_activation_bytes(const ModelSpec& m, const Layout& l, bool moe_layer) {
    return layer_activations(m, l, moe_layer).kept;
}

double layer_activation_bytes_full(const ModelSpec& m, const Layout& l, bool moe_layer) {
    return layer_activations(m, l, moe_layer).full;
}

int64_t recomputed_layers(const Layout& l, const Stage& s) {
    if (l.recompute != Recompute::full) return 0;
    if (l.recompute_method == RecomputeMethod::uniform) return s.layers;
    return std::min(s.layers, l.recompute_layers * rank_chunks(l));
}

double replayed_share(const Layout& l, const Stage& s) {
    if (l.recompute != Recompute::full || s.layers <= 0) return 1.0;
    return static_cast<double>(recomputed_layers(l, s)) / static_cast<double>(s.layers);
}

double replayed_share(const Layout& l, const std::vector<Stage>& stages, int64_t layers) {
    if (l.recompute != Recompute::full || stages.empty() || layers <= 0) return 1.0;
    double replayed = 0;
    for (const Stage& s : stages) replayed += static_cast<double>(recomputed_layers(l, s));
    return replayed / static_cast<double>(layers);
}

double stage_activation_bytes_per_micro_batch(const Stage& s, const LayerMemory& lm) {
    const double nd = static_cast<double>(s.layers - s.moe_layers), ne = static_cast<double>(s.moe_layers);
    const double head = s.last ? lm.act_head : 0.0;
    if (lm.recompute_layers == 0) return nd * lm.act_dense + ne * lm.act_moe + head;
    // Full recomputation: a checkpointed layer keeps its input (act_dense = act_moe then: 2·T·h/sp); block
    // keeps every activation of the layers it does not recompute (in the stage's dense/MoE mix); uniform
    // keeps one input per group of recompute_layers.
    const int64_t block = lm.recompute_block > 0 ? std::min(s.layers, lm.recompute_block) : s.layers;
    const double rest = static_cast<double>(s.layers - block);
    const double full_mix = s.layers > 0 ? (nd * lm.act_full_dense + ne * lm.act_full_moe) / (nd + ne) : 0.0;
    const double inputs = lm.recompute_block > 0 ? static_cast<double>(block)
                                                 : static_cast<double>((s.layers + lm.recompute_layers - 1) / lm.recompute_layers);
    return inputs * lm.act_dense + rest * full_mix + head;
}

MemoryBreakdown stage_memory(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                             double in_flight) {
    return stage_memory(m, c, l, s, in_flight, layer_memory(m, l));
}

MemoryBreakdown stage_memory(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                             double in_flight, const LayerMemory& lm) {
    MemoryBreakdown mem = stage_memory_in_passes(m, c, l, s, in_flight, lm);
    mem.settle_step_moment();
    return mem;
}

MemoryBreakdown stage_memory_in_passes(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                                       double in_flight) {
    return stage_memory_in_passes(m, c, l, s, in_flight, layer_memory(m, l));
}

MemoryBreakdown stage_memory_in_passes(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const Stage& s,
                                       double in_flight, const LayerMemory& lm) {
    const StageParams p = stage_params(m, l, s, lm);
    const double T = static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len) / static_cast<double>(l.cp);
    // ZeRO shards over the data-parallel group: dp·cp for dense parameters (CP ranks hold the same
    // weights; Megatron's dp_cp group), the expert-data-parallel group for routed experts.
    const double dense_shard = static_cast<double>(l.dp * l.cp);
    const double expert_shard = static_cast<double>(expert_dp(l));
    auto sharded = [&](int stage_needed) {
        return l.zero >= stage_needed ? p.dense / dense_shard + p.expert / expert_shard : p.total();
    };
    // PyTorch FSDP's mixed precision (fp32_shards): the shard is the fp32 parameter itself, the optimizer's
    // master, gathered in 16 bits for each use, and its gradient shard takes that fp32: 4 + 4 + 8 bytes a
    // parameter, where DeepSpeed's ZeRO-3 keeps a 16-bit shard beside an fp32 master (2 + 2 or 4 + 12).
    const bool master_shards = l.fp32_shards && l.zero >= 3;
    MemoryBreakdown mem;
    mem.weights_bytes = (master_shards ? kMasterBytes : kWeightBytes) * sharded(3);
    mem.grads_bytes = grad_bytes(master_shards ? GradDtype::fp32 : l.grad_dtype) * sharded(2);
    // PyTorch DistributedDataParallel (gradient_as_bucket_view off, its default) reduces from buckets that
    // hold a second copy of every gradient in the parameters' dtype, allocated for the run (torch DDP
    // docs; nanotron wraps its model so). A framework's own contiguous buffer (Megatron, DeepSpeed's
    // ZeRO-2/3, FSDP) is the gradients themselves.
    if (l.grad_buckets == GradBuckets::copies && l.dp * l.cp > 1 && l.zero < 3) mem.grads_bytes += kWeightBytes * p.total();
    // DeepSpeed's BF16 optimizer (ZeRO-0/1) adds each bf16 gradient to a flat fp32 buffer of the whole
    // stage after every backward and sets the bf16 ones to None only when the next backward begins
    // (runtime/bf16_optimizer.py: backward, update_hp_grads, clear_lp_grads): both stay allocated, at any
    // dp. Under ZeRO-2 its other optimizer reduces and partitions them as they come.
    if (l.grad_buckets == GradBuckets::low_precision && l.zero < 2) mem.grads_bytes += kWeightBytes * p.total();
    mem.optimizer_bytes = (master_shards ? kOptimizerBytes - kMasterBytes : kOptimizerBytes) * sharded(1);  // no second master
    // An optimizer keeping fp32 master weights steps on fp32 gradients: from 16-bit ones it first makes an
    // fp32 copy of those it owns (Megatron-Core's DistributedOptimizer and Float16OptimizerWithFloat16Params,
    // `_copy_model_grads_to_main_grads`: `.float()` of each owned gradient shard, released by the next
    // step's zero_grad; DeepSpeed ZeRO-1/2 likewise casts each gradient partition to the fp32 one). With
    // fp32 gradients `.float()` returns the tensor itself: nothing more.
    if (l.grad_dtype != GradDtype::fp32 && !master_shards) mem.step_bytes = 4.0 * sharded(1);

    const int64_t n_dense = s.layers - s.moe_layers;
    double act = in_flight * stage_activation_bytes_per_micro_batch(s, lm);
    if (l.recompute == Recompute::full && recomputed_layers(l, s) > 0) {
        // While a checkpointed group's backward runs, its recomputed activations are all alive: one layer,
        // or a uniform group of recompute_layers.
        const int64_t group = lm.recompute_block > 0 ? 1 : std::min(s.layers, lm.recompute_layers);
        act += static_cast<double>(group) *
               std::max(n_dense > 0 ? lm.act_full_dense : 0.0, s.moe_layers > 0 ? lm.act_full_moe : 0.0);
    }
    // The caching allocator keeps what activation churn frees for reuse: its share of them.
    mem.add_activations(act, allocator_cache_share(c, l));
    // Outside the allocator: CUDA context, NCCL communicator buffers, cuBLAS/cuDNN workspaces.
    mem.runtime_bytes = c.gpu.eff.reserve_bytes;

    double other = 0, pass = 0;  // pass: the part alive only while the passes run
    // Low-precision weight copies (FP8 transpose caches) exist for the weights this GPU holds; the
    // embeddings stay bf16. Under ZeRO-3 only the shard is held between uses.
    const double held_here = sharded(3) - (l.zero >= 3 ? p.embedding / dense_shard : p.embedding);
    double copies = weight_copy_bytes(l.precision, c.gpu.generation) * held_here;
    if (keeps_fp8_params(l) && !master_shards) {  // an fp32 shard is cast for each gather, not replaced
        // The parameter is its row-wise 8-bit copy (Transformer Engine's Float8Tensor / MXFP8Tensor under
        // fp8_model_init): the 16-bit weights go, and that copy counts as the weights; what else is cached
        // (the transpose, the column-wise copy) stays with the buffers.
        const double row_wise = quantized_bytes(l.precision) * held_here;
        mem.weights_bytes += row_wise - kWeightBytes * held_here;
        copies -= row_wise;
    }
    other += copies;
    if (l.zero >= 3 && l.pp > 1) {
        // FSDP under pipeline parallelism keeps the stage's parameters gathered across its micro-batches
        // and accumulates unsharded gradients (torchtitan: reshard_after_forward off with PP).
        // Only what is sharded is gathered: experts whose EP covers dp·cp are held whole already.
        const double gathered = zero_sharded(p, l);
        pass += gathered_weight_bytes(l, gathered, zero_shards_dense(l) ? p.embedding : 0.0) +
                gathered * grad_bytes(l.grad_dtype);
    } else if (l.zero >= 3) {
        // FSDP keeps the current and the prefetched layer gathered, plus one layer of unsharded gradients.
        pass += 2.0 * gathered_weight_bytes(l, p.largest_layer) + p.largest_layer * grad_bytes(l.grad_dtype);
    } else if (reduces_grads_per_micro_batch(l)) {
        // ZeRO-2's backward produces each layer's gradients whole before it reduce-scatters them into
        // the shard it keeps: one layer of unsharded gradients.
        pass += p.largest_layer * grad_bytes(l.grad_dtype);
    }
    // While the passes run the peak comes at one of two moments, whichever holds more beside the
    // micro-batches in flight: the loss of a micro-batch on the stage with the LM head, or a layer's
    // backward after the warm-up. (The optimizer step, a third, is weighed once the activations in flight
    // are known: MemoryBreakdown::settle_step_moment.)
    double loss = 0;
    if (s.last) {
        // The loss: Megatron's vocab-parallel cross-entropy turns the bf16 logits into the fp32 copy it
        // keeps (counted in the activations); for that moment both exist, and again in the backward when
        // the fp32 gradient is cast back for the LM head (megatron/core/tensor_parallel/cross_entropy.py).
        // Beyond the 4 bytes a logit kept (head_activations), by the loss's kernel (enums.h CrossEntropy):
        // fused 2 (the bf16 logits); sharded 2 + 4 (nanotron's fp32 copy and shifted logits beside them);
        // upcast 4 + 4 in log-softmax's backward (the incoming and outgoing fp32 gradients, the bf16
        // logits deleted: torchtitan), more than its forward's 2 + 4.
        const double logits = T * static_cast<double>(m.vocab) / static_cast<double>(l.tp);
        switch (l.cross_entropy) {
            case CrossEntropy::fused: loss = kElem * logits; break;
            case CrossEntropy::sharded: loss = (kElem + 4.0) * logits; break;
            case CrossEntropy::upcast: loss = 8.0 * logits; break;
        }
    }
    // A layer's backward: the gradients of what its larger block (attention or MLP) kept, alive together
    // for that block (autograd frees each input's gradient once the block before it has consumed it).
    const double working = std::max(n_dense > 0 ? lm.grad_dense : 0.0, s.moe_layers > 0 ? lm.grad_moe : 0.0);
    mem.peak = loss >= working && s.last ? PeakMoment::loss : PeakMoment::backward;
    pass += std::max(loss, working);
    if (l.tp > 1 && l.sequence_parallel && l.tp_recompute_allgather) {
        // Sequence parallelism gathers each column-parallel GEMM's input to the full sequence into a
        // buffer the framework keeps between layers (Megatron-LM's global memory buffer, nanotron's
        // MemoryBuffer): one for the forward's all-gather, one for the backward's re-gather. Without the
        // re-gather each gathered input is a tensor of its own, kept with the activations.
        other += 2.0 * kElem * T * static_cast<double>(m.hidden);
    }
    if (l.pp > 1) {  // send and receive buffers of the stage boundary activations
        const double boundary = kElem * T * static_cast<double>(m.hidden) /
                                ((l.sequence_parallel && l.tp > 1) ? static_cast<double>(l.tp) : 1.0);
        pass += 2.0 * boundary;
    }
    mem.pass_bytes = pass;
    mem.other_bytes = other + pass;
    return mem;
}

double gathered_weight_bytes(const Layout& l, double params, double embedding) {
    const double weight = keeps_fp8_params(l) && l.precision == Precision::fp8 ? 1.0 : kWeightBytes;
    return (params - embedding) * weight + embedding * kWeightBytes;
}

double allocator_cache_share(const ClusterSpec& c, const Layout& l) {
    return l.allocator == Allocator::expandable ? 0.0 : c.gpu.eff.fragmentation;
}

}  // namespace shardplan
