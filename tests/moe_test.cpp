// MoE load: the busiest EP rank's routed tokens over the mean (layout.moe_imbalance), or every expert
// padded to its capacity (layout.moe_capacity_factor), sizes that rank's expert GEMMs, dispatch and
// combine and expert activations; everything else stays as it was.
#include <gtest/gtest.h>

#include "shardplan/shardplan.h"

using namespace shardplan;

namespace {

// Mixtral 8x7B (h 4096, 8 experts of f_e 14336, top-2, SwiGLU), EP 8 on 64 H100, T = 4096 tokens a
// micro-batch.
struct Mixtral {
    ModelSpec m = preset_model("mixtral-8x7b");
    ClusterSpec c = preset_cluster("dgx-h100");
    Layout l;
    Mixtral() {
        c.gpus = 64;
        l.tp = 1;
        l.ep = 8;
        l.dp = 64;
        l.global_batch = 256;
        l.seq_len = 4096;
    }
};

}  // namespace

TEST(Moe, LoadFactorIsTheCapacityWhereSetElseTheImbalanceUpToEp) {
    Layout l;
    EXPECT_DOUBLE_EQ(moe_load_factor(l), 1.0);
    l.ep = 8;
    l.moe_imbalance = 1.3;
    EXPECT_DOUBLE_EQ(moe_load_factor(l), 1.3);
    l.moe_imbalance = 20;  // one rank holds at most all 8 ranks' share
    EXPECT_DOUBLE_EQ(moe_load_factor(l), 8.0);
    l.moe_capacity_factor = 1.25;  // padded to capacity: every expert takes exactly 1.25 × its share
    EXPECT_DOUBLE_EQ(moe_load_factor(l), 1.25);
}

// Dispatch and combine: a copy of each routed token, 2 · (T/tp) · h bytes, top-k of them: 2 · 4096 ·
// 4096 · 2 = 67,108,864 B balanced, × 1.5 on the busiest rank = 100,663,296 B.
TEST(Moe, TheBusiestRankSizesTheAllToAll) {
    Mixtral x;
    const GroupPlacement g{Axis::ep, 8, 1, 1, 8};
    const Fabric f = make_fabric(x.c);
    const Traffic even = ep_traffic(x.m, x.l, g, f);
    EXPECT_DOUBLE_EQ(even.buffer_bytes, 67'108'864.0);
    x.l.moe_imbalance = 1.5;
    const Traffic busy = ep_traffic(x.m, x.l, g, f);
    EXPECT_DOUBLE_EQ(busy.buffer_bytes, 100'663'296.0);
    EXPECT_GT(busy.time_s, even.time_s);
}

// A MoE layer keeps per routed token-expert pair (bf16, fused kernels, nothing recomputed): the expert's
// input 2·h, its gate and up outputs 2·f_e each and the activation's output 2·f_e = 2·4096 + 3·2·14336 =
// 94,208 B. Balanced, T·k = 8,192 pairs; with capacity factor 1.5, 12,288: 4,096 · 94,208 =
// 385,875,968 B more, and nothing else moves (attention, router, norms).
TEST(Moe, ExpertActivationsFollowTheLoad) {
    Mixtral x;
    const double even = layer_memory(x.m, x.l).act_moe;
    x.l.moe_capacity_factor = 1.5;
    const double padded = layer_memory(x.m, x.l).act_moe;
    EXPECT_DOUBLE_EQ(padded - even, 4096.0 * 94'208.0);
    EXPECT_DOUBLE_EQ(layer_memory(x.m, x.l).act_dense, [&] {
        Layout balanced = x.l;
        balanced.moe_capacity_factor = 0;
        return layer_memory(x.m, balanced).act_dense;
    }());
}

// The step: an imbalanced router slows the whole job (every rank waits in the all-to-alls for the
// busiest), and the model FLOPs (MFU's numerator) do not change: imbalance and padding are not the
// model's work.
TEST(Moe, ImbalanceSlowsTheStepNotTheModelFlops) {
    Mixtral x;
    const Plan even = evaluate(x.m, x.c, x.l);
    ASSERT_FALSE(even.rejection) << even.rejection->expected;
    x.l.moe_imbalance = 1.3;
    const Plan busy = evaluate(x.m, x.c, x.l);
    ASSERT_FALSE(busy.rejection);
    EXPECT_GT(busy.time.step_s, even.time.step_s);
    EXPECT_GT(busy.memory.total_bytes(), even.memory.total_bytes());
    EXPECT_DOUBLE_EQ(busy.throughput.model_flops_per_token, even.throughput.model_flops_per_token);
    EXPECT_LT(busy.throughput.mfu, even.throughput.mfu);
}

TEST(Moe, OutOfRangeLoadsAreRejectedWithTheirField) {
    Mixtral x;
    x.l.moe_imbalance = 0.9;
    auto p = check_layout(x.m, x.c, x.l);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->field, "layout.moe_imbalance");
    x.l.moe_imbalance = 1.0;
    x.l.moe_capacity_factor = -1;
    p = check_layout(x.m, x.c, x.l);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->field, "layout.moe_capacity_factor");
    // A dense model has no experts to drop tokens at.
    ModelSpec dense = preset_model("llama3-8b");
    Layout l;
    l.dp = 64;
    l.moe_capacity_factor = 1.0;
    p = check_layout(dense, x.c, l);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->field, "layout.moe_capacity_factor");
}

// The case format carries both; null capacity is dropless; a Megatron export writes the padded capacity
// and its import reads it back.
TEST(Moe, LoadSettingsRoundTripThroughJsonAndMegatron) {
    Mixtral x;
    x.l.moe_imbalance = 1.2;
    x.l.moe_capacity_factor = 1.25;
    const json j = to_json(x.l);
    EXPECT_DOUBLE_EQ(j["moe_imbalance"].get<double>(), 1.2);
    EXPECT_DOUBLE_EQ(j["moe_capacity_factor"].get<double>(), 1.25);
    const Layout back = layout_from_json(j);
    EXPECT_DOUBLE_EQ(back.moe_imbalance, 1.2);
    EXPECT_DOUBLE_EQ(back.moe_capacity_factor, 1.25);
    json dropless = j;
    dropless["moe_capacity_factor"] = nullptr;
    EXPECT_DOUBLE_EQ(layout_from_json(dropless).moe_capacity_factor, 0.0);
    EXPECT_TRUE(to_json(layout_from_json(dropless))["moe_capacity_factor"].is_null());
    const Export e = export_config(x.m, x.c, x.l, Framework::megatron);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    EXPECT_NE(e.text.find("--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity"), std::string::npos);
    ImportContext ctx;
    ctx.cluster = x.c;
    ctx.gpus = 64;
    const Imported in = import_launch(Framework::megatron, e.text, ctx, "exported");
    EXPECT_DOUBLE_EQ(in.c.layout.moe_capacity_factor, 1.25);
    // Without padding Megatron caps an expert at that share: planned padded, an upper bound, and said.
    std::string unpadded = e.text;
    unpadded.erase(unpadded.find(" --moe-pad-expert-input-to-capacity"), 35);
    const Imported cap = import_launch(Framework::megatron, unpadded, ctx, "unpadded");
    EXPECT_DOUBLE_EQ(cap.c.layout.moe_capacity_factor, 1.25);
    bool said = false;
    for (const std::string& n : cap.notes) said = said || n.find("upper bound") != std::string::npos;
    EXPECT_TRUE(said);
    // torchtitan's MoE is dropless.
    EXPECT_TRUE(export_config(x.m, x.c, x.l, Framework::torchtitan).refusal);
}

// layout.expert_gemms (enums.h). per_expert, the Megatron family's default: each of a rank's experts
// launches its two forward and four backward GEMMs from the host, one launch being t_host/150 of the
// layer's host time; grouped (torchtitan, DeepSeek's DeepGEMM): one launch, nothing more to issue.
// Qwen3-30B-A3B (128 experts) at EP 8 on H100 holds 16 a rank: 16 · 2 = 32 launches more forward and
// 64 backward, 32 · 3 ms/150 = 0.64 ms and 1.28 ms of host time a layer and micro-batch, which shows in
// part (t_gpu + t_host²/(t_host + t_gpu), compute.cpp), so the per-expert step is longer; Mixtral's one
// expert a rank at EP 8 adds 2 and 4 launches. A dense model has no experts to launch.
TEST(Moe, PerExpertLaunchesAreTheHostsToIssue) {
    EXPECT_EQ(framework_defaults("Megatron-Bridge").expert_gemms, ExpertGemms::per_expert);
    EXPECT_EQ(framework_defaults("NeMo 24.07").expert_gemms, ExpertGemms::per_expert);
    EXPECT_EQ(framework_defaults("torchtitan").expert_gemms, ExpertGemms::grouped);
    EXPECT_EQ(framework_defaults("HAI-LLM").expert_gemms, ExpertGemms::grouped);
    const ModelSpec m = preset_model("qwen3-30b-a3b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    Layout l;
    l.ep = 8;
    l.dp = 64;
    l.global_batch = 256;
    l.expert_gemms = ExpertGemms::grouped;
    const LayerWork grouped = layer_work(m, c, l, true);
    l.expert_gemms = ExpertGemms::per_expert;
    const LayerWork each = layer_work(m, c, l, true);
    EXPECT_GT(each.fwd_s, grouped.fwd_s);
    EXPECT_GT(each.bwd_s, grouped.bwd_s);
    // The host's extra launches are all the difference once the GPU's time is taken away: with no
    // host cost the two differ only by the waves the experts share (16 in one launch, 4 at a time).
    c.gpu.eff.layer_overhead_s = 0;
    const double host_free = layer_work(m, c, l, true).fwd_s;
    l.expert_gemms = ExpertGemms::grouped;
    EXPECT_LE(layer_work(m, c, l, true).fwd_s, host_free);
    const Plan dense_each = evaluate(preset_model("llama3-8b"), c, l);
    l.expert_gemms = ExpertGemms::per_expert;
    EXPECT_DOUBLE_EQ(evaluate(preset_model("llama3-8b"), c, l).time.step_s, dense_each.time.step_s);
}

// layout.expert_gemms both ways: JSON keeps it; a Megatron export writes --moe-grouped-gemm for
// per_expert (Transformer Engine's GroupedLinear) and adds --moe-use-legacy-grouped-gemm for grouped (the
// grouped_gemm package's one launch), and the import reads each back as written.
TEST(Moe, ExpertGemmsRoundTripThroughJsonAndMegatron) {
    Mixtral x;
    ImportContext ctx;
    ctx.cluster = x.c;
    ctx.gpus = 64;
    for (ExpertGemms g : {ExpertGemms::grouped, ExpertGemms::per_expert}) {
        x.l.expert_gemms = g;
        EXPECT_EQ(layout_from_json(to_json(x.l)).expert_gemms, g);
        const Export e = export_config(x.m, x.c, x.l, Framework::megatron);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        EXPECT_NE(e.text.find("--moe-grouped-gemm"), std::string::npos);
        EXPECT_EQ(e.text.find("--moe-use-legacy-grouped-gemm") != std::string::npos, g == ExpertGemms::grouped);
        EXPECT_EQ(import_launch(Framework::megatron, e.text, ctx, "exported").c.layout.expert_gemms, g);
    }
}

// Without expert parallelism (ep 1) the routed experts are replicated like the dense weights, so their
// gradients are reduced over the same dp·cp ranks: with etp left as tp no expert grid is placed, and the
// experts' DP term had been priced over the first group on hand, the TP group (4 ranks on NVLink),
// where an explicit etp of the same value priced it over the 16 data-parallel ranks across servers
// (found by an export → import round trip that changed a plan's step: Megatron's export writes etp).
TEST(Moe, WithoutExpertParallelismTheExpertsGradientsCrossTheDataParallelGroup) {
    Mixtral x;
    x.l.tp = 4;
    x.l.ep = 1;
    x.l.dp = 16;
    x.l.zero = 1;
    const Plan implicit = evaluate(x.m, x.c, x.l);
    x.l.etp = 4;
    const Plan explicit_etp = evaluate(x.m, x.c, x.l);
    ASSERT_FALSE(implicit.rejection);
    ASSERT_FALSE(explicit_etp.rejection);
    EXPECT_DOUBLE_EQ(implicit.time.step_s, explicit_etp.time.step_s);
    const CommTerm* dense = nullptr;
    const CommTerm* experts = nullptr;
    for (const CommTerm& t : implicit.comm) {
        if (t.axis == Axis::dp) dense = &t;
        if (t.axis == Axis::edp) experts = &t;
    }
    ASSERT_NE(dense, nullptr);
    ASSERT_NE(experts, nullptr);
    EXPECT_EQ(experts->group_size, 16);  // dp·cp, as the dense term's
    EXPECT_EQ(experts->group_size, dense->group_size);
    EXPECT_EQ(experts->crosses_domain, dense->crosses_domain);
    EXPECT_TRUE(experts->crosses_domain);  // 16 ranks at stride 4 span 8 servers
}

// A MoE model's changes that make a layout fit include expert parallelism, at the smallest doubling that
// fits: Qwen3-30B-A3B on 16 H100 at ZeRO 0 holds all 128 experts' weights, gradients and Adam state on every
// GPU (613 GB); EP 2, 4 and 8 leave it short, EP 16 (8 experts a GPU) fits. DP stays 16.
TEST(Moe, FitChangesOfferTheSmallestExpertParallelismThatFits) {
    const ModelSpec m = preset_model("qwen3-30b-a3b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 16;
    Layout l;
    l.dp = 16;
    l.global_batch = 64;
    l.seq_len = 4096;
    l.zero = 0;
    const Plan p = evaluate(m, c, l);
    ASSERT_FALSE(p.rejection);
    ASSERT_FALSE(p.memory_fits);
    const std::vector<FitChange> changes = fit_changes(m, c, l, p);
    const auto ep = std::find_if(changes.begin(), changes.end(), [](const FitChange& f) { return f.change.starts_with("EP "); });
    ASSERT_NE(ep, changes.end());
    EXPECT_EQ(ep->change, "EP 1 → 16");
    EXPECT_TRUE(ep->plan.memory_fits);
    EXPECT_EQ(ep->layout.dp, 16);
    Layout eight = l;
    eight.ep = 8;
    EXPECT_FALSE(evaluate(m, c, eight).memory_fits);
    // A dense model is offered none.
    const ModelSpec dense = preset_model("llama3-8b");
    for (const FitChange& f : fit_changes(dense, c, l, evaluate(dense, c, l))) EXPECT_FALSE(f.change.starts_with("EP ")) << f.change;
}

// ZeRO-2 holds one layer's gradients whole while the backward reduce-scatters them into its shard, and
// ZeRO-3 gathers one layer's weights: only what the data-parallel group shards. Mixtral 8x7B on 8 GPUs at
// EP 8 keeps each GPU's expert whole (expert data parallelism 1), so its transient is the MoE layer's
// other parameters: attention 4096·4096·2 (q, o) + 4096·1024·2 (k, v) = 41,943,040, router 8·4096 =
// 32,768, two norms 8,192; 41,984,000 fp32 gradients = 167,936,000 bytes. On 16 GPUs (expert data
// parallelism 2) its expert is sharded too: + 3·4096·14336 = 176,160,768, × 4 B = 872,579,072 bytes.
TEST(Moe, ZeroShardsTransientsOnlyWhatItShards) {
    Mixtral x;
    x.l.grad_dtype = GradDtype::fp32;
    const Stage s{0, 32, 32, true, true, 0};
    auto transient = [&](int64_t dp) {
        x.l.dp = dp;
        x.c.gpus = dp;
        x.l.global_batch = dp;
        x.l.zero = 1;
        const double z1 = stage_memory_in_passes(x.m, x.c, x.l, s, 1.0).pass_bytes;
        x.l.zero = 2;
        return stage_memory_in_passes(x.m, x.c, x.l, s, 1.0).pass_bytes - z1;
    };
    EXPECT_DOUBLE_EQ(transient(8), 167'936'000.0);
    EXPECT_DOUBLE_EQ(transient(16), 872'579'072.0);
}

// FP8's cached weight copies (the 8-bit weight and its transpose on Hopper, 2 B a parameter) under
// ZeRO-3 exist for the shard a GPU holds: the dense parameters over dp·cp, the routed experts over the
// expert-data-parallel group. Mixtral on 16 H100 at EP 8 (expert data parallelism 2), a middle stage of
// all 32 layers: dense 32 · 41,984,000 / 16 = 83,968,000; experts 32 · 14336·4096·3 / 2 = 2,818,572,288;
// copies 2 · 2,902,540,288 = 5,805,080,576 bytes (the experts' shard had been taken as 1/16, 872,579,072).
TEST(Moe, Fp8CopiesUnderZero3FollowEachShard) {
    Mixtral x;
    x.l.dp = 16;
    x.c.gpus = 16;
    x.l.global_batch = 16;
    x.l.zero = 3;
    x.l.fp8_params = false;
    const Stage s{0, 32, 32, false, false, 0};
    auto held_buffers = [&](Precision p) {  // the buffers held through the step, not the passes' transients
        x.l.precision = p;
        const MemoryBreakdown mem = stage_memory_in_passes(x.m, x.c, x.l, s, 1.0);
        return mem.other_bytes - mem.pass_bytes;
    };
    EXPECT_DOUBLE_EQ(held_buffers(Precision::bf16), 0.0);
    EXPECT_DOUBLE_EQ(held_buffers(Precision::fp8), 5'805'080'576.0);
}
