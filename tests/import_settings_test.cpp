// Launch settings that change what a run costs, both ways through export and import: gradient
// accumulation fusion and DeepSpeed's BF16 optimizer, expert overlap and group-limited routing, DP overlap,
// the MoE dispatcher, full recomputation's method and layers, the attention backend, the pipeline's p2p
// overlap. What every export writes and the round trip of whole layouts are import_test.cpp's.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "shardplan/export.h"
#include "shardplan/import.h"
#include "shardplan/presets.h"
#include "plan_helpers.h"

using namespace shardplan;
using shardplan::testing::run_by;

namespace {
// What an import is told besides the text: the model, the cluster and its GPU count.
ImportContext context(const ModelSpec& m, const ClusterSpec& c) {
    ImportContext ctx;
    ctx.model = m;
    ctx.cluster = c;
    ctx.gpus = c.gpus;
    return ctx;
}
// `l` exported as Megatron arguments and imported back: whether the arguments hold `flag`, and the layout
// read from them.
std::pair<bool, Layout> megatron_round_trip(const ModelSpec& m, const ClusterSpec& c, const Layout& l, const std::string& flag) {
    const Export e = export_config(m, c, l, Framework::megatron);
    if (e.refusal) ADD_FAILURE() << *e.refusal;
    return {e.text.find(flag) != std::string::npos, import_launch(Framework::megatron, e.text, context(m, c), "exported").c.layout};
}
}  // namespace

// Megatron's --no-gradient-accumulation-fusion is grad_accumulation eager, both ways; without it the
// weight-gradient GEMM accumulates into main_grad (fused). A DeepSpeed config with bf16 runs its BF16
// optimizer (eager accumulation, bf16 gradients kept: grad_buckets low_precision, fp32 gradients); with
// fp16 none of these, the gradients 16-bit (a case naming DeepSpeed gets the same: framework_defaults). At
// ZeRO stage 0 that optimizer still partitions the fp32 state over DP (BLOOM's "bf16 must use z0! it
// implements its own zero stage 1 equivalent"): imported as ZeRO-1, and said so.
TEST(Import, GradientAccumulationFusionRoundTripsAndDeepSpeedBf16IsEager) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    Layout l;
    l.tp = 2;
    l.dp = 4;
    l.global_batch = 32;
    ImportContext ctx = context(m, c);
    for (GradAccumulation g : {GradAccumulation::fused, GradAccumulation::eager}) {
        l.grad_accumulation = g;
        const auto [written, back] = megatron_round_trip(m, c, l, "--no-gradient-accumulation-fusion");
        EXPECT_EQ(written, g == GradAccumulation::eager);
        EXPECT_EQ(back.grad_accumulation, g);
    }
    ctx.seq_len = 4096;
    const std::string bf16 = R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4,
        "bf16": {"enabled": true}, "zero_optimization": {"stage": 1}})";
    const Layout b = import_launch(Framework::deepspeed, bf16, ctx, "ds").c.layout;
    EXPECT_EQ(b.grad_accumulation, GradAccumulation::eager);
    EXPECT_EQ(b.grad_buckets, GradBuckets::low_precision);
    EXPECT_EQ(b.grad_dtype, GradDtype::fp32);
    const std::string fp16 = R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4,
        "fp16": {"enabled": true}, "zero_optimization": {"stage": 1}})";
    const Layout h = import_launch(Framework::deepspeed, fp16, ctx, "ds").c.layout;
    EXPECT_EQ(h.grad_accumulation, GradAccumulation::fused);
    EXPECT_EQ(h.grad_buckets, GradBuckets::views);
    EXPECT_EQ(h.grad_dtype, GradDtype::bf16);  // fp16 gradients, reduced in fp16: 16-bit
    const std::string bloom = R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4,
        "bf16": {"enabled": true}, "zero_optimization": {"stage": 0}})";
    const Imported z0 = import_launch(Framework::deepspeed, bloom, ctx, "ds");
    EXPECT_EQ(z0.c.layout.zero, 1);
    ASSERT_FALSE(z0.notes.empty());
    EXPECT_NE(z0.notes.back().find("partitions the fp32 master weights"), std::string::npos);
    const std::string fp16_z0 = R"({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 4,
        "fp16": {"enabled": true}, "zero_optimization": {"stage": 0}})";
    EXPECT_EQ(import_launch(Framework::deepspeed, fp16_z0, ctx, "ds").c.layout.zero, 0);
}

// DeepSeek-V3 fully sharded over 2,048 H800 with EP 64, the MoE round trips' job.
struct DeepSeekJob {
    ModelSpec m = preset_model("deepseek-v3");
    ClusterSpec c = [] {
        ClusterSpec k = preset_cluster("h800");
        k.gpus = 2048;
        return k;
    }();
    Layout l = [] {
        Layout x;
        x.ep = 64;
        x.dp = 2048;
        x.zero = 3;
        x.global_batch = 16384;
        return x;
    }();
    ImportContext ctx() const {
        ImportContext x;
        x.cluster = c;
        x.gpus = c.gpus;
        return x;
    }
};

// EP overlap and DeepSeek-V3's group-limited routing travel to Megatron-LM and back: a layout without
// pipelining and 8 micro-batches writes --overlap-moe-expert-parallel-comm, the model
// --moe-router-num-groups 8 --moe-router-group-topk 4; torchtitan, which has no such overlap, refuses
// with the way out.
TEST(Import, MegatronExpertOverlapAndGroupLimitedRoutingRoundTrip) {
    DeepSeekJob j;
    const ModelSpec& m = j.m;
    const ClusterSpec& c = j.c;
    Layout& l = j.l;
    l.ep_comm_overlap = true;
    const Export e = export_config(m, c, l, Framework::megatron);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    EXPECT_NE(e.text.find("--overlap-moe-expert-parallel-comm"), std::string::npos);
    EXPECT_NE(e.text.find("--moe-router-num-groups 8 --moe-router-group-topk 4"), std::string::npos);
    const Case back = import_launch(Framework::megatron, e.text, j.ctx(), "exported").c;
    EXPECT_TRUE(back.layout.ep_comm_overlap);
    EXPECT_EQ(back.model.name, "deepseek-v3");  // the groups make it the preset again
    const Export tt = export_config(m, c, l, Framework::torchtitan);
    ASSERT_TRUE(tt.refusal);
    EXPECT_NE(tt.refusal->find("ep_comm_overlap false"), std::string::npos);
}

// DP overlap travels both ways: Megatron-LM writes --overlap-grad-reduce (with ZeRO-1 also
// --overlap-param-gather) only when the layout overlaps, and reads it back, its absence being Megatron's
// default (off); DeepSpeed's overlap_comm likewise, unset meaning on at stage 3 only; torchtitan, whose DDP
// and FSDP always overlap, refuses a layout that does not.
TEST(Import, DpOverlapRoundTripsAndTorchtitanRefusesItsAbsence) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 16;
    Layout l;
    l.dp = 16;
    l.global_batch = 64;
    l.seq_len = 4096;
    ImportContext ctx = context(m, c);
    ctx.seq_len = l.seq_len;
    for (const int zero : {0, 1})
        for (const bool on : {true, false}) {
            l.zero = zero;
            l.dp_comm_overlap = on;
            const Export e = export_config(m, c, l, Framework::megatron);
            ASSERT_FALSE(e.refusal) << *e.refusal;
            EXPECT_EQ(e.text.find("--overlap-grad-reduce") != std::string::npos, on) << zero;
            EXPECT_EQ(e.text.find("--overlap-param-gather") != std::string::npos, on && zero == 1) << zero;
            EXPECT_EQ(import_launch(Framework::megatron, e.text, ctx, "exported").c.layout.dp_comm_overlap, on) << zero;
        }
    l.zero = 1;
    l.precision = Precision::bf16;
    l = run_by(Framework::deepspeed, m, c, l);  // its BF16 optimizer
    for (const bool on : {true, false}) {
        l.dp_comm_overlap = on;
        const Export e = export_config(m, c, l, Framework::deepspeed);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        EXPECT_EQ(json::parse(e.text)["zero_optimization"]["overlap_comm"].get<bool>(), on);
        EXPECT_EQ(import_launch(Framework::deepspeed, e.text, ctx, "exported").c.layout.dp_comm_overlap, on);
    }
    json unset = json::parse(export_config(m, c, l, Framework::deepspeed).text);
    unset["zero_optimization"].erase("overlap_comm");
    EXPECT_FALSE(import_launch(Framework::deepspeed, unset.dump(), ctx, "dropped").c.layout.dp_comm_overlap);
    unset["zero_optimization"]["stage"] = 3;
    EXPECT_TRUE(import_launch(Framework::deepspeed, unset.dump(), ctx, "dropped").c.layout.dp_comm_overlap);
    l.zero = 0;  // DDP: torchtitan has no ZeRO-1
    l.dp_comm_overlap = false;
    const Export tt = export_config(m, c, l, Framework::torchtitan);
    ASSERT_TRUE(tt.refusal);
    EXPECT_NE(tt.refusal->find("dp_comm_overlap true"), std::string::npos) << *tt.refusal;
}

// The MoE dispatcher: Megatron's --moe-token-dispatcher-type flex with --moe-flex-dispatcher-backend (DeepEP
// its default; the older --moe-enable-deepep too), torchtitan's parallelism.expert_parallel_comm_backend;
// both round-trip. Megatron's allgather dispatcher, and its absence (allgather is Megatron's default), is
// planned as alltoall and said so.
TEST(Import, MoeDispatcherRoundTripsAndAllgatherIsSaidToBePlannedAsAlltoall) {
    DeepSeekJob j;
    const ModelSpec& m = j.m;
    const ClusterSpec& c = j.c;
    Layout& l = j.l;
    const ImportContext ctx = j.ctx();
    for (Dispatcher d : {Dispatcher::alltoall, Dispatcher::deepep, Dispatcher::hybridep}) {
        l.moe_dispatcher = d;
        const Export e = export_config(m, c, l, Framework::megatron);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        EXPECT_EQ(import_launch(Framework::megatron, e.text, ctx, "exported").c.layout.moe_dispatcher, d);
        Layout as_tt = run_by(Framework::torchtitan, m, c, l);
        as_tt.moe_dispatcher = d;
        const Export tt = export_config(m, c, as_tt, Framework::torchtitan);
        ASSERT_FALSE(tt.refusal) << *tt.refusal;
        EXPECT_NE(tt.text.find(d == Dispatcher::alltoall ? "expert_parallel_comm_backend = \"standard\""
                                                          : "expert_parallel_comm_backend = \""), std::string::npos);
        ImportContext tctx = ctx;
        tctx.model = m;
        EXPECT_EQ(import_launch(Framework::torchtitan, tt.text, tctx, "exported").c.layout.moe_dispatcher, d);
    }
    l.moe_dispatcher = Dispatcher::alltoall;
    std::string text = export_config(m, c, l, Framework::megatron).text;
    const std::string a2a = "--moe-token-dispatcher-type alltoall";
    ASSERT_NE(text.find(a2a), std::string::npos);
    const std::string legacy = std::string(text).replace(text.find(a2a), a2a.size(), "--moe-enable-deepep");
    EXPECT_EQ(import_launch(Framework::megatron, legacy, ctx, "exported").c.layout.moe_dispatcher, Dispatcher::deepep);
    const std::string ag = std::string(text).replace(text.find(a2a), a2a.size(), "--moe-token-dispatcher-type allgather");
    const Imported back = import_launch(Framework::megatron, ag, ctx, "exported");
    EXPECT_EQ(back.c.layout.moe_dispatcher, Dispatcher::alltoall);
    bool said = false;
    for (const std::string& n : back.notes) said = said || n.find("allgather dispatcher") != std::string::npos;
    EXPECT_TRUE(said);
}

// Full recomputation's method and N travel through Megatron's flags both ways; torchtitan and DeepSpeed,
// which checkpoint every layer on its own, refuse any other choice and say how to plan instead.
TEST(Import, MegatronRecomputeMethodAndLayersRoundTrip) {
    const ModelSpec m = preset_model("llama3-70b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    Layout l;
    l.tp = 8;
    l.pp = 4;
    l.dp = 2;
    l.global_batch = 64;
    l.recompute = Recompute::full;
    l.recompute_method = RecomputeMethod::block;
    l.recompute_layers = 5;
    l.pipeline_sends = PipelineSends::blocking_1f1b;  // Megatron-Core's 1F1B waits for its sends
    const Export e = export_config(m, c, l, Framework::megatron);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    EXPECT_NE(e.text.find("--recompute-granularity full --recompute-method block --recompute-num-layers 5"), std::string::npos);
    ImportContext ctx = context(m, c);
    const Layout back = import_launch(Framework::megatron, e.text, ctx, "exported").c.layout;
    EXPECT_EQ(back.recompute, Recompute::full);
    EXPECT_EQ(back.recompute_method, RecomputeMethod::block);
    EXPECT_EQ(back.recompute_layers, 5);
    for (Framework f : {Framework::torchtitan, Framework::deepspeed}) {
        Layout one = l;
        one.pp = 1;
        one.dp = 8;
        one.zero = f == Framework::torchtitan ? 3 : 1;  // the ZeRO stage each can run with TP
        const Export r = export_config(m, c, one, f);
        ASSERT_TRUE(r.refusal) << enum_name(f);
        EXPECT_NE(r.refusal->find("--recompute-method uniform --recompute-layers 1"), std::string::npos) << *r.refusal;
    }
}

// The attention kernel by Megatron's --attention-backend names: each of flash, fused and unfused
// round-trips through a Megatron launch line; "auto" (or none) is what Transformer Engine picks on
// Hopper, fused. torchtitan's SDPA never stores the scores (unfused refused) and has no job-config key
// for cuDNN's kernel (fused exported with a comment saying how to ask for it).
TEST(Import, MegatronAttentionBackendRoundTripsAndTorchtitanSaysWhatSdpaRuns) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    ImportContext ctx;
    ctx.cluster = c;
    ctx.gpus = c.gpus;
    for (AttentionKernel k : {AttentionKernel::flash, AttentionKernel::fused, AttentionKernel::unfused}) {
        Layout l;
        l.dp = 8;
        l.zero = 3;  // FSDP: what torchtitan shards with
        l.global_batch = 64;
        l.attention_kernel = k;
        const Export e = export_config(m, c, l, Framework::megatron);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        EXPECT_NE(e.text.find("--attention-backend " + std::string(enum_name(k))), std::string::npos);
        EXPECT_EQ(import_launch(Framework::megatron, e.text, ctx, "exported").c.layout.attention_kernel, k);
        Layout as_tt = run_by(Framework::torchtitan, m, c, l);
        as_tt.attention_kernel = k;
        const Export tt = export_config(m, c, as_tt, Framework::torchtitan);
        EXPECT_EQ(tt.refusal.has_value(), k == AttentionKernel::unfused) << tt.refusal.value_or("");
        if (k == AttentionKernel::fused) EXPECT_NE(tt.text.find("SDPBackend.CUDNN_ATTENTION"), std::string::npos);
        if (k == AttentionKernel::flash) EXPECT_EQ(tt.text.find("CUDNN"), std::string::npos);
    }
    // The same launch line without --attention-backend: Transformer Engine's choice, fused.
    Layout l;
    l.dp = 8;
    l.global_batch = 64;
    std::string text = export_config(m, c, l, Framework::megatron).text;
    const std::string flag = "--attention-backend flash \\\n";
    ASSERT_NE(text.find(flag), std::string::npos);
    text.erase(text.find(flag), flag.size());
    EXPECT_EQ(import_launch(Framework::megatron, text, ctx, "line").c.layout.attention_kernel, AttentionKernel::fused);
}

// Megatron's --no-overlap-p2p-communication is an interleaved layout's blocking sends, both ways; without
// it the import is Megatron-Core's own behaviour, blocking under 1F1B only.
TEST(Import, MegatronP2pOverlapRoundTrips) {
    const ModelSpec m = preset_model("llama3-70b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    Layout l;
    l.tp = 8;
    l.pp = 4;
    l.vpp = 5;
    l.schedule = Schedule::interleaved;
    l.dp = 2;
    l.global_batch = 64;
    l.seq_len = 4096;
    for (PipelineSends s : {PipelineSends::blocking, PipelineSends::blocking_1f1b}) {
        l.pipeline_sends = s;
        const auto [written, back] = megatron_round_trip(m, c, l, "--no-overlap-p2p-communication");
        EXPECT_EQ(written, s == PipelineSends::blocking);
        EXPECT_EQ(back.pipeline_sends, s);
    }
}

// An expert TP degree in a dense model's configuration splits nothing (Megatron reads
// --expert-tensor-parallel-size only for expert layers): the import drops it and says so, where the plan
// refuses a dense layout with an expert TP other than tp (etp_dense).
TEST(Import, ADenseModelsExpertTpIsDroppedAndSaid) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    Layout l;
    l.tp = 2;
    l.dp = 4;
    l.global_batch = 64;
    const Export e = export_config(m, c, l, Framework::megatron);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    const Imported back = import_launch(Framework::megatron, e.text + " --expert-tensor-parallel-size 1", context(m, c), "exported");
    EXPECT_EQ(back.c.layout.etp, 0);
    bool said = false;
    for (const std::string& n : back.notes) said = said || n.find("layout.etp: null") != std::string::npos;
    EXPECT_TRUE(said);
}
