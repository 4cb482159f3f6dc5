/// Arithmetic of one transformer layer on one GPU for one micro-batch: the GEMMs it runs (with their
/// shapes after tensor/expert parallel splitting), the flash-attention core, the memory-bound
/// element-wise kernels, and the time each takes (docs/model.md §3, §4).
///
/// GEMM time = 2·M·N·K / (peak(precision) · η), η = η_max · d/(d + d_half) with d the smallest of M,
/// N, K (small GEMMs, such as per-expert GEMMs with few tokens, run far below peak). Attention runs
/// at the 16-bit peak with its own efficiency; element-wise kernels are HBM-bound.
///
///   LayerWork w = layer_work(model, cluster, layout, /*moe=*/false);
///   w.fwd_s; w.bwd_s; w.model_flops;        // seconds on this GPU, FLOPs of fwd + bwd
#pragma once
#include <cstdint>

#include "shardplan/enums.h"

namespace shardplan {

struct ModelSpec;
struct ClusterSpec;
struct Layout;
struct Efficiency;

/// One layer (or the embedding / LM-head end of a stage), one micro-batch, one GPU.
struct LayerWork {
    double model_flops = 0;      // forward + backward model FLOPs (3 × forward; causal attention)
    double recompute_flops = 0;  // extra forward FLOPs recomputation adds (counted by HFU only)
    double fwd_s = 0;            // forward time
    double bwd_s = 0;            // backward time (input and weight gradients)
    double wgrad_s = 0;          // the weight-gradient share of bwd_s (zero-bubble schedules defer it)
    double recompute_s = 0;      // time of the recomputed forward part, paid during the backward
    double attn_fwd_s = 0;       // attention core's share of the forward (CP hides its ring traffic under it)
    double attn_bwd_s = 0;       // and of the backward (flash: 2.9 × the forward's; unfused: 2 ×)
    double gemm_fwd_s = 0;       // the linear layers' GEMMs' share of the forward (TP overlap hides its traffic under them)
    double grad_accum_s = 0;     // part of bwd_s and wgrad_s: adding the gradients into the accumulation buffer
    double unaligned_fwd_s = 0;  // the forward's GEMMs whose operand rows are not whole 16-byte vectors (gemm_aligned)
    double unaligned_width = 0;     // the first such N or K, and the multiple of it that would be whole vectors
    double unaligned_multiple = 0;  // (8 in 16-bit, 16 in fp8); 0 when every GEMM is aligned
};

/// η of one GEMM of shape M×N×K in this precision: 1/η = (gemm_half_dim/d + 1/u) / the precision's fitted
/// peak share (times gemm_unaligned where !gemm_aligned), d its smallest dimension and u the tile and wave
/// quantization of its M×N output on `sms` streaming multiprocessors (0: none, u = 1, leaving the roll-off
/// d/(d + gemm_half_dim)); `groups` GEMMs of that shape running together (a rank's experts) share their waves.
double gemm_efficiency(const Efficiency& e, Precision p, double M, double N, double K, int64_t sms = 0,
                       double groups = 1);
/// Whether an M×N×K GEMM's operand rows are whole 16-byte vectors (N and K multiples of 8 in 16-bit, 16 in
/// fp8), as Tensor Core kernels load them; gemm_efficiency takes gemm_unaligned of an aligned GEMM's η where not.
bool gemm_aligned(Precision p, double N, double K);
/// The share of the SMs' tile slots `groups` M×N outputs fill together: 128×128 output tiles,
/// ⌈groups · tiles / sms⌉ waves (NVIDIA, "Matrix Multiplication Background User's Guide", tile and wave
/// quantization). 1 with sms 0.
double tile_utilization(double M, double N, int64_t sms, double groups = 1);
/// An attention kernel's speed at `head_dim` relative to its speed at 128, where `attn` is fitted
/// (FlashAttention-3 paper, Fig. 5, causal: FlashAttention-2 and cuDNN at 64, 128 and 256; linear in log2 between,
/// the nearest outside). Flash and unfused attention take FlashAttention-2's, fused cuDNN's. layer_work
/// applies it on Hopper and Blackwell (docs/model.md §4).
double attention_head_dim_factor(AttentionKernel kernel, double head_dim);

/// The HBM pass after each micro-batch's backward that adds `params` 16-bit gradients into the
/// accumulation buffer (read the gradient, read and write the buffer: 2 + 2 × 4 bytes a parameter into
/// fp32, 2 + 2 × 2 into 16-bit), where the framework runs it as its own kernel (layout.grad_accumulation
/// eager: nanotron's FP32GradientAccumulator, PyTorch's AccumulateGrad, DeepSpeed's BF16 optimizer); 0
/// where the weight-gradient GEMM accumulates into the buffer itself (fused: Megatron's
/// --gradient-accumulation-fusion).
double grad_accum_s(double params, const ClusterSpec& c, const Layout& l);
/// The least time one layer's forward and backward of a micro-batch take, whatever its kernels, where the
/// layout's pipeline_pacing says something else paces it: tp × layer_overhead_s (an eager layer's launch
/// cost) under nanotron's pacing with the pipeline groups across scale-up domains, else 0 (docs/model.md §4).
double paced_layer_s(const ClusterSpec& c, const Layout& l);
/// Of the `held` parameters of a layer on this GPU, those whose gradients each micro-batch accumulates:
/// all of them, or their shard over `dp_shards` where each micro-batch's gradients are reduce-scattered
/// (ZeRO-2, and ZeRO-3 without PP: reduces_grads_per_micro_batch).
double accumulated_params(double held, double dp_shards, const Layout& l);

LayerWork layer_work(const ModelSpec& m, const ClusterSpec& c, const Layout& l, bool moe_layer);
/// LM head + loss on the last stage (and nothing for the embedding lookup, which is a gather).
LayerWork head_work(const ModelSpec& m, const ClusterSpec& c, const Layout& l);

/// Model FLOPs per token of training (forward + backward, no recomputation): 6 × the matmul
/// parameters a token touches (incl. the LM head) + causal attention (PaLM App. B, halved for causality).
double model_flops_per_token(const ModelSpec& m, int64_t seq_len);

/// Optimizer step time: Adam reads and writes fp32 master, both moments, the gradient and the
/// 16-bit copy of each parameter this GPU owns; HBM-bound.
double optimizer_step_s(double params_owned, GradDtype g, const ClusterSpec& c);

}  // namespace shardplan
