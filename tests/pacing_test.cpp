// What paces a pipelined layer besides its kernels (layout.pipeline_pacing, enums.h): nanotron's
// pipeline engine, where its pipeline crosses nodes, held each layer of a micro-batch to about 3 ms per
// TP rank in the Ultra-Scale Playbook's runs (docs/validation.md, "nanotron's pipeline engine"); the
// floor is tp × the eager layer's launch cost (layer_overhead_s), a third forward, two thirds backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "helpers.h"
#include "shardplan/resolve.h"
#include "shardplan/shardplan.h"

using namespace shardplan;

namespace {

Layout nanotron_layout(int64_t tp, int64_t pp, int64_t dp) {
    Layout l;
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.sequence_parallel = tp > 1;
    l.seq_len = 4096;
    l.global_batch = 16 * dp;  // 16 micro-batches of one sequence a pipeline
    l.framework = "nanotron";
    apply_framework_defaults(framework_defaults(l.framework, "hopper"), l);
    return l;
}

ClusterSpec h100s(int64_t gpus) {
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = gpus;
    return c;
}

}  // namespace

// Llama 3 8B at TP 8 · PP 2 · DP 4 on 64 H100s (eight to a node): nanotron's ranks put TP innermost, then
// DP, then PP, so the pipeline's groups have stride 8 · 4 = 32 and join two nodes. Floor: 8 × 3 ms =
// 24 ms a layer and micro-batch, 8 ms forward and 16 ms backward; the layer's own kernels take well
// under 1 ms forward at TP 8 (2 · 218 M / 8 parameters · 4,096 tokens = 0.22 TFLOP), so the floor is the
// pass: fwd = 8 ms, bwd = 16 ms + the fp32 accumulation pass nanotron adds.
TEST(Pacing, NanotronsPipelineAcrossNodesHoldsEachLayerToTpLaunchCosts) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = h100s(64);
    EXPECT_DOUBLE_EQ(c.gpu.eff.layer_overhead_s, 3e-3);
    const Layout l = nanotron_layout(8, 2, 4);
    EXPECT_EQ(l.pipeline_pacing, PipelinePacing::nanotron);
    EXPECT_DOUBLE_EQ(paced_layer_s(c, l), 24e-3);
    const LayerWork w = layer_work(m, c, l, false);
    EXPECT_DOUBLE_EQ(w.fwd_s, 8e-3);
    EXPECT_GT(w.grad_accum_s, 0.0);
    EXPECT_DOUBLE_EQ(w.bwd_s - w.grad_accum_s, 16e-3);
    // Paced by its kernels the same layer is far shorter: the floor is what the pipelined runs measured,
    // not what the kernels take.
    Layout kernels = l;
    kernels.pipeline_pacing = PipelinePacing::kernels;
    EXPECT_DOUBLE_EQ(paced_layer_s(c, kernels), 0.0);
    const LayerWork k = layer_work(m, c, kernels, false);
    EXPECT_LT(k.fwd_s, 2e-3);
    EXPECT_LT(k.bwd_s - k.grad_accum_s, 4e-3);
    // Linear in TP: at TP 4 (DP 8) the floor halves.
    EXPECT_DOUBLE_EQ(paced_layer_s(c, nanotron_layout(4, 2, 8)), 12e-3);
}

// None where the runs showed none: at PP 1, and with the whole pipeline inside one node (TP 4 · PP 2 on
// eight GPUs: measured 12,013 tokens/s a GPU on the 1.34B model, within 2 % of the kernels' pace), or
// with the pipeline innermost so that its stages share a node.
TEST(Pacing, NoFloorWithoutAPipelineThatLeavesTheNode) {
    const ModelSpec m = preset_model("llama3-8b");
    EXPECT_DOUBLE_EQ(paced_layer_s(h100s(64), nanotron_layout(8, 1, 8)), 0.0);
    EXPECT_DOUBLE_EQ(paced_layer_s(h100s(8), nanotron_layout(4, 2, 1)), 0.0);
    Layout inner = nanotron_layout(4, 2, 8);
    inner.order = {Axis::pp, Axis::tp, Axis::cp, Axis::ep, Axis::dp};  // stages side by side in a node
    EXPECT_DOUBLE_EQ(paced_layer_s(h100s(64), inner), 0.0);
    Layout kernels = nanotron_layout(4, 2, 1);
    kernels.pipeline_pacing = PipelinePacing::kernels;
    const ClusterSpec node = h100s(8);
    EXPECT_DOUBLE_EQ(layer_work(m, node, nanotron_layout(4, 2, 1), false).fwd_s, layer_work(m, node, kernels, false).fwd_s);
}

// The whole step: the critical stage runs 16 micro-batches of its layers at 24 ms each at least, and the
// pipeline's fill and drain besides; nanotron's split by cost gives Llama 3 8B's two stages 18 and 14
// layers (the LM head counted beside the 14), and the critical one has the 18: 16 × 18 × 24 ms = 6.9 s,
// against well under 2 s paced by the kernels.
TEST(Pacing, TheStepTakesTheFloorOfEveryLayerAndMicroBatch) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = h100s(64);
    const Layout l = nanotron_layout(8, 2, 4);
    const Plan paced = evaluate(m, c, l);
    ASSERT_FALSE(paced.rejection);
    int64_t most = 0;
    for (const StageReport& st : paced.stages) most = std::max(most, st.stage.layers);
    EXPECT_EQ(most, 18);
    EXPECT_GE(paced.time.step_s, 16 * 18 * 24e-3);
    Layout kernels = l;
    kernels.pipeline_pacing = PipelinePacing::kernels;
    const Plan free = evaluate(m, c, kernels);
    EXPECT_LT(free.time.step_s, 2.0);
    EXPECT_GT(paced.time.step_s, 3.0 * free.time.step_s);
    // Memory does not move with it.
    EXPECT_DOUBLE_EQ(paced.memory.total_bytes(), free.memory.total_bytes());
    // The report says why the step is slow and what lifts it; without the floor it says nothing of it.
    auto paced_finding = [](const Plan& p) {
        for (const std::string& f : plan_findings(p))
            if (f.find("Paced by nanotron's pipeline across nodes: each layer takes at least 24 ms") == 0) return true;
        return false;
    };
    EXPECT_TRUE(paced_finding(paced));
    EXPECT_FALSE(paced_finding(free));
}

// A framework naming nanotron brings the pacing; a layout may state either; anything else is refused with
// the field's name.
TEST(Pacing, TheFrameworkBringsItAndALayoutMayStateIt) {
    EXPECT_EQ(framework_defaults("nanotron (benchmark branch, Dec 2024 - Jan 2025)").pipeline_pacing,
              PipelinePacing::nanotron);
    for (const char* f : {"Megatron-LM", "torchtitan", "DeepSpeed", ""})
        EXPECT_EQ(framework_defaults(f).pipeline_pacing, PipelinePacing::kernels) << f;
    json j = {{"model", "llama3-8b"},
              {"cluster", {{"gpu", "h100-sxm"}, {"gpus", 64}}},
              {"layout", {{"tp", 8}, {"pp", 2}, {"framework", "nanotron"}}}};
    EXPECT_EQ(case_from_json(j).layout.pipeline_pacing, PipelinePacing::nanotron);
    j["layout"]["pipeline_pacing"] = "kernels";
    const Case stated = case_from_json(j);
    EXPECT_EQ(stated.layout.pipeline_pacing, PipelinePacing::kernels);
    EXPECT_EQ(to_json(stated.layout)["pipeline_pacing"], "kernels");
    Overrides o;
    o.pipeline_pacing = "nanotron";
    EXPECT_EQ(apply_overrides(stated, o, Naming::flags).layout.pipeline_pacing, PipelinePacing::nanotron);
    j["layout"]["pipeline_pacing"] = "host";
    try {
        case_from_json(j);
        FAIL() << "an unknown pacing was accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("layout.pipeline_pacing"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("kernels, nanotron"), std::string::npos) << e.what();
    }
}

// nanotron's pipeline under PyTorch's classic allocator near the card: the Playbook's runs planned at 90 %
// of usable HBM or more ran 2.5-11.5 times slower than planned, 12 of 14 (docs/validation.md, "Memory"); the
// report says so, and says nothing of it below, with expandable segments, or without nanotron's engine.
// Llama 3 8B, TP 1 · PP 2 · DP 4 on 8 H100s, one sequence a micro-batch: stage 0 holds 18 layers and 2
// micro-batches in flight; at 4,864 tokens its device figure is 92 % of the 85.5 GB usable, at 4,352 87 %.
TEST(Pacing, APipelineNearTheCardUnderTheClassicAllocatorIsFlagged) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = h100s(8);
    auto flagged = [](const Plan& p) {
        for (const std::string& f : plan_findings(p))
            if (f.starts_with("The pipeline runs with") && f.find("classic caching allocator") != std::string::npos)
                return true;
        return false;
    };
    Layout near = nanotron_layout(1, 2, 4);
    near.seq_len = 4864;
    const Plan p = evaluate(m, c, near);
    ASSERT_FALSE(p.rejection);
    ASSERT_TRUE(p.memory_fits);
    EXPECT_GE(p.memory.device_bytes(), 0.90 * p.capacity_bytes);
    EXPECT_TRUE(flagged(p));
    Layout roomy = near;
    roomy.seq_len = 4352;
    const Plan q = evaluate(m, c, roomy);
    EXPECT_LT(q.memory.device_bytes(), 0.90 * q.capacity_bytes);
    EXPECT_FALSE(flagged(q));
    Layout expandable = near;  // no cache of freed blocks: 85 % of usable
    expandable.allocator = Allocator::expandable;
    EXPECT_FALSE(flagged(evaluate(m, c, expandable)));
    Layout kernels = near;  // Megatron's pipelined runs at the limit ran as planned
    kernels.pipeline_pacing = PipelinePacing::kernels;
    EXPECT_FALSE(flagged(evaluate(m, c, kernels)));
}
