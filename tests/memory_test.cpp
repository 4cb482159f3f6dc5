// Memory per GPU, hand-worked: the framework-neutral terms, the peak's moment and the transient buffers.
// What a particular framework's code holds is memory_frameworks_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "memory_helpers.h"
#include "shardplan/compute.h"
#include "shardplan/memory.h"
#include "shardplan/plan.h"
#include "shardplan/report.h"
#include "shardplan/presets.h"
#include "shardplan/schedule.h"
#include "shardplan/suggest.h"

using namespace shardplan;
using shardplan::testing::cluster;
using shardplan::testing::whole;

TEST(Memory, AdamStateIsSixTimesBf16Weights) {
    // 2 B bf16 weights vs 12 B fp32 master + m + v per parameter: 12 / 2 = 6, whatever the model.
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.zero = 0;
    const MemoryBreakdown mem = stage_memory(m, cluster(1), l, whole(m), 1);
    EXPECT_DOUBLE_EQ(mem.optimizer_bytes, 6.0 * mem.weights_bytes);
    EXPECT_DOUBLE_EQ(mem.weights_bytes, 2.0 * 8'030'261'248.0);
    EXPECT_DOUBLE_EQ(mem.grads_bytes, mem.weights_bytes);  // bf16 gradients (the seed)
    l.grad_dtype = GradDtype::fp32;                       // Megatron's fp32 main_grad: 4 B
    EXPECT_DOUBLE_EQ(stage_memory(m, cluster(1), l, whole(m), 1).grads_bytes, 2.0 * mem.weights_bytes);
}

TEST(Memory, ZeroStagesShardAcrossDataParallel) {
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.dp = 8;
    l.zero = 0;
    const MemoryBreakdown z0 = stage_memory(m, cluster(8), l, whole(m), 1);
    l.zero = 1;  // optimizer ÷ 8
    const MemoryBreakdown z1 = stage_memory(m, cluster(8), l, whole(m), 1);
    EXPECT_DOUBLE_EQ(z1.optimizer_bytes, z0.optimizer_bytes / 8.0);
    EXPECT_DOUBLE_EQ(z1.grads_bytes, z0.grads_bytes);
    l.zero = 2;  // + gradients ÷ 8
    const MemoryBreakdown z2 = stage_memory(m, cluster(8), l, whole(m), 1);
    EXPECT_DOUBLE_EQ(z2.grads_bytes, z0.grads_bytes / 8.0);
    EXPECT_DOUBLE_EQ(z2.weights_bytes, z0.weights_bytes);
    // and while the backward runs, one layer's gradients whole before they are reduce-scattered: q and o
    // 2·4096² + k and v 2·4096·1024 + the SwiGLU MLP 3·4096·14336 + two norms 2·4096 = 218,112,000
    // parameters, 2 B each (bf16 gradients).
    EXPECT_DOUBLE_EQ(z2.other_bytes - z1.other_bytes, 2.0 * 218'112'000.0);
    l.zero = 3;  // + weights ÷ 8, and the gathered layers appear under "other"
    const MemoryBreakdown z3 = stage_memory(m, cluster(8), l, whole(m), 1);
    EXPECT_DOUBLE_EQ(z3.weights_bytes, z0.weights_bytes / 8.0);
    EXPECT_GT(z3.other_bytes, z2.other_bytes);
    EXPECT_LT(z3.total_bytes(), z2.total_bytes());
}

TEST(Memory, LayerActivationsHandWorked) {
    // Llama 3 8B, b = 1, s = 4096, T = 4096 tokens, no TP, no recompute, 2-byte activations:
    //   norm inputs, QKV input, MLP input      4 · 2·T·h        = 134,217,728
    //   Q, K, V (4096 + 1024 + 1024 columns)   2·T·6144         =  50,331,648
    //   attention output O                     2·T·4096         =  33,554,432
    //   log-sum-exp, fp32 per head             4·T·32           =     524,288
    //   SwiGLU: gate + up (2f) and act (f)     2·T·3·14336      = 352,321,536
    //                                                      total = 570,949,632
    const ModelSpec m = preset_model("llama3-8b");
    Layout l;
    l.seq_len = 4096;
    l.sequence_parallel = false;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 570'949'632.0);
    // TP8 with sequence parallelism shards every term: exactly ÷ 8.
    l.tp = 8;
    l.sequence_parallel = true;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 570'949'632.0 / 8);
    // Without SP the four T·h tensors stay whole on every TP rank: 134,217,728 + 436,731,904 / 8.
    l.sequence_parallel = false;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 134'217'728.0 + 436'731'904.0 / 8);
    // Full recompute keeps the layer input only: 2·T·h = 33,554,432 (÷ tp with SP).
    l.tp = 1;
    l.recompute = Recompute::full;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 33'554'432.0);
    // Selective means Megatron's default module, core_attn: flash attention's log-sum-exp is all it drops:
    //   570,949,632 − 524,288 = 570,425,344.
    l.recompute = Recompute::selective;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 570'425'344.0);
    // + layernorm: the norms' outputs (the QKV and MLP inputs, 2 · 2·T·h = 67,108,864) are replayed;
    // + mlp: the SwiGLU tensors (352,321,536) too:
    //   570,425,344 − 67,108,864 − 352,321,536 = 150,994,944.
    l.recompute_modules = module_bit(RecomputeModule::core_attn) | module_bit(RecomputeModule::layernorm) |
                          module_bit(RecomputeModule::mlp);
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 150'994'944.0);
}

// Sandwich norms (Gemma 2/3) keep the attention's and the MLP's outputs as the inputs of the norms after
// them: 2 · 2·T·h = 67,108,864 more than LayerActivationsHandWorked's 570,949,632 on Llama 3 8B at s = 4096,
// ÷ 8 under TP8 with SP; full recomputation keeps the layer input alone either way.
TEST(Memory, SandwichNormsKeepTheirInputs) {
    ModelSpec m = preset_model("llama3-8b");
    m.sandwich_norms = true;
    Layout l;
    l.seq_len = 4096;
    l.sequence_parallel = false;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 570'949'632.0 + 67'108'864.0);
    l.tp = 8;
    l.sequence_parallel = true;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), (570'949'632.0 + 67'108'864.0) / 8);
    l.tp = 1;
    l.sequence_parallel = false;
    l.recompute = Recompute::full;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), 33'554'432.0);
}

TEST(Memory, KorthikantiTpOnlyFormWithoutDropout) {
    // GPT-3 shape (f = 4h, MHA, GeLU), TP t without SP: s·b·h·(8 + 24/t) (Korthikanti Table 2 is 10 + 24/t;
    // the 2 extra are the two dropout masks, which modern recipes disable) + the fp32 log-sum-exp 4·s·b·a/t.
    const ModelSpec m = preset_model("gpt3-175b");
    Layout l;
    l.seq_len = 2048;
    l.tp = 8;
    l.sequence_parallel = false;
    const double sbh = 2048.0 * 12288.0;
    EXPECT_DOUBLE_EQ(layer_activation_bytes(m, l, false), sbh * (8.0 + 24.0 / 8.0) + 4.0 * 2048 * 96 / 8);
}

TEST(Memory, MemoryFallsAsTensorParallelGrows) {
    const ModelSpec m = preset_model("llama3-70b");
    double previous = 1e30;
    for (int64_t tp : {1, 2, 4, 8}) {
        Layout l;
        l.tp = tp;
        l.dp = 64 / tp;
        l.seq_len = 8192;
        const double total = stage_memory(m, cluster(64), l, whole(m), 1).total_bytes();
        EXPECT_LT(total, previous) << "tp " << tp;
        previous = total;
    }
}

TEST(Memory, ExpertsDivideByExpertParallel) {
    const ModelSpec m = preset_model("mixtral-8x7b");
    Layout l;
    l.dp = 8;
    l.zero = 0;
    const Stage s = whole(m);
    const double e1 = stage_params(m, l, s).expert;
    l.ep = 8;
    EXPECT_DOUBLE_EQ(stage_params(m, l, s).expert, e1 / 8);
    // 32 layers · 8 experts · 3·4096·14336 = 45,097,156,608 expert parameters in all.
    EXPECT_DOUBLE_EQ(e1, 45'097'156'608.0);
}

TEST(Memory, PipelineInFlightFollowsSchedule) {
    Layout l;
    l.pp = 8;
    EXPECT_EQ(in_flight_micro_batches(l, 0, 32), 8);  // 1F1B: stage 0 holds pp
    EXPECT_EQ(in_flight_micro_batches(l, 7, 32), 1);  // the last stage one
    EXPECT_EQ(in_flight_micro_batches(l, 0, 4), 4);   // never more than m
    l.schedule = Schedule::gpipe;
    EXPECT_EQ(in_flight_micro_batches(l, 3, 32), 32);
    l.schedule = Schedule::interleaved;
    l.vpp = 2;
    // Megatron: (8 − 0 − 1)·2 + (2 − 1)·8 + 1 = 23 chunk micro-batches = 11.5 stages' worth
    // = pp · (1 + (pp − 1)/(pp·v)) = 8 · (1 + 7/16) = 11.5.
    EXPECT_DOUBLE_EQ(in_flight_micro_batches(l, 0, 32), 11.5);
}

TEST(Memory, UnevenStagesGiveExtraLayersToTheMiddle) {
    const ModelSpec m = preset_model("llama3-405b");
    Layout l;
    l.pp = 16;
    const auto stages = split_stages(m, l);
    ASSERT_EQ(stages.size(), 16u);
    EXPECT_EQ(stages[0].layers, 7);
    EXPECT_EQ(stages[15].layers, 7);
    for (int i = 1; i < 15; ++i) EXPECT_EQ(stages[i].layers, 8);
    EXPECT_TRUE(stages[0].first);
    EXPECT_TRUE(stages[15].last);
    int64_t total = 0;
    for (const Stage& s : stages) total += s.layers;
    EXPECT_EQ(total, 126);
}

TEST(Memory, EveryStageSplitCoversEveryLayerOnce) {
    ModelSpec m = preset_model("llama3-8b");
    for (int64_t n = 1; n <= 130; ++n)
        for (int64_t pp = 1; pp <= std::min<int64_t>(n + 2, 40); ++pp) {
            m.layers = n;
            Layout l;
            l.pp = pp;
            const auto stages = split_stages(m, l);
            int64_t total = 0, next = 0, most = 0;
            for (const Stage& s : stages) {
                EXPECT_EQ(s.first_layer, next) << n << " on " << pp;
                next += s.layers;
                total += s.layers;
                most = std::max(most, s.layers);
            }
            EXPECT_EQ(total, n) << n << " on " << pp;
            EXPECT_LE(most, (n + pp - 1) / pp) << n << " on " << pp;  // never more than the even share
        }
    m = preset_model("deepseek-v3");  // 61 on 16: middle stages of 4, ends 3 and 2 (Megatron-expressible)
    Layout l;
    l.pp = 16;
    const auto st = split_stages(m, l);
    EXPECT_EQ(st.front().layers, 3);
    EXPECT_EQ(st.back().layers, 2);
    for (size_t i = 1; i + 1 < st.size(); ++i) EXPECT_EQ(st[i].layers, 4);
}

// Three figures per GPU: allocated (tensors), reserved (+ the caching allocator's share of the activation
// churn), device (+ CUDA context, NCCL, workspaces); `fits` judges the device figure. Llama 3 8B on one
// H100, micro-batch 1 of 8192 tokens, vocabulary 128,256: the loss holds the bf16 logits beside their fp32
// copy for a moment, 2 B · 8192 · 128256 = 2.101 GB on the last stage (PP1: the only one).
TEST(Memory, AllocatedReservedAndDeviceFigures) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    Layout l;
    l.tp = 8;
    l.dp = 1;
    l.global_batch = 1;
    l.seq_len = 8192;
    const Plan p = evaluate(m, c, l);
    ASSERT_FALSE(p.rejection);
    const MemoryBreakdown& mem = p.memory;
    const Efficiency& e = c.gpu.eff;
    EXPECT_NEAR(mem.allocated_bytes(), mem.weights_bytes + mem.grads_bytes + mem.optimizer_bytes + mem.activations_bytes +
                                           mem.other_bytes, 1.0);
    EXPECT_NEAR(mem.reserved_bytes() - mem.allocated_bytes(), e.fragmentation * mem.activations_bytes, 1.0);
    EXPECT_NEAR(mem.device_bytes() - mem.reserved_bytes(), e.reserve_bytes, 1.0);
    EXPECT_DOUBLE_EQ(mem.total_bytes(), mem.device_bytes());
    EXPECT_EQ(p.memory_fits, mem.device_bytes() <= p.capacity_bytes);
    // The loss's bf16 logits (÷ tp 8) are among the buffers: 2 · 8192 · 128256 / 8 = 262.7 MB.
    EXPECT_GE(mem.other_bytes, 2.0 * 8192 * 128256 / 8 - 1);
    const nlohmann::json j = plan_to_json(p);
    EXPECT_DOUBLE_EQ(j["memory"]["reserved_bytes"].get<double>(), mem.reserved_bytes());
    EXPECT_DOUBLE_EQ(j["memory"]["total_bytes"].get<double>(), j["memory"]["device_bytes"].get<double>());
}

// Korthikanti et al. 2022, Fig. 1 (A100, fp16, the Table 5 layouts): activation memory of the fullest
// stage, 22B (t 8, p 1, b 4) and 1T (t 8, p 64, b 1), s 2048, unfused attention with dropout as then:
// no SP, no recompute: s·b·h·(10 + 24/t + 5·a·s/(h·t)) per layer → 22B 59.25 GiB, 1T 131.25 GiB;
// SP + selective (core_attn): 34·s·b·h/t → 22B 9.56 GiB, 1T 26.56 GiB. Within 10 % (the model adds the
// embedding and head tensors of the end stages, which the figure leaves out).
TEST(Memory, KorthikantiFigureOneActivations) {
    struct Row { int64_t layers, hidden, heads, tp, pp, b; double plain_gib, selective_gib; };
    for (const Row& r : {Row{48, 6144, 64, 8, 1, 4, 59.25, 9.56}, Row{128, 25600, 160, 8, 64, 1, 131.25, 26.56}}) {
        ModelSpec m;
        m.name = "korthikanti";
        m.layers = r.layers;
        m.hidden = r.hidden;
        m.ffn_hidden = 4 * r.hidden;
        m.heads = m.kv_heads = r.heads;
        m.head_dim = r.hidden / r.heads;
        m.vocab = 51200;
        m.mlp = MlpKind::gelu;
        m.attention = AttentionKind::mha;
        ClusterSpec c = preset_cluster("dgx-a100");
        c.gpus = r.tp * r.pp;
        Layout l;
        l.tp = r.tp;
        l.pp = r.pp;
        l.dp = 1;
        l.micro_batch = r.b;
        l.global_batch = r.b * std::max<int64_t>(r.pp, 1);
        l.seq_len = 2048;
        l.precision = Precision::fp16;
        l.attention_kernel = AttentionKernel::unfused;
        l.dropout = true;
        l.sequence_parallel = false;
        const double gib = 1024.0 * 1024 * 1024;
        const Plan plain = evaluate(m, c, l);
        ASSERT_FALSE(plain.rejection) << plain.rejection->expected;
        EXPECT_NEAR(plain.stages[0].memory.activations_bytes / gib, r.plain_gib, 0.1 * r.plain_gib) << r.layers;
        l.sequence_parallel = true;
        l.recompute = Recompute::selective;  // Megatron's default module: core_attn
        const Plan sel = evaluate(m, c, l);
        EXPECT_NEAR(sel.stages[0].memory.activations_bytes / gib, r.selective_gib, 0.1 * r.selective_gib) << r.layers;
    }
}

// Sequence parallelism keeps two full-sequence buffers for the all-gathers of the column-parallel GEMMs'
// inputs (forward and backward): 2 · 2 B · T · h = 4 · 4096 · 4096 = 67,108,864 B for Llama 3 8B at
// T = 4096, whatever tp is; none without sequence parallelism.
namespace {
// One sequence of 4,096 tokens at TP 8 (sequence parallel), the layout the two SP tests below share.
Layout tp8_one_sequence() {
    Layout l;
    l.tp = 8;
    l.global_batch = 1;
    l.seq_len = 4096;
    return l;
}
}  // namespace

TEST(Memory, SequenceParallelKeepsTwoFullSequenceGatherBuffers) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout l = tp8_one_sequence();
    const Stage s = whole(m);
    l.sequence_parallel = false;
    const double off = stage_memory_in_passes(m, c, l, s, 1.0).other_bytes;
    l.sequence_parallel = true;
    EXPECT_DOUBLE_EQ(stage_memory_in_passes(m, c, l, s, 1.0).other_bytes - off, 67'108'864.0);
}

// Without the backward's re-gather (nanotron's tp_recompute_allgather false) the QKV and first MLP GEMMs
// keep their inputs gathered to the full sequence instead of the 1/tp shard: per layer 2 · 2 B · T · h ·
// (1 − 1/8) = 4 · 4096 · 4096 · 7/8 = 58,720,256 B more at tp 8, T = 4096; the LM head's input
// 2 B · T · h · 7/8 = 29,360,128 B more; and the two gather buffers (67,108,864 B) are gone, the gathered
// tensors being the kept inputs themselves. Without sequence parallelism nothing is gathered: no change.
TEST(Memory, KeptGatheredInputsCostTpTimesTheirShard) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout l = tp8_one_sequence();
    const Stage s = whole(m);
    const LayerMemory regather = layer_memory(m, l);
    const double other = stage_memory_in_passes(m, c, l, s, 1.0).other_bytes;
    l.tp_recompute_allgather = false;
    const LayerMemory keep = layer_memory(m, l);
    EXPECT_DOUBLE_EQ(keep.act_dense - regather.act_dense, 58'720'256.0);
    EXPECT_DOUBLE_EQ(keep.act_full_dense - regather.act_full_dense, 58'720'256.0);
    EXPECT_DOUBLE_EQ(keep.act_head - regather.act_head, 29'360'128.0);
    EXPECT_DOUBLE_EQ(other - stage_memory_in_passes(m, c, l, s, 1.0).other_bytes, 67'108'864.0);
    l.sequence_parallel = false;
    Layout no_sp = l;
    no_sp.tp_recompute_allgather = true;
    EXPECT_DOUBLE_EQ(layer_memory(m, l).act_dense, layer_memory(m, no_sp).act_dense);
    EXPECT_DOUBLE_EQ(layer_memory(m, l).act_head, layer_memory(m, no_sp).act_head);
}

// The peak's moment while the passes run (the optimizer step's, below, weighed after). Llama 3 8B on one
// GPU per stage, T = 4096, fused kernels, nothing recomputed. One
// layer's MLP keeps gate and up, 2 B · T · 2f = 234,881,024, and the activation output, 2 B · T · f =
// 117,440,512: 352,321,536 B, more than attention's Q, K, V, O and log-sum-exp (2·T·(4096 + 1024 + 1024)
// + 2·T·4096 + 4·T·32 = 84,410,368), so a layer's backward holds that much in gradients at once. On the
// stage with the LM head the loss holds the bf16 logits beside the fp32 copy, 2 B · T · V = 2 · 4096 ·
// 128256 = 1,050,673,152 B, which is more: its peak is the loss. Stage 0 of two peaks in a layer's
// backward: 352,321,536 B plus the send and receive buffers of one boundary activation each,
// 2 · 2 B · T · h = 67,108,864 B.
TEST(Memory, ThePeakIsTheLossOrALayersBackwardWhicheverHoldsMore) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout l;
    l.pp = 2;
    l.global_batch = 8;
    l.seq_len = 4096;
    const auto st = split_stages(m, l);
    const MemoryBreakdown first = stage_memory_in_passes(m, c, l, st[0], 2.0);
    EXPECT_EQ(first.peak, PeakMoment::backward);
    EXPECT_DOUBLE_EQ(first.other_bytes, 352'321'536.0 + 67'108'864.0);
    const MemoryBreakdown last = stage_memory_in_passes(m, c, l, st[1], 1.0);
    EXPECT_EQ(last.peak, PeakMoment::loss);
    EXPECT_DOUBLE_EQ(last.other_bytes, 1'050'673'152.0 + 67'108'864.0);
}

// The optimizer step's moment. Llama 3 8B whole on one GPU, P = 8,030,261,248 parameters, ZeRO-0, 16-bit
// gradients (NeMo's and Megatron-Bridge's recipes reduce in bf16), full recomputation at T = 2048: the
// passes hold little beyond the state (32 layer inputs and the loss's logits, a few GB), but before its step
// an fp32-master optimizer copies the 16-bit gradients it owns to fp32 (Megatron-Core's
// `_copy_model_grads_to_main_grads`, `.float()`): 2 + 2 + 12 + 4 = 20 B a parameter, 160,605,224,960 B,
// with no activation left. The allocator still keeps what the passes reserved, which the copies reuse
// first: reserved is the larger of the two. With fp32 gradients `.float()` copies nothing; with ZeRO-1 over
// 8 GPUs the copies are of an eighth (4P/8 = 4,015,130,624 B), which, without recomputation at T = 4096,
// is less than the passes hold (32 layers' activations, over 10 GB).
TEST(Memory, TheOptimizerStepIsThePeakWhenItsFp32GradientCopiesOutweighThePasses) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = cluster(1);
    Layout l;
    l.global_batch = 1;
    l.seq_len = 2048;
    l.zero = 0;
    l.recompute = Recompute::full;
    const Stage s = whole(m);
    const double P = 8'030'261'248.0;
    const MemoryBreakdown passes = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_DOUBLE_EQ(passes.step_bytes, 4.0 * P);
    EXPECT_LT(passes.activations_bytes + passes.pass_bytes, 4.0 * P);
    const MemoryBreakdown mem = stage_memory(m, c, l, s, 1.0);
    EXPECT_EQ(mem.peak, PeakMoment::optimizer);
    EXPECT_DOUBLE_EQ(mem.activations_bytes, 0.0);
    EXPECT_DOUBLE_EQ(mem.allocated_bytes(), 160'605'224'960.0 + (passes.other_bytes - passes.pass_bytes));
    EXPECT_DOUBLE_EQ(mem.reserved_bytes(), std::max(passes.reserved_bytes(), mem.allocated_bytes()));
    EXPECT_GT(mem.allocated_bytes(), passes.allocated_bytes());
    // The plan reports the same moment, and the report says so.
    const Plan p = evaluate(m, c, l);
    EXPECT_EQ(p.memory.peak, PeakMoment::optimizer);
    EXPECT_DOUBLE_EQ(p.memory.allocated_bytes(), mem.allocated_bytes());
    EXPECT_EQ(plan_to_json(p)["memory"]["peak"], "optimizer");
    // fp32 gradients: nothing copied, the passes are the peak.
    Layout fp32 = l;
    fp32.grad_dtype = GradDtype::fp32;
    EXPECT_DOUBLE_EQ(stage_memory_in_passes(m, c, fp32, s, 1.0).step_bytes, 0.0);
    EXPECT_NE(stage_memory(m, c, fp32, s, 1.0).peak, PeakMoment::optimizer);
    // ZeRO-1 over 8 GPUs: the optimizer owns an eighth, and copies only that.
    Layout z1 = l;
    z1.dp = 8;
    z1.global_batch = 8;
    z1.zero = 1;
    z1.seq_len = 4096;
    z1.recompute = Recompute::none;
    EXPECT_DOUBLE_EQ(stage_memory_in_passes(m, cluster(8), z1, s, 1.0).step_bytes, 4'015'130'624.0);
    EXPECT_NE(stage_memory(m, cluster(8), z1, s, 1.0).peak, PeakMoment::optimizer);
}

// Where the step's copies set the peak, the changes that make a layout fit include fp32 gradients. Llama 3
// 70B at TP 16 on 16 H100 (P = 70,553,706,496 / 16 ≈ 4.41 B parameters a GPU, ZeRO over one DP rank): with
// 16-bit gradients the step holds 20 B a parameter, 88.2 GB, more than the 85.5 usable; with fp32 ones
// 18 B throughout, 79.4 GB and the passes' few GB under full recomputation: it fits.
TEST(Memory, FitChangesOfferFp32GradientsWhereTheStepsCopiesSetThePeak) {
    const ModelSpec m = preset_model("llama3-70b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 16;
    Layout l;
    l.tp = 16;
    l.sequence_parallel = true;
    l.global_batch = 16;
    l.seq_len = 2048;
    l.recompute = Recompute::full;
    const Plan p = evaluate(m, c, l);
    ASSERT_FALSE(p.rejection);
    EXPECT_EQ(p.memory.peak, PeakMoment::optimizer);
    EXPECT_FALSE(p.memory_fits);
    const std::vector<FitChange> changes = fit_changes(m, c, l, p);
    const auto fp32 = std::find_if(changes.begin(), changes.end(), [](const FitChange& f) {
        return f.change == "gradients in fp32 (no copy at the optimizer step)";
    });
    ASSERT_NE(fp32, changes.end());
    EXPECT_TRUE(fp32->plan.memory_fits);
    EXPECT_NE(fp32->plan.memory.peak, PeakMoment::optimizer);
    // Where the passes set the peak, it is not offered.
    Layout fits = l;
    fits.grad_dtype = GradDtype::fp32;
    for (const FitChange& f : fit_changes(m, c, fits, evaluate(m, c, fits))) EXPECT_EQ(f.change.find("gradients in fp32"), std::string::npos);
}

// Full recomputation's method and N (Megatron's --recompute-method, --recompute-num-layers). Llama 3 8B,
// 32 layers on one GPU, T = 4096: a checkpointed layer keeps its input, 2 B · T · h = 2 · 4096 · 4096 =
// 33,554,432 B. uniform N = 1: 32 inputs; uniform N = 4: 8 group inputs, and a group of 4 layers
// recomputed at once in the backward; block N = 4: 4 inputs and every activation of the other 28 layers,
// with one layer recomputed at a time, and an eighth of uniform's replayed forwards.
TEST(Memory, FullRecomputeByMethodAndNumberOfLayers) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = cluster(1);
    Layout l;
    l.global_batch = 1;
    l.seq_len = 4096;
    l.zero = 0;
    l.recompute = Recompute::full;
    const Stage s{0, m.layers, 0, false, false, 0};  // no embedding or head: layers only
    const double input = 33'554'432.0;
    Layout none = l;
    none.recompute = Recompute::none;
    const double full = layer_activation_bytes(m, none, false);
    auto act = [&](RecomputeMethod method, int64_t n) {
        Layout x = l;
        x.recompute_method = method;
        x.recompute_layers = n;
        return stage_memory_in_passes(m, c, x, s, 1.0).activations_bytes;
    };
    EXPECT_DOUBLE_EQ(act(RecomputeMethod::uniform, 1), 32 * input + full);
    EXPECT_DOUBLE_EQ(act(RecomputeMethod::uniform, 4), 8 * input + 4 * full);
    EXPECT_DOUBLE_EQ(act(RecomputeMethod::block, 4), 4 * input + 28 * full + full);
    EXPECT_DOUBLE_EQ(act(RecomputeMethod::block, 40), 32 * input + full);  // more than the stage has: all of it
    // Time: block N = 4 replays 4 of 32 layers' forwards, uniform all 32.
    Layout block = l;
    block.recompute_method = RecomputeMethod::block;
    block.recompute_layers = 4;
    const Plan pu = evaluate(m, c, l), pb = evaluate(m, c, block);
    EXPECT_NEAR(pb.stages[0].times.recompute_s, pu.stages[0].times.recompute_s / 8.0, 1e-12);
    EXPECT_NEAR(pb.time.recompute_s, pu.time.recompute_s / 8.0, 1e-9);
    EXPECT_LT(pb.throughput.hardware_flops_per_token, pu.throughput.hardware_flops_per_token);
    EXPECT_EQ(recomputed_layers(block, s), 4);
    block.schedule = Schedule::interleaved;  // N per chunk: two chunks of a rank, 8 layers
    block.vpp = 2;
    EXPECT_EQ(recomputed_layers(block, s), 8);
}

// Context parallelism: the ring attention's backward double-buffers the K/V chunk it passes on and the
// dK/dV it returns. Llama 3 8B with an MLP of 1,024 (so attention is the larger block), CP 2 at 4,096
// tokens: T = 2,048 local tokens. Attention keeps Q, K, V 2·T·(4096 + 1024 + 1024) = 25,165,824, O
// 2·T·4096 = 16,777,216 and the log-sum-exp 4·T·32 = 262,144; the ring adds 2 · 2 · 2·T·(1024 + 1024) =
// 33,554,432: 75,759,616 B of gradients and buffers in its backward, more than the MLP's 6·T·1024 =
// 12,582,912. Stage 0 of two adds its boundary send and receive buffers, 2 · 2·T·4096 = 33,554,432.
TEST(Memory, RingAttentionDoubleBuffersKeysValuesAndTheirGradients) {
    ModelSpec m = preset_model("llama3-8b");
    m.ffn_hidden = 1024;
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout l;
    l.cp = 2;
    l.pp = 2;
    l.global_batch = 8;
    l.seq_len = 4096;
    const auto st = split_stages(m, l);
    const MemoryBreakdown mem = stage_memory(m, c, l, st[0], 2.0);
    EXPECT_EQ(mem.peak, PeakMoment::backward);
    EXPECT_DOUBLE_EQ(mem.other_bytes, 75'759'616.0 + 33'554'432.0);
}
