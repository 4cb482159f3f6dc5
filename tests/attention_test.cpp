// The attention core, hand-checked: which kernel runs it (flash, fused, unfused), at which head dimension,
// on which GPU (docs/model.md §4).
#include <gtest/gtest.h>

#include "shardplan/compute.h"
#include "shardplan/layout.h"
#include "shardplan/presets.h"

using namespace shardplan;

// Attention by kernel class: a fused Hopper-native kernel (cuDNN, FlashAttention-3) runs the same FLOPs
// attn_fused = 1.6 × faster than FlashAttention-2 on H100 (FlashAttention-3 paper), the same on A100;
// nothing else in the layer changes. Llama 3 8B, 8192 tokens: attention forward at η = attn · s/(s + half)
// (· 1.6 fused), so the ratio of the two attention times is exactly 1.6 on Hopper and 1 on Ampere. (With
// the host's launch cost at 0: the part of it that shows depends on the GPU time, below.)
TEST(Compute, FusedAttentionRunsAttnFusedTimesFlashAttentionTwo) {
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.seq_len = 8192;
    for (const char* cl : {"dgx-h100", "dgx-a100"}) {
        ClusterSpec c = preset_cluster(cl);
        c.gpu.eff.layer_overhead_s = 0;
        l.attention_kernel = AttentionKernel::flash;
        const LayerWork flash = layer_work(m, c, l, false);
        l.attention_kernel = AttentionKernel::fused;
        const LayerWork fused = layer_work(m, c, l, false);
        const double k = std::string(cl) == "dgx-h100" ? 1.6 : 1.0;
        EXPECT_DOUBLE_EQ(c.gpu.eff.attn_fused, k) << cl;
        EXPECT_NEAR(flash.attn_fwd_s / fused.attn_fwd_s, k, 1e-12) << cl;
        EXPECT_NEAR(flash.fwd_s - fused.fwd_s, flash.attn_fwd_s - fused.attn_fwd_s, 1e-15) << cl;
        EXPECT_DOUBLE_EQ(flash.model_flops, fused.model_flops) << cl;
    }
    // Who runs which (framework_defaults): Transformer Engine's cuDNN kernel under Megatron-Core, NeMo and
    // the JAX frameworks; FlashAttention-2 under the PyTorch frameworks and unnamed ones; the unfused core
    // under Megatron-DeepSpeed (flash is opt-in there) and Megatron-LM before 2023 (no flash yet).
    EXPECT_EQ(framework_defaults("Megatron-Bridge / Megatron-Core (26.06 NeMo Container)").attention, AttentionKernel::fused);
    EXPECT_EQ(framework_defaults("MaxText (JAX)").attention, AttentionKernel::fused);
    EXPECT_EQ(framework_defaults("torchtitan (PyTorch FSDP2/DTensor)").attention, AttentionKernel::flash);
    EXPECT_EQ(framework_defaults("Megatron-DeepSpeed (microsoft)").attention, AttentionKernel::unfused);
    EXPECT_EQ(framework_defaults("DeepSpeed ZeRO-3 (Hugging Face Trainer)").attention, AttentionKernel::flash);
    EXPECT_EQ(framework_defaults("Megatron-LM (2021)").attention, AttentionKernel::unfused);
    EXPECT_EQ(framework_defaults("Megatron-LM 2022").attention, AttentionKernel::unfused);
    EXPECT_EQ(framework_defaults("Megatron-LM (2023)").attention, AttentionKernel::fused);
    EXPECT_EQ(framework_defaults("Megatron-LM").attention, AttentionKernel::fused);
    EXPECT_EQ(framework_defaults("Megatron-Core r0.2022").attention, AttentionKernel::fused);   // a version, not a year
    EXPECT_EQ(framework_defaults("NeMo 24.07 (Megatron-Core), 20221 steps").attention, AttentionKernel::fused);
    EXPECT_EQ(framework_defaults("HAI-LLM").attention, AttentionKernel::flash);
    EXPECT_EQ(framework_defaults("").attention, Layout{}.attention_kernel);
    // Megatron-Bridge's MoE configs overlap the expert all-to-alls on H100 (moe_a2a_overlap set), not on
    // B200/GB200 (left at its default, off); TP overlap is on for both.
    EXPECT_TRUE(framework_defaults("Megatron-Bridge", "hopper").ep_comm_overlap);
    EXPECT_FALSE(framework_defaults("Megatron-Bridge", "blackwell").ep_comm_overlap);
    EXPECT_TRUE(framework_defaults("Megatron-Bridge", "blackwell").tp_comm_overlap);
    // ... but for NVFP4, where its performance configs turn it off (tp_comm_overlap = False if precision ==
    // "nvfp4"); a new precision takes the framework's default with it.
    EXPECT_FALSE(framework_defaults("Megatron-Bridge", "blackwell", Precision::nvfp4).tp_comm_overlap);
    EXPECT_TRUE(framework_defaults("Megatron-Bridge", "blackwell", Precision::mxfp8).tp_comm_overlap);
    EXPECT_TRUE(framework_defaults("NeMo", "blackwell", Precision::nvfp4).tp_comm_overlap);
    // DP overlap is opt-in in Megatron-LM's arguments and in DeepSpeed below ZeRO-3; the recipes and
    // PyTorch's DDP and FSDP overlap.
    for (const char* off : {"Megatron-LM", "Megatron-LM (2021)", "Megatron-LM (commit 23e00ed, 2026; Transformer Engine 2.11)",
                            "DeepSpeed", "Megatron-DeepSpeed (BigScience, 2022)"})
        EXPECT_FALSE(framework_defaults(off).dp_comm_overlap) << off;
    for (const char* on : {"", "Megatron-Core r0.8.0", "NeMo (Megatron-Core) per recipe", "Megatron-Bridge / Megatron-Core (26.04 NeMo Container)",
                           "NeMo Megatron-LM recipe", "torchtitan", "nanotron", "Composer / llm-foundry (PyTorch FSDP)", "MaxText (JAX)"})
        EXPECT_TRUE(framework_defaults(on).dp_comm_overlap) << on;
    // Gradients in fp32 where the framework reduces and accumulates them so by default: torchtitan always
    // (mixed_precision_reduce float32); Megatron-LM, Megatron-Core's own loop and DeepSpeed with bf16 or
    // fp8 compute (--accumulate-allreduce-grads-in-fp32, the BF16 optimizer), not with fp16; NeMo's and
    // Megatron-Bridge's performance recipes reduce in bf16, as does an unnamed framework.
    EXPECT_EQ(framework_defaults("torchtitan (PyTorch FSDP2/DTensor)").grad_dtype, GradDtype::fp32);
    EXPECT_EQ(framework_defaults("torchtitan", "", Precision::fp16).grad_dtype, GradDtype::fp32);
    EXPECT_EQ(framework_defaults("Megatron-LM").grad_dtype, GradDtype::fp32);
    EXPECT_EQ(framework_defaults("Megatron-Core + Transformer Engine", "blackwell", Precision::mxfp8).grad_dtype, GradDtype::fp32);
    EXPECT_EQ(framework_defaults("Megatron-LM (2021)", "ampere", Precision::fp16).grad_dtype, GradDtype::bf16);
    EXPECT_EQ(framework_defaults("Megatron-DeepSpeed (bigscience)").grad_dtype, GradDtype::fp32);
    EXPECT_EQ(framework_defaults("Megatron-DeepSpeed (microsoft)", "ampere", Precision::fp16).grad_dtype, GradDtype::bf16);
    EXPECT_EQ(framework_defaults("NeMo (Megatron-Core)").grad_dtype, GradDtype::bf16);
    EXPECT_EQ(framework_defaults("Megatron-Bridge / Megatron-Core (26.06 NeMo Container)").grad_dtype, GradDtype::bf16);
    EXPECT_EQ(framework_defaults("MosaicML llm-foundry").grad_dtype, GradDtype::bf16);
    EXPECT_EQ(framework_defaults("").grad_dtype, Layout{}.grad_dtype);
    // DeepEP is DeepSeek's own; everyone else dispatches with NCCL's all-to-all unless the layout says.
    EXPECT_EQ(framework_defaults("HAI-LLM").moe_dispatcher, Dispatcher::deepep);
    EXPECT_EQ(framework_defaults("Megatron-Bridge", "blackwell").moe_dispatcher, Dispatcher::alltoall);
    EXPECT_EQ(framework_defaults("").moe_dispatcher, Layout{}.moe_dispatcher);
    // Eager PyTorch ops, and gradients added to their buffers in a pass of their own: nanotron, torchtitan,
    // and llm-foundry, whose throughput sweep runs `composer train/train.py` on PyTorch 1.13 or 2.0.1 without
    // torch.compile; Megatron's fused kernels add into the main gradient inside the weight-gradient GEMM.
    for (const char* eager : {"Composer / llm-foundry (PyTorch FSDP)", "MosaicML llm-foundry", "torchtitan", "nanotron"}) {
        EXPECT_EQ(framework_defaults(eager).kernels, Kernels::eager) << eager;
        EXPECT_EQ(framework_defaults(eager).grad_accumulation, GradAccumulation::eager) << eager;
    }
    EXPECT_EQ(framework_defaults("NeMo (Megatron-Core)").kernels, Kernels::fused);
    EXPECT_EQ(framework_defaults("NeMo (Megatron-Core)").grad_accumulation, GradAccumulation::fused);
}

// The unfused core passes its scores through HBM between its GEMMs, which flash keeps on chip: b·a·s²/tp
// scores, read and written by the softmax (2 elements each) and by dropout with its mask (2.5 more),
// 2 bytes an element at hbm × the HBM bandwidth; backward twice that. Llama 3 8B at TP 2, seq 4096,
// micro-batch 1: 1 · 32/2 · 4096² = 268,435,456 scores; without dropout 2 · 2 · 268,435,456 =
// 1,073,741,824 bytes forward, with it 4.5 · 2 · 268,435,456 = 2,415,919,104. Its GEMMs cost flash's.
// An attention kernel's speed by head dimension (FlashAttention-3 paper, Fig. 5, H100 BF16 forward with the
// causal mask at 16k keys): FlashAttention-2 299 / 335 / 298 TFLOP/s at 64 / 128 / 256, cuDNN 388 / 539 / 509.
// At 96, log2 1.5 = 0.584963 of the way from 64 to 128: 0.892537 + 0.107463·0.584963 = 0.955399; cuDNN
// 0.719852 + 0.280148·0.584963 = 0.883728. At 160 (MLA's mean of 192 and 128), log2 1.25 = 0.321928 of the
// way to 256: 1 − 0.321928·(1 − 298/335) = 0.964444 for FlashAttention-2. Below 64 and above 256 the
// nearest value.
TEST(Compute, AttentionSpeedFollowsTheHeadDimension) {
    EXPECT_DOUBLE_EQ(attention_head_dim_factor(AttentionKernel::flash, 128), 1.0);
    EXPECT_DOUBLE_EQ(attention_head_dim_factor(AttentionKernel::fused, 128), 1.0);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::flash, 64), 299.0 / 335.0, 1e-12);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::fused, 64), 388.0 / 539.0, 1e-12);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::fused, 256), 509.0 / 539.0, 1e-12);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::flash, 96), 0.955399, 1e-6);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::fused, 96), 0.883728, 1e-6);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::flash, 160), 0.964444, 1e-6);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::unfused, 32), 299.0 / 335.0, 1e-12);
    EXPECT_NEAR(attention_head_dim_factor(AttentionKernel::flash, 512), 298.0 / 335.0, 1e-12);
    // In a layer: Llama 3 8B (head dim 128) against the same model with 64-dimensional heads (64 of them),
    // the same FLOPs: cuDNN's attention takes 539/388 times as long.
    ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpu.eff.layer_overhead_s = 0;  // no host time to stretch the passes
    Layout l;
    l.seq_len = 8192;
    l.attention_kernel = AttentionKernel::fused;
    const LayerWork d128 = layer_work(m, c, l, false);
    m.heads *= 2;
    m.kv_heads *= 2;
    m.head_dim /= 2;
    const LayerWork d64 = layer_work(m, c, l, false);
    EXPECT_NEAR(d64.attn_fwd_s / d128.attn_fwd_s, 539.0 / 388.0, 1e-9);
    // Measured on H100 only: on A100 the head dimension changes nothing (docs/model.md §4).
    ClusterSpec a = preset_cluster("dgx-a100");
    a.gpu.eff.layer_overhead_s = 0;
    const LayerWork a64 = layer_work(m, a, l, false);
    m = preset_model("llama3-8b");
    EXPECT_NEAR(a64.attn_fwd_s / layer_work(m, a, l, false).attn_fwd_s, 1.0, 1e-12);
}

// The unfused core (docs/model.md §4): its two products are batched GEMMs over the whole s × s square,
// one per head: Llama 3 8B at TP 2, 4096 tokens, 16 heads a GPU, Q·Kᵀ 4096 × 4096 × 128 and P·V
// 4096 × 128 × 4096, each 2 · 4096² · 128 · 16 = 68.7 GFLOP, at the GEMM efficiency of its shape (all 16
// filling the waves together); backward 2× (four GEMMs), flash's 2.9×. Between them the scores,
// 16 · 4096² = 268,435,456 elements of 2 bytes, pass through HBM: the softmax reads and writes each
// (2 elements: 1,073,741,824 B), dropout 2.5 more (2,415,919,104 B in all), backward twice.
TEST(Compute, UnfusedAttentionPassesItsScoresThroughHbm) {
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpu.eff.layer_overhead_s = 0;
    const double hbm = c.gpu.hbm_Bps * c.gpu.eff.hbm;
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.tp = 2;
    l.seq_len = 4096;
    l.attention_kernel = AttentionKernel::flash;
    const LayerWork flash = layer_work(m, c, l, false);
    l.attention_kernel = AttentionKernel::unfused;
    const LayerWork plain = layer_work(m, c, l, false);
    l.dropout = true;
    const LayerWork dropped = layer_work(m, c, l, false);
    const double gemm_flops = 2.0 * 4096.0 * 4096.0 * 128.0 * 16.0;
    auto gemm_s = [&](double M, double N, double K) {
        return gemm_flops / (c.gpu.peak_16_flops * gemm_efficiency(c.gpu.eff, Precision::bf16, M, N, K, c.gpu.sms, 16));
    };
    const double core = gemm_s(4096, 4096, 128) + gemm_s(4096, 128, 4096);
    EXPECT_NEAR(plain.attn_fwd_s, core, 1e-12);
    const double scores = 1'073'741'824.0 / hbm;
    EXPECT_NEAR(plain.fwd_s - flash.fwd_s, core - flash.attn_fwd_s + scores, 1e-12);
    EXPECT_NEAR(plain.bwd_s - flash.bwd_s, 2.0 * core - 2.9 * flash.attn_fwd_s + 2.0 * scores, 1e-12);
    EXPECT_NEAR(dropped.fwd_s - flash.fwd_s, core - flash.attn_fwd_s + 2'415'919'104.0 / hbm, 1e-12);
    EXPECT_DOUBLE_EQ(plain.model_flops, flash.model_flops);  // the model's FLOPs stay the causal count
    // The attention core's share of the backward, under which CP's ring hides: each kernel's own backward
    // (the host's launches cost nothing here, so no gaps stretch it), not one factor for both.
    EXPECT_NEAR(flash.attn_bwd_s, 2.9 * flash.attn_fwd_s, 1e-15);
    EXPECT_NEAR(plain.attn_bwd_s, 2.0 * core, 1e-15);
    // Megatron's selective default replays the core: its GEMMs and its scores' traffic.
    l.dropout = false;
    l.recompute = Recompute::selective;
    const LayerWork replayed = layer_work(m, c, l, false);
    l.attention_kernel = AttentionKernel::flash;
    const LayerWork flash_replayed = layer_work(m, c, l, false);
    EXPECT_NEAR(replayed.recompute_s - flash_replayed.recompute_s, core - flash.attn_fwd_s + scores, 1e-12);
}

// FlashAttention-2 on A100 runs at attn_gpu = 1.6 × H100's share of peak (docs/model.md §4): the same
// layer with the constant at 1 takes exactly 1.6 × the attention time; on H100 the constant is 1.
TEST(Compute, FlashAttentionOnA100ReadsAttnAtItsOwnShareOfPeak) {
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.seq_len = 8192;
    ClusterSpec a = preset_cluster("dgx-a100");
    a.gpu.eff.layer_overhead_s = 0;  // the host's share of a pass depends on the GPU time (above)
    ASSERT_DOUBLE_EQ(a.gpu.eff.attn_gpu, 1.6);
    EXPECT_DOUBLE_EQ(preset_cluster("dgx-h100").gpu.eff.attn_gpu, 1.0);
    const LayerWork own = layer_work(m, a, l, false);
    a.gpu.eff.attn_gpu = 1.0;
    EXPECT_NEAR(layer_work(m, a, l, false).attn_fwd_s / own.attn_fwd_s, 1.6, 1e-12);
}

// A sliding window (gpt-oss, Mistral 7B v0.1): row i of a windowed layer sees min(i, w) keys, so its causal
// products cover the work of a full causal layer over 2w − w(w − 1)/s keys. Llama 3 8B at s = 4096, w = 128,
// every layer windowed: 256 − 128·127/4096 = 252.03125. The forward's attention FLOPs per token fall by
// L · (s − 252.03125) · a·(d_qk + d_v) = 32 · 3843.96875 · 8192 = 1,007,673,344, a training step's (forward
// and backward) by 3 × that, 3,023,020,032. Flash's forward time is
// its FLOPs over attn · s/(s + 500) (attn_half_seq): windowed over full = (252.03125 + 500)/(4096 + 500)
// = 0.163627...; half the layers windowed, each layer takes the mean of the two. The unfused core computes
// the whole square and masks it: no faster, though the model FLOPs still count the window.
TEST(Compute, WindowedLayersAttendToTheirWindowOnly) {
    const ModelSpec full = preset_model("llama3-8b");
    ModelSpec windowed = full;
    windowed.sliding_window = 128;
    windowed.window_layers = full.layers;
    validate_model(windowed);
    EXPECT_NEAR(model_flops_per_token(full, 4096) - model_flops_per_token(windowed, 4096), 3'023'020'032.0, 1.0);
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpu.eff.layer_overhead_s = 0;
    Layout l;
    l.seq_len = 4096;
    const LayerWork f = layer_work(full, c, l, false), w = layer_work(windowed, c, l, false);
    EXPECT_NEAR(w.attn_fwd_s / f.attn_fwd_s, (252.03125 + 500.0) / (4096.0 + 500.0), 1e-12);
    ModelSpec half = windowed;
    half.window_layers = full.layers / 2;
    const LayerWork h = layer_work(half, c, l, false);
    EXPECT_NEAR(h.attn_fwd_s, 0.5 * (f.attn_fwd_s + w.attn_fwd_s), 1e-15);
    EXPECT_LT(h.model_flops, f.model_flops);
    EXPECT_GT(h.model_flops, w.model_flops);
    // A window as long as the sequence changes nothing.
    ModelSpec wide = windowed;
    wide.sliding_window = 4096;
    EXPECT_DOUBLE_EQ(layer_work(wide, c, l, false).fwd_s, f.fwd_s);
    l.attention_kernel = AttentionKernel::unfused;
    const LayerWork fu = layer_work(full, c, l, false), wu = layer_work(windowed, c, l, false);
    EXPECT_DOUBLE_EQ(wu.attn_fwd_s, fu.attn_fwd_s);
    EXPECT_LT(wu.model_flops, fu.model_flops);
}

// Chunked attention (Llama 4): the s tokens fall in blocks of w, each causal inside itself, so a layer's
// work is a full causal layer's over (q·w² + r²)/s keys, q = ⌊s/w⌋, r = s − q·w. Llama 3 8B at s = 32768
// with w = 8192 on every layer: 4 whole chunks, span 8192. The forward's attention FLOPs per token fall by
// L · (32768 − 8192) · a·(d_qk + d_v) = 32 · 24576 · 8192 = 6,442,450,944, a step's by 3 × that,
// 19,327,352,832. At s = 20000: q = 2, r = 3616, span (2·8192² + 3616²)/20000 = 7364.5184... A sliding
// window of the same w covers more: 2w − w(w − 1)/s = 16384 − 8192·8191/32768 = 14336.25.
TEST(Compute, ChunkedLayersAttendInsideTheirChunk) {
    const ModelSpec full = preset_model("llama3-8b");
    ModelSpec chunked = full;
    chunked.sliding_window = 8192;
    chunked.window_layers = full.layers;
    chunked.window_kind = WindowKind::chunked;
    validate_model(chunked);
    EXPECT_NEAR(model_flops_per_token(full, 32768) - model_flops_per_token(chunked, 32768), 19'327'352'832.0, 1.0);
    const double per_key_step = 3.0 * 32 * 8192;  // 3 · L · a·(d_qk + d_v)
    const double span_20k = (2.0 * 8192 * 8192 + 3616.0 * 3616) / 20000;
    EXPECT_NEAR(model_flops_per_token(full, 20000) - model_flops_per_token(chunked, 20000),
                per_key_step * (20000 - span_20k), 1.0);
    ModelSpec sliding = chunked;
    sliding.window_kind = WindowKind::sliding;
    EXPECT_NEAR(model_flops_per_token(full, 32768) - model_flops_per_token(sliding, 32768),
                per_key_step * (32768 - 14336.25), 1.0);
    // A chunk as long as the sequence changes nothing.
    EXPECT_DOUBLE_EQ(model_flops_per_token(chunked, 8192), model_flops_per_token(full, 8192));
    ClusterSpec c = preset_cluster("dgx-h100");
    Layout l;
    l.seq_len = 32768;
    EXPECT_LT(layer_work(chunked, c, l, false).attn_fwd_s, layer_work(sliding, c, l, false).attn_fwd_s);
}
