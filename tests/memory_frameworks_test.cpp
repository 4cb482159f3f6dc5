// Memory per GPU as each framework's code holds it, hand-worked: torchtitan's op-level checkpointing,
// eager kernels' and the losses' fp32 copies, nanotron's stages split by compute cost, PyTorch DDP's bucket
// copies, DeepSpeed's BF16 optimizer, and the caching allocator's cache. The framework-neutral terms are
// memory_test.cpp's.
#include <gtest/gtest.h>

#include <vector>

#include "memory_helpers.h"
#include "shardplan/compute.h"
#include "shardplan/layout.h"
#include "shardplan/memory.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/schedule.h"

using namespace shardplan;
using shardplan::testing::cluster;
using shardplan::testing::whole;

// torchtitan's op-level selective checkpointing (the FSDP family's "selective") keeps its save list's
// outputs but every second matmul's, replaying the norms, the activations and the K, output and up
// projections. Llama 3 8B, T = 4096, TP 1, bf16, a layer keeps: its input 2·T·h = 33,554,432; Q and V
// 2·T·(4096 + 1024) = 41,943,040; the attention output 2·T·4096 = 33,554,432 and log-sum-exp
// 4·T·32 = 524,288; the gate 2·T·14336 = 117,440,512; the down projection's output 2·T·h = 33,554,432:
// 260,571,136 B. Replayed: K 2·T·1024·h = 34,359,738,368, the output projection 2·T·h·4096 =
// 137,438,953,472 and up 2·T·14336·h = 481,036,337,152 FLOPs, 652,835,028,992 in all, and no attention.
TEST(Memory, TorchtitanOpLevelCheckpointingKeepsEveryOtherGemmOutput) {
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.seq_len = 4096;
    l.kernels = Kernels::eager;
    l.recompute = Recompute::selective;
    l.recompute_modules = op_level_selective_modules();
    EXPECT_DOUBLE_EQ(layer_memory(m, l).act_dense, 260'571'136.0);
    const LayerWork w = layer_work(m, preset_cluster("dgx-h100"), l, false);
    EXPECT_DOUBLE_EQ(w.recompute_flops, 652'835'028'992.0);
}

TEST(Memory, EagerKernelsKeepTheActivationOutputAndTheFp32LossCopies) {
    // Llama 3 8B on one GPU, T = 4096 tokens. Eager SwiGLU (`silu(gate) * up`, torchtitan and nanotron) also
    // keeps silu's output: 2 B · T · f = 2 · 4096 · 14336 = 117,440,512 B per layer, × 32 layers. Beside the
    // 4 B a logit the loss keeps, T · V = 4096 · 128256 = 525,336,576 logits: the fused vocab-parallel
    // cross-entropy holds the bf16 logits (2 B), nanotron's sharded one an fp32 copy and shifted logits
    // beside them (2 + 4 B: 2,101,346,304 B more), torchtitan's F.cross_entropy on an fp32 copy the
    // incoming and outgoing fp32 gradients in log-softmax's backward (4 + 4 B: 3,152,019,456 B more).
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = cluster(1);
    Layout l;
    l.global_batch = 1;
    l.seq_len = 4096;
    l.zero = 0;
    const Stage s = whole(m);
    const MemoryBreakdown fused = stage_memory_in_passes(m, c, l, s, 1.0);
    l.kernels = Kernels::eager;
    const MemoryBreakdown eager = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_DOUBLE_EQ(eager.activations_bytes - fused.activations_bytes, 32.0 * 117'440'512.0);
    EXPECT_DOUBLE_EQ(eager.other_bytes, fused.other_bytes);  // the loss is cross_entropy's, not the kernels'
    l.cross_entropy = CrossEntropy::sharded;
    EXPECT_DOUBLE_EQ(stage_memory_in_passes(m, c, l, s, 1.0).other_bytes - fused.other_bytes, 2'101'346'304.0);
    l.cross_entropy = CrossEntropy::upcast;
    EXPECT_DOUBLE_EQ(stage_memory_in_passes(m, c, l, s, 1.0).other_bytes - fused.other_bytes, 3'152'019'456.0);
    EXPECT_EQ(framework_defaults("torchtitan (PyTorch FSDP2/DTensor)").cross_entropy, CrossEntropy::upcast);
    EXPECT_EQ(framework_defaults("nanotron (benchmark branch)").cross_entropy, CrossEntropy::sharded);
    EXPECT_EQ(framework_defaults("Megatron-Core").cross_entropy, CrossEntropy::fused);
    EXPECT_EQ(framework_defaults("torchtitan (PyTorch FSDP2/DTensor)").kernels, Kernels::eager);
    EXPECT_EQ(framework_defaults("nanotron (benchmark branch)").kernels, Kernels::eager);
    EXPECT_EQ(framework_defaults("Megatron-Core").kernels, Kernels::fused);
    EXPECT_EQ(framework_defaults("").kernels, Kernels::fused);
}

namespace {
// The Ultra-Scale Playbook's 1.34B model (nanotron Llama: 16 layers, hidden 2,048, 32 heads, 131,072 tokens).
ModelSpec playbook_1_34b() {
    ModelSpec m = preset_model("llama3-8b");
    m.layers = 16;
    m.hidden = 2048;
    m.heads = 32;
    m.kv_heads = 32;
    m.head_dim = 64;
    m.ffn_hidden = 8192;
    m.vocab = 131072;
    return m;
}
}  // namespace

// nanotron's stage split (layout.stage_split = cost): blocks in order, each rank keeps taking them until
// the running cost passes its share, the block that passes it included. The Ultra-Scale Playbook's 1.34B
// model: a layer costs 4·a·d·h + 3·f·h = 4·32·64·2048 + 3·8192·2048 = 67,108,864 (= c); the LM head
// V·h = 131072·2048 = 4c; the whole 16c + 4c = 20c. On 8 stages each share is 2.5c: rank 0 takes layers
// 1-3 (3c > 2.5c), rank 1 layers 4-6 (6c > 5c), rank 2 layers 7-8 (8c > 7.5c), rank 3 9-11, rank 4 12-13,
// rank 5 14-16 (16c > 15c), rank 6 the LM head (20c > 17.5c), rank 7 nothing but the loss's place.
TEST(Memory, NanotronSplitsStagesByComputeCost) {
    ModelSpec m = playbook_1_34b();
    Layout l;
    l.pp = 8;
    l.stage_split = StageSplit::cost;
    const auto st = split_stages(m, l);
    const std::vector<int64_t> want{3, 3, 2, 3, 2, 3, 0, 0};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(st[i].layers, want[i]) << "stage " << i;
    EXPECT_TRUE(st[0].first);
    EXPECT_TRUE(st[6].last);
    EXPECT_FALSE(st[7].last);
    EXPECT_FALSE(st[7].first);
    // On 2 stages (shares of 10c): layers 1-11 (11c > 10c), then 12-16 and the head.
    l.pp = 2;
    const auto two = split_stages(m, l);
    EXPECT_EQ(two[0].layers, 11);
    EXPECT_EQ(two[1].layers, 5);
    EXPECT_TRUE(two[1].last);
    // Llama 3 8B on 8 stages: a layer 4·32·128·4096 + 3·14336·4096 = 243,269,632, the head 128256·4096 =
    // 525,336,576; the first share is (32 · 243,269,632 + 525,336,576) / 8 = 1,038,745,600, passed by
    // the 5th layer (1,216,348,160): rank 0 holds 5 layers, as the Ultra-Scale Playbook prints.
    const ModelSpec llama = preset_model("llama3-8b");
    l.pp = 8;
    EXPECT_EQ(split_stages(llama, l)[0].layers, 5);
    // The even split is the default, and schedules with more than one chunk per rank keep it.
    l.stage_split = StageSplit::even;
    EXPECT_EQ(split_stages(llama, l)[0].layers, 4);
    l.stage_split = StageSplit::cost;
    l.schedule = Schedule::interleaved;
    l.vpp = 2;
    EXPECT_EQ(split_stages(llama, l)[0].layers, 4);
}

// evaluate() keeps the last split per thread and reuses it while the layer pattern and schedule match.
// nanotron's split by cost also depends on the widths and on the split itself: one thread planning a
// nanotron layout, then the same layout split evenly, then a model that differs only in its vocabulary,
// must see the split each would get on its own (the Playbook's 1.34B model on 8 stages: 3, 3, 2, 3, 2, 3,
// 0, 0 by cost, 2 each evenly; with a 49,152-token vocabulary the head costs 1.5 layers, not 4: shares of
// 17.5/8 = 2.19 layers give 3, 2, 2, 2, 2, 3, 2 and the head alone on the last rank).
TEST(Memory, EvaluateNeverReusesASplitMadeForAnotherSplitOrWidth) {
    ModelSpec m = playbook_1_34b();
    ClusterSpec c = preset_cluster("h100-sxm");
    c.gpus = 8;
    Layout l;
    l.pp = 8;
    l.dp = 1;
    l.micro_batch = 1;
    l.global_batch = 16;
    l.seq_len = 4096;
    auto layers = [&](const ModelSpec& model, const Layout& layout) {
        const Plan p = evaluate(model, c, layout);
        std::vector<int64_t> out;
        for (const StageReport& r : p.stages) out.push_back(r.stage.layers);
        std::vector<int64_t> fresh;
        for (const Stage& s : split_stages(model, layout)) fresh.push_back(s.layers);
        EXPECT_EQ(out, fresh);
        return out;
    };
    l.stage_split = StageSplit::cost;
    EXPECT_EQ(layers(m, l), (std::vector<int64_t>{3, 3, 2, 3, 2, 3, 0, 0}));
    l.stage_split = StageSplit::even;
    EXPECT_EQ(layers(m, l), (std::vector<int64_t>(8, 2)));
    l.stage_split = StageSplit::cost;
    layers(m, l);  // the last split made is the 131,072-token model's by cost
    ModelSpec small_vocab = m;
    small_vocab.vocab = 49152;
    EXPECT_EQ(layers(small_vocab, l), (std::vector<int64_t>{3, 2, 2, 2, 2, 3, 2, 0}));
    EXPECT_EQ(layers(m, l), (std::vector<int64_t>{3, 3, 2, 3, 2, 3, 0, 0}));
}

TEST(Memory, CostSplitCoversEveryLayerOnceAndHasOneLastStage) {
    ModelSpec m = preset_model("llama3-8b");
    for (int64_t n = 1; n <= 100; ++n)
        for (int64_t pp = 2; pp <= 40; ++pp) {
            m.layers = n;
            Layout l;
            l.pp = pp;
            l.stage_split = StageSplit::cost;
            const auto stages = split_stages(m, l);
            int64_t total = 0, next = 0, last = 0;
            for (const Stage& s : stages) {
                EXPECT_EQ(s.first_layer, next) << n << " on " << pp;
                next += s.layers;
                total += s.layers;
                last += s.last ? 1 : 0;
            }
            EXPECT_EQ(total, n) << n << " on " << pp;
            EXPECT_EQ(last, 1) << n << " on " << pp;
            EXPECT_TRUE(stages[0].first);
        }
}

// PyTorch DDP's buckets (layout.grad_buckets = copies) hold a second copy of the gradients in the weights'
// dtype once there is data parallelism to reduce over: 2 B per parameter the stage holds. Llama 3 8B on
// one stage holds 8,030,261,248 parameters: 16,060,522,496 B more at dp 8, nothing at dp 1 or under FSDP.
TEST(Memory, DdpBucketCopiesAddTheGradientsOnceMoreWhenThereIsDataParallelism) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout l;
    l.dp = 8;
    l.global_batch = 8;
    l.grad_dtype = GradDtype::fp32;
    const Stage s = whole(m);
    const MemoryBreakdown views = stage_memory(m, c, l, s, 1.0);
    l.grad_buckets = GradBuckets::copies;
    EXPECT_DOUBLE_EQ(stage_memory(m, c, l, s, 1.0).grads_bytes - views.grads_bytes, 2.0 * 8'030'261'248.0);
    l.dp = 1;
    l.global_batch = 1;
    EXPECT_DOUBLE_EQ(stage_memory(m, c, l, s, 1.0).grads_bytes, views.grads_bytes);
    l.dp = 8;
    l.zero = 3;
    const MemoryBreakdown fsdp = stage_memory(m, c, l, s, 1.0);
    l.grad_buckets = GradBuckets::views;
    EXPECT_DOUBLE_EQ(stage_memory(m, c, l, s, 1.0).grads_bytes, fsdp.grads_bytes);
}

// DeepSpeed's BF16 optimizer (grad_buckets low_precision) keeps every bf16 gradient beside the fp32 flat
// buffer it adds them to, at any dp, under ZeRO-0 and -1: 2 B per parameter more than the fp32 gradients
// alone. Llama 3 8B on one stage: 4 + 2 = 6 B × 8,030,261,248 = 48,181,567,488 B at dp 1 and dp 8 alike;
// under ZeRO-2 the gradients are reduced and partitioned as they come, so nothing is added.
TEST(Memory, DeepSpeedBf16OptimizerKeepsTheBf16GradientsBesideTheFp32Ones) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout l;
    l.grad_dtype = GradDtype::fp32;
    l.grad_buckets = GradBuckets::low_precision;
    l.zero = 1;
    const Stage s = whole(m);
    EXPECT_DOUBLE_EQ(stage_memory(m, c, l, s, 1.0).grads_bytes, 48'181'567'488.0);
    l.dp = 8;
    l.global_batch = 8;
    EXPECT_DOUBLE_EQ(stage_memory(m, c, l, s, 1.0).grads_bytes, 48'181'567'488.0);
    l.zero = 2;
    const double zero2 = stage_memory(m, c, l, s, 1.0).grads_bytes;
    l.grad_buckets = GradBuckets::views;
    EXPECT_DOUBLE_EQ(stage_memory(m, c, l, s, 1.0).grads_bytes, zero2);
    // Megatron-DeepSpeed with bf16 runs that way by default, and with fp16 (its FP16 optimizer) does not.
    const FrameworkDefaults bf16 = framework_defaults("Megatron-DeepSpeed (BigScience)", "ampere", Precision::bf16);
    EXPECT_EQ(bf16.grad_buckets, GradBuckets::low_precision);
    EXPECT_EQ(bf16.grad_accumulation, GradAccumulation::eager);
    EXPECT_EQ(bf16.kernels, Kernels::fused);
    const FrameworkDefaults fp16 = framework_defaults("Megatron-DeepSpeed (BigScience)", "ampere", Precision::fp16);
    EXPECT_EQ(fp16.grad_buckets, GradBuckets::views);
    EXPECT_EQ(fp16.grad_accumulation, GradAccumulation::fused);
    EXPECT_EQ(framework_defaults("Megatron-LM", "hopper", Precision::bf16).grad_accumulation, GradAccumulation::fused);
    EXPECT_EQ(framework_defaults("nanotron", "hopper", Precision::bf16).grad_accumulation, GradAccumulation::eager);
}

// The classic caching allocator holds fragmentation (0.2) × activations on top of them; expandable
// segments hold none (torchtitan's default). Llama 3 8B, one micro-batch in flight on one H100: the
// reserved figure exceeds allocated by exactly 0.2 × activations, or not at all. The cache yields to
// allocations: trimmed to usable HBM less allocated and runtime, and never below zero.
TEST(Memory, AllocatorCacheIsClassicFragmentationAndYieldsToAllocations) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    ASSERT_DOUBLE_EQ(c.gpu.eff.fragmentation, 0.2);
    Layout l;
    const Stage s = whole(m);
    const MemoryBreakdown classic = stage_memory(m, c, l, s, 1.0);
    EXPECT_NEAR(classic.reserved_bytes() - classic.allocated_bytes(), 0.2 * classic.activations_bytes, 1.0);
    l.allocator = Allocator::expandable;
    const MemoryBreakdown expandable = stage_memory(m, c, l, s, 1.0);
    EXPECT_DOUBLE_EQ(expandable.reserved_bytes(), expandable.allocated_bytes());
    EXPECT_DOUBLE_EQ(expandable.allocated_bytes(), classic.allocated_bytes());

    MemoryBreakdown b;
    b.weights_bytes = 60e9;
    b.runtime_bytes = 2e9;
    b.add_activations(20e9, 0.2);  // 4 GB of cache: allocated 80, device 86
    b.trim_cache(85e9);            // 3 GB left above allocated and runtime
    EXPECT_DOUBLE_EQ(b.allocator_bytes, 3e9);
    EXPECT_DOUBLE_EQ(b.device_bytes(), 85e9);
    b.trim_cache(90e9);  // trimming never grows it back
    EXPECT_DOUBLE_EQ(b.allocator_bytes, 3e9);
    b.trim_cache(70e9);  // allocations alone do not fit: no cache, device = allocated + runtime
    EXPECT_DOUBLE_EQ(b.allocator_bytes, 0.0);
    EXPECT_DOUBLE_EQ(b.device_bytes(), 82e9);
}

// fp8_params (Megatron's --fp8-param-gather, set by NeMo's and Megatron-Bridge's FP8 and MXFP8 presets)
// holds each GEMM weight as its row-wise 8-bit copy alone: the 16-bit weights go, 2 B a held GEMM
// parameter. Llama 3 8B on one stage holds 8,030,261,248 parameters, of them 2 × 128,256 × 4,096 =
// 1,050,673,152 in its untied embeddings (kept bf16): 6,979,588,096 held otherwise.
// Hopper FP8 caches the row-wise copy and its transpose, 2 × 6,979,588,096 = 13,959,176,192 B with the
// buffers; with fp8_params the weights are 2 × 1,050,673,152 + 1 × 6,979,588,096 = 9,080,934,400 B, the
// transpose 6,979,588,096 B stays with the buffers, and the GPU holds 13,959,176,192 B fewer.
// Blackwell FP8 (no transpose) and MXFP8 (row- and column-wise, 1 + 1/32 B each) drop the same 2 B;
// NVFP4 and bf16 are untouched.
TEST(Memory, Fp8ParamsHoldTheWeightsInEightBitsAlone) {
    const ModelSpec m = preset_model("llama3-8b");
    const Stage s = whole(m);
    const double held = 8'030'261'248.0 - 1'050'673'152.0;
    Layout l;
    l.zero = 1;
    l.precision = Precision::fp8;
    for (const char* gpu : {"dgx-h100", "dgx-b200"}) {
        const ClusterSpec c = preset_cluster(gpu);
        for (Precision p : {Precision::fp8, Precision::mxfp8, Precision::nvfp4, Precision::bf16}) {
            l.precision = p;
            l.fp8_params = false;
            const MemoryBreakdown plain = stage_memory(m, c, l, s, 1.0);
            l.fp8_params = true;
            const MemoryBreakdown eight = stage_memory(m, c, l, s, 1.0);
            const bool takes = p == Precision::fp8 || p == Precision::mxfp8;
            EXPECT_NEAR(plain.allocated_bytes() - eight.allocated_bytes(), takes ? 2.0 * held : 0.0, 1.0) << gpu;
        }
    }
    l.precision = Precision::fp8;
    l.fp8_params = true;
    const MemoryBreakdown h100 = stage_memory(m, preset_cluster("dgx-h100"), l, s, 1.0);
    EXPECT_DOUBLE_EQ(h100.weights_bytes, 9'080'934'400.0);
    l.fp8_params = false;
    EXPECT_DOUBLE_EQ(stage_memory(m, preset_cluster("dgx-h100"), l, s, 1.0).weights_bytes, 16'060'522'496.0);
    // What ZeRO gathers: per-tensor FP8 as it is held, MXFP8 in bf16 through the gradient buffer.
    l.fp8_params = true;
    EXPECT_DOUBLE_EQ(gathered_weight_bytes(l, 1.0), 1.0);
    l.precision = Precision::mxfp8;
    EXPECT_DOUBLE_EQ(gathered_weight_bytes(l, 1.0), 2.0);
    l.precision = Precision::fp8;
    l.fp8_params = false;
    EXPECT_DOUBLE_EQ(gathered_weight_bytes(l, 1.0), 2.0);
    // Whose recipes set it: NeMo's and Megatron-Bridge's FP8 and MXFP8 presets, not NVFP4, not other frameworks.
    EXPECT_TRUE(framework_defaults("Megatron-Bridge / Megatron-Core (26.04 NeMo Container)", "blackwell", Precision::fp8).fp8_params);
    EXPECT_TRUE(framework_defaults("NeMo Megatron", "hopper", Precision::mxfp8).fp8_params);
    EXPECT_FALSE(framework_defaults("Megatron-Bridge", "blackwell", Precision::nvfp4).fp8_params);
    EXPECT_FALSE(framework_defaults("Megatron-Bridge", "blackwell", Precision::bf16).fp8_params);
    EXPECT_FALSE(framework_defaults("Megatron-LM", "hopper", Precision::fp8).fp8_params);
    EXPECT_FALSE(framework_defaults("torchtitan", "hopper", Precision::fp8).fp8_params);
}

// ZeRO-3 as PyTorch FSDP holds it (fp32_shards): the shard is the fp32 parameter, the optimizer's master
// itself, and its gradient shard is fp32: 4 + 4 + 8 B. Llama 3 8B (8,030,261,248 parameters) over 8 ranks:
// 1,003,782,656 a rank; weights 4 × that = 4,015,130,624, gradients the same, Adam's moments 8 × =
// 8,030,261,248. DeepSpeed's ZeRO-3 keeps a bf16 shard beside an fp32 master: weights 2,007,565,312,
// optimizer 12 × = 12,045,391,872, the fp32 gradients 4,015,130,624; 2,007,565,312 B more. With bf16
// gradients FSDP's gradient shard is still fp32 and no fp32 copy is made for the step.
TEST(Memory, FsdpShardsAreTheFp32MasterItself) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = cluster(8);
    Layout l;
    l.dp = 8;
    l.global_batch = 8;
    l.zero = 3;
    l.grad_dtype = GradDtype::fp32;
    const Stage s = whole(m);
    const MemoryBreakdown ds = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_DOUBLE_EQ(ds.weights_bytes, 2'007'565'312.0);
    EXPECT_DOUBLE_EQ(ds.optimizer_bytes, 12'045'391'872.0);
    EXPECT_DOUBLE_EQ(ds.grads_bytes, 4'015'130'624.0);
    l.fp32_shards = true;
    const MemoryBreakdown fsdp = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_DOUBLE_EQ(fsdp.weights_bytes, 4'015'130'624.0);
    EXPECT_DOUBLE_EQ(fsdp.grads_bytes, 4'015'130'624.0);
    EXPECT_DOUBLE_EQ(fsdp.optimizer_bytes, 8'030'261'248.0);
    EXPECT_DOUBLE_EQ(ds.allocated_bytes() - fsdp.allocated_bytes(), 2'007'565'312.0);
    l.grad_dtype = GradDtype::bf16;
    const MemoryBreakdown bf16 = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_DOUBLE_EQ(bf16.grads_bytes, 4'015'130'624.0);
    EXPECT_DOUBLE_EQ(bf16.step_bytes, 0.0);
    // Below ZeRO-3 nothing is sharded that way: the setting does nothing.
    l.zero = 1;
    l.fp32_shards = false;
    const double zero1 = stage_memory_in_passes(m, c, l, s, 1.0).allocated_bytes();
    l.fp32_shards = true;
    EXPECT_DOUBLE_EQ(stage_memory_in_passes(m, c, l, s, 1.0).allocated_bytes(), zero1);
    // The FSDP frameworks hold it so unless told; Megatron and DeepSpeed do not.
    EXPECT_TRUE(framework_defaults("torchtitan", "hopper", Precision::bf16).fp32_shards);
    EXPECT_TRUE(framework_defaults("Composer / llm-foundry (PyTorch FSDP)", "ampere", Precision::bf16).fp32_shards);
    EXPECT_FALSE(framework_defaults("DeepSpeed", "ampere", Precision::bf16).fp32_shards);
    EXPECT_FALSE(framework_defaults("Megatron-LM", "hopper", Precision::bf16).fp32_shards);
}
