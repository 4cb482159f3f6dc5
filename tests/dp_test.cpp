// Data parallelism's traffic by ZeRO stage: what is reduced and gathered, how often, and what hides it.
#include <gtest/gtest.h>

#include <string>

#include "plan_helpers.h"
#include "shardplan/report.h"

using namespace shardplan;
using namespace shardplan::testing;

// DP overlap (Megatron's --overlap-grad-reduce / --overlap-param-gather, DDP's buckets, DeepSpeed's
// overlap_comm): on, the reduce-scatter hides under overlap_dp of the last backward and the all-gather under
// overlap_dp of the first forward; off, both run exposed after the backward. Llama 3 8B on 64 H100s, DP 64,
// ZeRO-1, one micro-batch a rank: the traffic is the same either way, off exposes all of it, and the step
// grows by exactly what is no longer hidden. ZeRO-3 prefetches its gathers whatever the flag says.
TEST(Dp, OverlapOffExposesTheReductionAndTheGather) {
    Layout l = layout(1, 1, 64, 64);
    l.zero = 1;
    const Plan on = plan_of("llama3-8b", "dgx-h100", 64, l);
    l.dp_comm_overlap = false;
    const Plan off = plan_of("llama3-8b", "dgx-h100", 64, l);
    ASSERT_TRUE(find(on, Axis::dp) && find(off, Axis::dp));
    EXPECT_DOUBLE_EQ(find(off, Axis::dp)->time_s, find(on, Axis::dp)->time_s);
    EXPECT_DOUBLE_EQ(find(off, Axis::dp)->bytes_per_step, find(on, Axis::dp)->bytes_per_step);
    EXPECT_DOUBLE_EQ(find(off, Axis::dp)->exposed_s, find(off, Axis::dp)->time_s);
    EXPECT_LT(find(on, Axis::dp)->exposed_s, find(off, Axis::dp)->exposed_s);
    EXPECT_NEAR(off.time.step_s - on.time.step_s, find(off, Axis::dp)->exposed_s - find(on, Axis::dp)->exposed_s,
                1e-9 * off.time.step_s);
    auto says = [](const Plan& p) {  // the finding that names the flags, where the traffic costs 5 % or more
        for (const std::string& f : plan_findings(p))
            if (f.find("DP traffic runs after the backward") != std::string::npos) return f.find("--overlap-grad-reduce") != std::string::npos;
        return false;
    };
    ASSERT_GE(find(off, Axis::dp)->exposed_s, 0.05 * off.time.step_s);
    EXPECT_TRUE(says(off));
    EXPECT_FALSE(says(on));
    l.zero = 3;
    const Plan fsdp_off = plan_of("llama3-8b", "dgx-h100", 64, l);
    l.dp_comm_overlap = true;
    EXPECT_DOUBLE_EQ(fsdp_off.time.step_s, plan_of("llama3-8b", "dgx-h100", 64, l).time.step_s);
}

// ZeRO-2 keeps only gradient shards, so each micro-batch's backward reduce-scatters its own gradients
// (DeepSpeed's engine.allreduce_gradients: stage 2 "communicates during non gradient accumulation
// boundaries as well"; FSDP's SHARD_GRAD_OP outside no_sync); ZeRO-1 accumulates whole gradients and
// reduces them once. Llama 3 8B (8,030,261,248 parameters) on 64 H100s, DP 64, bf16 gradients, global
// batch 256 at micro-batch 1: 4 micro-batches a rank. A ring over 64 ranks puts 63/64 of S on the wire:
// reduce-scatter R = 2 B · 8.030e9 · 63/64 = 15.81 GB, all-gather of the bf16 weights the same G.
// ZeRO-1: R + G = 31.62 GB in 2 calls; ZeRO-2: 4·R + G = 79.05 GB in 5 calls. At one micro-batch a
// step the two move the same. With DP overlap off every byte is exposed, so the step grows by the three
// extra reduce-scatters' time; an eager accumulation pass then covers the shard alone, a 64th.
TEST(Dp, ZeroTwoReduceScattersEveryMicroBatch) {
    Layout l = layout(1, 1, 64, 256);
    l.zero = 1;
    l.dp_comm_overlap = false;
    const Plan z1 = plan_of("llama3-8b", "dgx-h100", 64, l);
    l.zero = 2;
    const Plan z2 = plan_of("llama3-8b", "dgx-h100", 64, l);
    ASSERT_TRUE(find(z1, Axis::dp) && find(z2, Axis::dp));
    const double R = 2.0 * 8030261248.0 * 63.0 / 64.0;
    EXPECT_NEAR(find(z1, Axis::dp)->bytes_per_step, 2 * R, 1e-6 * R);
    EXPECT_NEAR(find(z2, Axis::dp)->bytes_per_step, 5 * R, 1e-6 * R);
    EXPECT_DOUBLE_EQ(find(z1, Axis::dp)->calls_per_step, 2);
    EXPECT_DOUBLE_EQ(find(z2, Axis::dp)->calls_per_step, 5);
    EXPECT_STREQ(find(z2, Axis::dp)->collective, "reduce-scatter per mb + all-gather");
    const double t_rs = (find(z2, Axis::dp)->time_s - find(z1, Axis::dp)->time_s) / 3;
    EXPECT_GT(t_rs, 0);
    EXPECT_NEAR(find(z2, Axis::dp)->exposed_s, find(z2, Axis::dp)->time_s, 1e-12);
    EXPECT_NEAR(z2.time.step_s, z1.time.step_s + 3 * t_rs, 1e-9 * z1.time.step_s);
    // The finding that names the overlap flags says where ZeRO-2's reductions would hide.
    ASSERT_GE(find(z2, Axis::dp)->exposed_s, 0.05 * z2.time.step_s);
    bool says = false;
    for (const std::string& f : plan_findings(z2))
        says = says || f.find("under each micro-batch's backward") != std::string::npos;
    EXPECT_TRUE(says);
    // With a pass that adds each micro-batch's gradients to fp32 buffers (eager accumulation), ZeRO-2's
    // pass covers the shard: the step is shorter than the traffic alone would make it.
    l.grad_accumulation = GradAccumulation::eager;
    const Plan z2_eager = plan_of("llama3-8b", "dgx-h100", 64, l);
    l.zero = 1;
    const Plan z1_eager = plan_of("llama3-8b", "dgx-h100", 64, l);
    EXPECT_LT(z2_eager.time.step_s - z1_eager.time.step_s, 3 * t_rs);
    // One micro-batch a rank: the same traffic as ZeRO-1.
    l.grad_accumulation = GradAccumulation::fused;
    l.global_batch = 64;
    const Plan z1_one = plan_of("llama3-8b", "dgx-h100", 64, l);
    l.zero = 2;
    const Plan z2_one = plan_of("llama3-8b", "dgx-h100", 64, l);
    EXPECT_DOUBLE_EQ(find(z2_one, Axis::dp)->bytes_per_step, find(z1_one, Axis::dp)->bytes_per_step);
    EXPECT_STREQ(find(z2_one, Axis::dp)->collective, "reduce-scatter + all-gather");
}

// Tied embeddings under PP: the first stage's input embedding and the last stage's output layer are one
// matrix held on two ranks, so after the backward their gradients are all-reduced between the two
// (Megatron-LM's _allreduce_word_embedding_grads), exposed. GPT-3 175B (tied, V 50,257, h 12,288) on
// 1,024 A100s at TP 8 · PP 8 · DP 16: a vocab-parallel shard of ⌈50,257/8⌉ = 6,283 rows, in bf16
// gradients S = 2 · 6,283 · 12,288 = 154,411,008 B; an all-reduce of two ranks puts 2·(2 − 1)/2 · S = S
// on the wire, once a step. PP's stride is 128 ranks here, so the end stages sit on different servers.
// The same model untied plans the same but for that term; fp32 gradients double it; PP 1 and DualPipe
// (whose end ranks each hold both ends) have none.
TEST(Dp, TiedEmbeddingGradientsAreAllReducedBetweenTheEndStages) {
    const ModelSpec tied = preset_model("gpt3-175b");
    ASSERT_TRUE(tied.tied_embeddings);
    ModelSpec untied = tied;
    untied.tied_embeddings = false;
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 1024;
    Layout l = layout(8, 8, 16, 1536, 2048);
    auto tied_term = [](const Plan& p) -> const CommTerm* {
        for (const CommTerm& t : p.comm)
            if (t.axis == Axis::pp && t.gradient_sync) return &t;
        return nullptr;
    };
    const Plan a = evaluate(tied, c, l), b = evaluate(untied, c, l);
    const CommTerm* t = tied_term(a);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(tied_term(b), nullptr);
    EXPECT_STREQ(t->collective, "all-reduce (tied embedding)");
    EXPECT_EQ(t->group_size, 2);
    EXPECT_EQ(t->calls_per_step, 1);
    EXPECT_DOUBLE_EQ(t->bytes_per_step, 154411008.0);
    EXPECT_EQ(t->tier, Tier::scale_out);
    EXPECT_GT(t->time_s, 154411008.0 / c.gpu.scale_out_Bps);  // at most the NIC's line rate
    EXPECT_DOUBLE_EQ(t->exposed_s, t->time_s);
    EXPECT_NEAR(a.time.step_s - b.time.step_s, t->time_s, 1e-9 * a.time.step_s);
    // PP's sends stay the first PP term, whose per-call size the trace reads.
    ASSERT_NE(find(a, Axis::pp), nullptr);
    EXPECT_STREQ(find(a, Axis::pp)->collective, "send/recv");
    l.grad_dtype = GradDtype::fp32;
    EXPECT_DOUBLE_EQ(tied_term(evaluate(tied, c, l))->bytes_per_step, 2 * 154411008.0);
    Layout flat = layout(8, 1, 128, 1536, 2048);
    flat.recompute = Recompute::full;
    EXPECT_EQ(tied_term(evaluate(tied, c, flat)), nullptr);
    l.schedule = Schedule::dualpipe;
    l.grad_dtype = GradDtype::bf16;
    const Plan dual = evaluate(tied, c, l);
    ASSERT_FALSE(dual.rejection);
    EXPECT_EQ(tied_term(dual), nullptr);
}

// What hides still costs the SMs its kernels hold (docs/model.md §5.3): NCCL runs each channel as one
// CTA, and the computation a collective hides under runs on the SMs it leaves. Llama 3 8B on one DGX
// H100, DP 8, ZeRO-1, 8 micro-batches a rank, with the whole last backward and first forward free to hide
// the DP traffic (overlap_dp 1): with comm_sms 0 nothing is exposed, so all of it, C, runs hidden; at the
// default 24 of the H100's 132 SMs the step pays 24/132 of C, at 66 half of it, on a GPU with no SM count
// none. Where only part H hides (overlap_dp 0.02) the exposed time is C − H·(1 − 24/132), H read from the
// plan with comm_sms 0 as C less what it exposes. Only then does the term sit on the critical path: traffic
// that hides in full is reported hidden, its exposed time the SMs' alone. TP overlap's chunks (userbuffers'
// ring exchange, one SM) are not charged: the TP term of a TP 8 layout with tp_comm_overlap does not move.
TEST(Dp, HiddenTrafficPaysTheSmsItsKernelsHold) {
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    c.gpu.eff.overlap_dp = 1.0;
    Layout l = layout(1, 1, 8, 64);
    l.zero = 1;
    const ModelSpec m = preset_model("llama3-8b");
    auto dp_with = [&](double sms, int64_t gpu_sms, const Layout& lay) {
        ClusterSpec x = c;
        x.gpu.eff.comm_sms = sms;
        x.gpu.sms = gpu_sms;
        const Plan p = evaluate(m, x, lay);
        EXPECT_FALSE(p.rejection);
        return *find(p, Axis::dp);
    };
    const CommTerm free = dp_with(0, 132, l);
    ASSERT_GT(free.time_s, 0.0);
    EXPECT_DOUBLE_EQ(free.exposed_s, 0.0);  // all of it hidden
    EXPECT_NEAR(dp_with(24, 132, l).exposed_s, free.time_s * 24.0 / 132.0, 1e-12);
    EXPECT_FALSE(dp_with(24, 132, l).critical_path);
    EXPECT_NEAR(dp_with(66, 132, l).exposed_s, free.time_s * 0.5, 1e-12);
    EXPECT_DOUBLE_EQ(dp_with(24, 0, l).exposed_s, 0.0);
    c.gpu.eff.overlap_dp = 0.02;
    const CommTerm part = dp_with(0, 132, l);
    ASSERT_GT(part.exposed_s, 0.0);
    const double hidden = part.time_s - part.exposed_s;
    ASSERT_GT(hidden, 0.0);
    EXPECT_NEAR(dp_with(24, 132, l).exposed_s, part.time_s - hidden * (1.0 - 24.0 / 132.0), 1e-12);
    EXPECT_TRUE(dp_with(24, 132, l).critical_path);
    Layout tp = layout(8, 1, 1, 8);
    tp.tp_comm_overlap = true;
    auto tp_with = [&](double sms) {
        ClusterSpec x = c;
        x.gpu.eff.comm_sms = sms;
        return find(evaluate(m, x, tp), Axis::tp)->exposed_s;
    };
    EXPECT_DOUBLE_EQ(tp_with(24), tp_with(0));
}

// With per-tensor FP8 parameters (fp8_params, Megatron's --fp8-param-gather) the distributed optimizer
// gathers the updated weights as they are held, 1 B each; the untied embeddings stay bf16. Llama 3 8B on
// 64 H100s, DP 64, ZeRO-1, FP8: its 8,030,261,248 parameters less 1,050,673,152 in the embeddings are
// 6,979,588,096 GEMM weights, so the all-gather puts 6,979,588,096 · 63/64 = 6,870,532,657.5 B fewer on
// the wire; the reduce-scatter is unchanged. MXFP8 gathers bf16 through the gradient buffer: no change.
TEST(Dp, Fp8ParametersAreGatheredInEightBits) {
    Layout l = layout(1, 1, 64, 64);
    l.zero = 1;
    l.precision = Precision::fp8;
    const Plan bf16_gather = plan_of("llama3-8b", "dgx-h100", 64, l);
    l.fp8_params = true;
    const Plan fp8_gather = plan_of("llama3-8b", "dgx-h100", 64, l);
    ASSERT_TRUE(find(bf16_gather, Axis::dp) && find(fp8_gather, Axis::dp));
    EXPECT_NEAR(find(bf16_gather, Axis::dp)->bytes_per_step - find(fp8_gather, Axis::dp)->bytes_per_step,
                6979588096.0 * 63.0 / 64.0, 1.0);
    EXPECT_LT(find(fp8_gather, Axis::dp)->time_s, find(bf16_gather, Axis::dp)->time_s);
    l.precision = Precision::mxfp8;
    const Plan mx = plan_of("llama3-8b", "dgx-b200", 64, l);
    l.fp8_params = false;
    EXPECT_DOUBLE_EQ(find(mx, Axis::dp)->bytes_per_step, find(plan_of("llama3-8b", "dgx-b200", 64, l), Axis::dp)->bytes_per_step);
}
