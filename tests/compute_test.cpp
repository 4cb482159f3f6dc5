// One layer's compute, hand-checked: tile and wave quantization, a GEMM's efficiency by its shape and
// alignment, the unfused attention core, the host's launch cost, the eager gradient accumulation pass
// (compute.h). Moved out of plan_test.cpp, which tests the whole step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "plan_helpers.h"
#include "shardplan/compute.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/report.h"

using namespace shardplan;
using namespace shardplan::testing;

// Tile and wave quantization of a GEMM's M×N output on the GPU's SMs, 128×128 tiles (compute.h). On an
// A100's 108 SMs: M = 2,048 tokens × N = 4,608 is 16 · 36 = 576 tiles, ⌈576 / 108⌉ = 6 waves:
// 2048 · 4608 / (6 · 108 · 16384) = 9,437,184 / 10,616,832 = 0.8889; M = 4,096 is 1,152 tiles in 11 waves:
// 18,874,368 / 19,464,192 = 0.9697. A 100 × 100 output is one tile of one wave on H100's 132 SMs:
// 10,000 / (132 · 16,384). No SMs, no quantization. Four expert GEMMs of 256 × 2,048 running together
// on H100 fill 4 · 2 · 16 = 128 tiles of one wave: 4 · 256 · 2048 / (132 · 16384) = 2,097,152 / 2,162,688
// = 0.9697, where one alone fills 32 tiles of that wave: 524,288 / 2,162,688 = 0.2424.
TEST(Compute, TileAndWaveQuantization) {
    EXPECT_NEAR(tile_utilization(2048, 4608, 108), 9437184.0 / 10616832.0, 1e-12);
    EXPECT_NEAR(tile_utilization(4096, 4608, 108), 18874368.0 / 19464192.0, 1e-12);
    EXPECT_NEAR(tile_utilization(100, 100, 132), 10000.0 / (132.0 * 16384.0), 1e-15);
    EXPECT_DOUBLE_EQ(tile_utilization(4096, 4608, 0), 1.0);
    EXPECT_NEAR(tile_utilization(256, 2048, 132, 4), 2097152.0 / 2162688.0, 1e-12);
    EXPECT_NEAR(tile_utilization(256, 2048, 132, 1), 524288.0 / 2162688.0, 1e-12);
}

// 1/η = (d_half/d + 1/u) / η_max (compute.h): the tiles' compute plus the short side's overhead. A100,
// gemm_half_dim h, 108 SMs: 4,096 × 4,608 × 12,288 has d = 4,096 and u = 0.9697 (above), so
// 1/η = (h/4096 + 19464192/18874368) / η_max; without SMs u = 1 and η = η_max · d/(d + h), the roll-off alone.
TEST(Compute, GemmEfficiencyAddsTheShortSideToTheTiles) {
    const Efficiency e = preset_cluster("dgx-a100").gpu.eff;
    const double h = e.gemm_half_dim;
    EXPECT_NEAR(gemm_efficiency(e, Precision::bf16, 4096, 4608, 12288, 108),
                e.gemm_16 / (h / 4096.0 + 19464192.0 / 18874368.0), 1e-12);
    EXPECT_NEAR(gemm_efficiency(e, Precision::bf16, 4096, 4608, 12288), e.gemm_16 * 4096.0 / (4096.0 + h), 1e-12);
    // More rows never take less time: time ∝ M / η is non-decreasing, across a tile's edge as well (the
    // product d/(d + h) · u made 129 → 192 rows faster).
    double previous = 0;
    for (double M = 64; M <= 640; M += 8) {
        const double t = M / gemm_efficiency(e, Precision::bf16, M, 2048, 7168, 108, 4);
        EXPECT_GE(t, previous * (1 - 1e-12)) << M;
        previous = t;
    }
}

// A GEMM whose N or K is not whole 16-byte vectors leaves the Tensor Core kernels (docs/model.md §4):
// bf16 N = 4,604 is 9,208 bytes, 575.5 vectors, so 4,096 × 4,604 × 12,288 without SMs runs at
// gemm_unaligned · η_max · 4096/(4096 + h), where 4,608 (9,216 bytes, 576 vectors) keeps η_max · 4096/(4096 + h).
// BLOOM's hidden-14,400 candidates: a head dimension of 150 (300 bytes) is unaligned, the per-rank width
// 1,800 at TP 8 (3,600 bytes, 225 vectors) aligned in bf16 and not in fp8 (1,800 bytes, 112.5 vectors).
// The token dimension M is no operand's row, so 4,100 tokens stay aligned (η_max · 4100/(4100 + h)).
TEST(Compute, GemmEfficiencyTakesUnalignedRowsOffTheTensorCores) {
    const Efficiency e = preset_cluster("dgx-a100").gpu.eff;
    const double h = e.gemm_half_dim;
    EXPECT_NEAR(e.gemm_unaligned, 0.13, 1e-12);
    EXPECT_TRUE(gemm_aligned(Precision::bf16, 4608, 12288));
    EXPECT_FALSE(gemm_aligned(Precision::bf16, 4604, 12288));
    EXPECT_FALSE(gemm_aligned(Precision::bf16, 2048, 150));
    EXPECT_TRUE(gemm_aligned(Precision::bf16, 14400, 1800));
    EXPECT_FALSE(gemm_aligned(Precision::fp8, 14400, 1800));
    EXPECT_TRUE(gemm_aligned(Precision::fp8, 14400, 1808));
    EXPECT_NEAR(gemm_efficiency(e, Precision::bf16, 4096, 4608, 12288), e.gemm_16 * 4096.0 / (4096.0 + h), 1e-12);
    EXPECT_NEAR(gemm_efficiency(e, Precision::bf16, 4096, 4604, 12288),
                0.13 * e.gemm_16 * 4096.0 / (4096.0 + h), 1e-12);
    EXPECT_NEAR(gemm_efficiency(e, Precision::bf16, 4100, 4608, 12288), e.gemm_16 * 4100.0 / (4100.0 + h), 1e-12);
}

// An unfused attention core at head dimension 150 (300 bytes a row) takes 1/gemm_unaligned the GPU time of
// the same products aligned: BLOOM's 14,400-wide candidate at TP 8 over 96 heads. Its projections' and MLP's
// GEMMs stay aligned (1,800, 5,400 and 7,200 per rank), so only the core moves; the reported shares carry the
// host's launch stretch (fwd/GPU time, 1.01 at this size), hence the 2 % tolerance.
TEST(Compute, UnalignedHeadDimensionSlowsTheUnfusedCoreAndIsNamed) {
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 8;
    ModelSpec m = preset_model("gpt3-175b");
    m.hidden = 14400;
    m.heads = m.kv_heads = 96;
    m.head_dim = 150;
    m.ffn_hidden = 4 * m.hidden;
    Layout l;
    l.tp = 8;
    l.micro_batch = 1;
    l.global_batch = 8;
    l.seq_len = 2048;
    l.attention_kernel = AttentionKernel::unfused;
    const LayerWork slow = layer_work(m, c, l, false);
    Efficiency aligned_eff = c.gpu.eff;
    aligned_eff.gemm_unaligned = 1.0;
    ClusterSpec aligned = c;
    aligned.gpu.eff = aligned_eff;
    const LayerWork fast = layer_work(m, aligned, l, false);
    EXPECT_NEAR(slow.attn_fwd_s / fast.attn_fwd_s, 1.0 / 0.13, 0.02 / 0.13);
    EXPECT_NEAR(slow.gemm_fwd_s / fast.gemm_fwd_s, 1.0, 0.02);
    EXPECT_GT(slow.fwd_s, fast.fwd_s);
    EXPECT_DOUBLE_EQ(slow.model_flops, fast.model_flops);
    // What the report names: the width, 8 elements to a 16-byte vector in bf16, and the core's share.
    EXPECT_DOUBLE_EQ(slow.unaligned_width, 150);
    EXPECT_DOUBLE_EQ(slow.unaligned_multiple, 8);
    EXPECT_DOUBLE_EQ(slow.unaligned_fwd_s, slow.attn_fwd_s);
    l.global_batch = 64;
    const Plan p = evaluate(m, c, l);
    bool said = false;
    for (const std::string& f : plan_findings(p))
        said = said || f.starts_with("GEMMs off the Tensor Cores: a width of 150 is not a multiple of 8");
    EXPECT_TRUE(said);
    m.heads = m.kv_heads = 100;  // head dimension 144: every GEMM aligned, nothing to say
    m.head_dim = 144;
    EXPECT_DOUBLE_EQ(layer_work(m, c, l, false).unaligned_multiple, 0);
    for (const std::string& f : plan_findings(evaluate(m, c, l))) EXPECT_FALSE(f.starts_with("GEMMs off"));
    l.attention_kernel = AttentionKernel::flash;
    m.heads = m.kv_heads = 96;
    m.head_dim = 150;
    // Flash attention never runs the core as GEMMs: nothing moves.
    EXPECT_DOUBLE_EQ(layer_work(m, c, l, false).fwd_s, layer_work(m, aligned, l, false).fwd_s);
}

// The host's launch cost h per layer and micro-batch (1/3 forward, 2/3 backward) shows as h²/(h + g)
// beside a pass of GPU time g (docs/model.md §4). Eager ops take layer_overhead, 3 ms: forward h/3 = 1 ms
// beside g, so fwd = g + 1e-3²/(1e-3 + g). Fused kernels (the default layout's) take fused_host_share of
// it, 0.73 · 3 ms = 2.19 ms: forward 0.73 ms, fwd = g + 0.73e-3²/(0.73e-3 + g); backward 1.46 ms. A
// 1-token layer (g ≈ 0) takes the whole share; Llama 3 70B at 8k tokens (g ≈ 0.1 s) keeps ≈ 0.53e-6/0.1
// ≈ 5 µs of it.
TEST(Compute, HostLaunchCostShowsInFullOnTinyLayersAndFadesOnLargeOnes) {
    ClusterSpec c = preset_cluster("dgx-h100");
    ASSERT_DOUBLE_EQ(c.gpu.eff.layer_overhead_s, 3e-3);
    ASSERT_DOUBLE_EQ(c.gpu.eff.fused_host_share, 0.73);
    ClusterSpec bare = c;
    bare.gpu.eff.layer_overhead_s = 0;
    for (const auto& [model, seq] : {std::pair{"llama3-70b", int64_t{8192}}, std::pair{"llama3-8b", int64_t{1}}}) {
        const ModelSpec m = preset_model(model);
        Layout l;
        l.seq_len = seq;
        for (const auto& [kernels, fwd_host] : {std::pair{Kernels::fused, 0.73e-3}, std::pair{Kernels::eager, 1e-3}}) {
            l.kernels = kernels;
            const LayerWork with = layer_work(m, c, l, false), gpu = layer_work(m, bare, l, false);
            const double bwd_host = 2 * fwd_host;
            EXPECT_NEAR(with.fwd_s, gpu.fwd_s + fwd_host * fwd_host / (fwd_host + gpu.fwd_s), 1e-15) << model;
            EXPECT_NEAR(with.bwd_s, gpu.bwd_s + bwd_host * bwd_host / (bwd_host + gpu.bwd_s), 1e-15) << model;
        }
    }
    Layout long_seq;
    long_seq.seq_len = 8192;
    const LayerWork big = layer_work(preset_model("llama3-70b"), c, long_seq, false);
    const LayerWork big_gpu = layer_work(preset_model("llama3-70b"), bare, long_seq, false);
    EXPECT_GT(big_gpu.fwd_s, 0.02);                     // a large layer ...
    EXPECT_LT(big.fwd_s - big_gpu.fwd_s, 0.05e-3);      // ... hides all but a few µs of the host's time
    Layout one;
    one.seq_len = 1;
    EXPECT_GT(layer_work(preset_model("llama3-8b"), c, one, false).fwd_s, 0.99 * 0.73e-3);  // a tiny one waits on it all
    one.kernels = Kernels::eager;
    EXPECT_GT(layer_work(preset_model("llama3-8b"), c, one, false).fwd_s, 0.99e-3);  // and longer on eager ops
}

// Gradient accumulation as a pass of its own (grad_accumulation eager: nanotron, torchtitan, DeepSpeed's
// BF16 optimizer; whatever the kernels) after each micro-batch's backward: 2 + 2·4 = 10 bytes a parameter into fp32, 2 + 2·2 = 6 into bf16, over HBM at
// hbm × its bandwidth. Llama 3 8B layer at TP 2: attention 4096·(4096 + 2·1024 + 4096) = 41,943,040 and
// MLP 3·4096·14336 = 176,160,768, halved by TP, plus 2·4096 norm weights: 109,060,096 parameters, so
// 1,090,600,960 bytes. Megatron's fused wgrad accumulation has none; FSDP without PP accumulates its shard.
TEST(Compute, EagerGradientAccumulationIsAnHbmPassPerMicroBatch) {
    const ClusterSpec c = preset_cluster("dgx-h100");
    const ModelSpec m = preset_model("llama3-8b");
    const double hbm = c.gpu.hbm_Bps * c.gpu.eff.hbm;
    Layout fused;
    fused.tp = 2;
    fused.dp = 4;
    fused.kernels = Kernels::fused;
    fused.grad_accumulation = GradAccumulation::fused;
    fused.grad_dtype = GradDtype::fp32;
    Layout eager = fused;
    eager.grad_accumulation = GradAccumulation::eager;  // Megatron-DeepSpeed: fused kernels, eager accumulation
    EXPECT_DOUBLE_EQ(grad_accum_s(1e9, c, fused), 0.0);
    EXPECT_NEAR(grad_accum_s(1e9, c, eager), 1e10 / hbm, 1e-15);
    const LayerWork f = layer_work(m, c, fused, false), e = layer_work(m, c, eager, false);
    EXPECT_DOUBLE_EQ(f.grad_accum_s, 0.0);
    EXPECT_NEAR(e.grad_accum_s, 1'090'600'960.0 / hbm, 1e-12);
    EXPECT_NEAR(e.bwd_s - f.bwd_s, e.grad_accum_s, 1e-12);
    EXPECT_NEAR(e.wgrad_s - f.wgrad_s, e.grad_accum_s, 1e-12);
    EXPECT_DOUBLE_EQ(e.fwd_s, f.fwd_s);
    Layout bf16 = eager;
    bf16.grad_dtype = GradDtype::bf16;
    EXPECT_NEAR(layer_work(m, c, bf16, false).grad_accum_s, 654'360'576.0 / hbm, 1e-12);
    Layout fsdp = eager;
    fsdp.zero = 3;
    EXPECT_NEAR(layer_work(m, c, fsdp, false).grad_accum_s, e.grad_accum_s / 4.0, 1e-12);  // its shard of dp 4
    fsdp.pp = 2;
    EXPECT_DOUBLE_EQ(accumulated_params(8.0, 4.0, fsdp), 8.0);  // under PP FSDP keeps unsharded gradients
}

// Under FP8 every GEMM's input is cast by a kernel of its own (Transformer Engine's Linear and
// GroupedLinear, fp8_cast_transpose_fused): 2 bytes read and 1 written an element, over HBM at hbm × its
// bandwidth, on top of bf16's element-wise passes. As one CUDA graph with no gap between kernel nodes the
// forward is its GEMMs + attention + element-wise passes, so the last is what the two precisions differ by.
// Llama 3 8B at TP 1, 4,096 tokens: the QKV projection's and the output projection's inputs 4,096 + 4,096
// wide, the MLP's two 4,096 + 14,336: 3 · 4,096 · 26,624 = 327,155,712 bytes. Mixtral 8x7B's MoE layer,
// every expert local (EP 1), top-2: the projections' 4,096 + 4,096 on 4,096 tokens and each expert's
// 4,096 + 14,336 on its tokens, 8,192 assignments in all: 3 · 4,096 · (8,192 + 2 · 18,432) = 553,648,128.
TEST(Compute, Fp8CastsEveryGemmInput) {
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpu.eff.graph_node_gap_s = 0.0;
    const double hbm = c.gpu.hbm_Bps * c.gpu.eff.hbm;
    Layout bf16;
    bf16.dp = 8;
    bf16.seq_len = 4096;
    bf16.cuda_graphs = CudaGraphs::full;
    Layout fp8 = bf16;
    fp8.precision = Precision::fp8;
    auto elementwise_s = [&](const ModelSpec& m, const Layout& l, bool moe) {
        const LayerWork w = layer_work(m, c, l, moe);
        return w.fwd_s - w.gemm_fwd_s - w.attn_fwd_s;
    };
    const ModelSpec llama = preset_model("llama3-8b");
    EXPECT_NEAR(elementwise_s(llama, fp8, false) - elementwise_s(llama, bf16, false), 327'155'712.0 / hbm, 1e-12);
    const ModelSpec mixtral = preset_model("mixtral-8x7b");
    EXPECT_NEAR(elementwise_s(mixtral, fp8, true) - elementwise_s(mixtral, bf16, true), 553'648'128.0 / hbm, 1e-12);
}
