// CUDA graphs (layout.cuda_graphs, enums.h): a step captured whole and replayed issues no kernel from
// the host, so the host's launch cost (docs/model.md §4) leaves every layer; and Megatron-Bridge's MXFP8
// MoE recipes on Blackwell run that way from the 26.06 container, with the settings that come with it.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "helpers.h"
#include "shardplan/resolve.h"
#include "shardplan/shardplan.h"

using namespace shardplan;

namespace {

LayerWork work(const ModelSpec& m, const ClusterSpec& c, Layout l, CudaGraphs g, bool moe_layer) {
    l.cuda_graphs = g;
    return layer_work(m, c, l, moe_layer);
}

}  // namespace

// The host's share of a layer's forward is t_host²/(t_host + t_gpu) (compute.cpp, with_host_s), t_host
// the layer's launch time over three for the forward: 3 ms × 0.73 (fused kernels) / 3 = 0.73 ms. A full
// graph removes it; in its place each kernel node starts graph_node_gap (0.5 µs) after the one before:
// 150 · 0.73 / 3 = 36.5 kernels forward, 18.25 µs; the backward twice both. Llama 3 8B at 4,096 tokens on
// one H100 has t_gpu ≈ 4.0 ms forward (2 · 218 M parameters · 4,096 tokens = 1.79 TFLOP of GEMMs at about
// two thirds of 989 TFLOP/s, 2.7 ms; attention and the element-wise passes the rest): the graph saves
// 0.73²/4.73 − 0.018 ≈ 0.09 ms of it (2 %).
TEST(Graphs, FullIterationTradesTheHostsLaunchesForTheGraphsNodeGaps) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    ClusterSpec hostless = c;
    hostless.gpu.eff.layer_overhead_s = 0;
    Layout l;
    l.dp = 8;
    const double host_fwd = c.gpu.eff.layer_overhead_s * c.gpu.eff.fused_host_share / 3.0;
    EXPECT_NEAR(host_fwd, 0.73e-3, 1e-6);
    const double gap = c.gpu.eff.graph_node_gap_s;
    EXPECT_DOUBLE_EQ(gap, 0.5e-6);
    const double fwd_kernels = 150.0 * 0.73 / 3.0;  // 36.5
    const LayerWork gpu = work(m, hostless, l, CudaGraphs::none, false);
    const LayerWork none = work(m, c, l, CudaGraphs::none, false), full = work(m, c, l, CudaGraphs::full, false);
    const double g = gpu.fwd_s;
    EXPECT_NEAR(g, 4.0e-3, 0.3e-3);
    EXPECT_NEAR(none.fwd_s, g + host_fwd * host_fwd / (host_fwd + g), 1e-12);
    EXPECT_NEAR(full.fwd_s, g + fwd_kernels * gap, 1e-12);
    EXPECT_NEAR(none.fwd_s - full.fwd_s, 0.09e-3, 0.01e-3);
    const double gb = gpu.bwd_s - gpu.grad_accum_s, host_bwd = 2.0 * host_fwd;
    EXPECT_NEAR(none.bwd_s - none.grad_accum_s, gb + host_bwd * host_bwd / (host_bwd + gb), 1e-12);
    EXPECT_NEAR(full.bwd_s - full.grad_accum_s, gb + 2.0 * fwd_kernels * gap, 1e-12);
    // A MoE layer whose experts the host launches one by one: 16 experts a rank at EP 8 add 32 kernel
    // nodes forward and 64 backward to the graph.
    const ModelSpec moe = preset_model("qwen3-30b-a3b");
    l.ep = 8;
    l.expert_gemms = ExpertGemms::per_expert;
    const LayerWork graphed = work(moe, c, l, CudaGraphs::full, true), free = work(moe, hostless, l, CudaGraphs::none, true);
    EXPECT_NEAR(graphed.fwd_s, free.fwd_s + (fwd_kernels + 32.0) * gap, 1e-12);
    EXPECT_NEAR(graphed.bwd_s - free.bwd_s, (2.0 * fwd_kernels + 64.0) * gap, 1e-12);
    EXPECT_GT(work(moe, c, l, CudaGraphs::none, true).fwd_s, graphed.fwd_s);
    // A whole plan: the graphed step is shorter, its FLOPs the same.
    l.ep = 1;
    l.global_batch = 64;
    Layout lg = l;
    lg.cuda_graphs = CudaGraphs::full;
    const Plan p = evaluate(m, c, l), q = evaluate(m, c, lg);
    EXPECT_LT(q.time.step_s, p.time.step_s);
    EXPECT_DOUBLE_EQ(q.throughput.mfu * q.time.step_s, p.throughput.mfu * p.time.step_s);
}

// On a GPU-bound pass the host's share, t_host²/(t_host + t_gpu), falls below the graph's node gaps: Llama 3
// 8B at 16 sequences of 8,192 tokens a micro-batch on one H100 has t_gpu ≈ 0.15 s forward (2 · 218 M
// parameters · 131,072 tokens = 57 TFLOP of GEMMs at about two thirds of peak, some 90 ms; attention most
// of the rest), so 0.73²/146 ms ≈ 4 µs against 36.5 nodes · 0.5 µs = 18 µs. A replay never adds to what the same kernels
// take queued by the host, so the graph takes the eager pass's time there, and never more anywhere.
TEST(Graphs, AGraphNeverSlowsAGpuBoundPass) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    Layout l;
    l.dp = 8;
    l.micro_batch = 16;
    l.seq_len = 8192;
    l.global_batch = 128;
    const LayerWork none = work(m, c, l, CudaGraphs::none, false), full = work(m, c, l, CudaGraphs::full, false);
    EXPECT_GT(none.fwd_s, 0.1);
    const double host_fwd = c.gpu.eff.layer_overhead_s * c.gpu.eff.fused_host_share / 3.0;
    EXPECT_LT(host_fwd * host_fwd / (host_fwd + none.fwd_s), 150.0 * 0.73 / 3.0 * c.gpu.eff.graph_node_gap_s);
    EXPECT_DOUBLE_EQ(full.fwd_s, none.fwd_s);
    EXPECT_DOUBLE_EQ(full.bwd_s, none.bwd_s);
}

// framework_defaults: Megatron-Bridge's MXFP8 MoE recipes on Blackwell from the 26.06 container
// (_enable_hybridep_full_iteration_mxfp8; Megatron-Bridge issue #2885, enabled for 26.06) run the step
// as one CUDA graph, the experts grouped, HybridEP dispatch and the all-to-all overlap on. Earlier
// containers, other GPUs, other precisions, dense models and other frameworks keep their defaults.
TEST(Graphs, MegatronBridgeMxfp8MoeRecipesFromThe2606Container) {
    const std::string f2606 = "Megatron-Bridge / Megatron-Core (26.06 NeMo Container)";
    const FrameworkDefaults on = framework_defaults(f2606, "blackwell", Precision::mxfp8, true);
    EXPECT_EQ(on.cuda_graphs, CudaGraphs::full);
    EXPECT_EQ(on.expert_gemms, ExpertGemms::grouped);
    EXPECT_EQ(on.moe_dispatcher, Dispatcher::hybridep);
    EXPECT_TRUE(on.ep_comm_overlap);
    for (const char* later : {"Megatron-Bridge / Megatron-Core (26.06.01 NeMo Container)",
                              "Megatron-Bridge / Megatron-Core (26.08 NeMo Container)",
                              "Megatron-Bridge (27.02 NeMo Container)"})
        EXPECT_EQ(framework_defaults(later, "blackwell", Precision::mxfp8, true).cuda_graphs, CudaGraphs::full) << later;
    struct Off { std::string framework, generation; Precision p; bool moe; };
    for (const Off& o : {Off{"Megatron-Bridge / Megatron-Core (26.04.01 NeMo Container)", "blackwell", Precision::mxfp8, true},
                         Off{f2606, "hopper", Precision::mxfp8, true}, Off{f2606, "blackwell", Precision::bf16, true},
                         Off{f2606, "blackwell", Precision::fp8, true}, Off{f2606, "blackwell", Precision::mxfp8, false},
                         Off{"Megatron-Bridge", "blackwell", Precision::mxfp8, true},
                         Off{"Megatron-Bridge (26.6 NeMo Container)", "blackwell", Precision::mxfp8, true},
                         Off{"NeMo (26.06 NeMo Container)", "blackwell", Precision::mxfp8, true},
                         Off{"torchtitan", "blackwell", Precision::mxfp8, true}}) {
        const FrameworkDefaults d = framework_defaults(o.framework, o.generation, o.p, o.moe);
        EXPECT_EQ(d.cuda_graphs, CudaGraphs::none) << o.framework << " " << o.generation << " " << enum_name(o.p) << " " << o.moe;
        EXPECT_NE(d.moe_dispatcher, Dispatcher::hybridep) << o.framework;
    }
    // Megatron-Bridge's Blackwell MoE recipes before it keep the per-expert GEMMs and no EP overlap.
    const FrameworkDefaults before = framework_defaults("Megatron-Bridge / Megatron-Core (26.04 NeMo Container)", "blackwell",
                                                       Precision::mxfp8, true);
    EXPECT_EQ(before.expert_gemms, ExpertGemms::per_expert);
    EXPECT_FALSE(before.ep_comm_overlap);
}

// A case brings the recipe through its model (MoE or not), GPU, precision and framework; what the case
// states beside it stays; a --precision override moves the recipe's settings with it as it moves the
// gradient dtype, and leaves one the case set.
TEST(Graphs, ACaseTakesTheRecipeAndWhatItStatesStays) {
    json j = {{"model", "qwen3-30b-a3b"},
              {"cluster", {{"gpu", "gb200"}, {"gpus", 8}, {"gpus_per_node", 4}, {"scale_up_domain", 72}}},
              {"layout", {{"ep", 8}, {"micro_batch", 4}, {"global_batch", 512}, {"precision", "mxfp8"},
                          {"framework", "Megatron-Bridge / Megatron-Core (26.08 NeMo Container)"}}}};
    const Case c = case_from_json(j);
    EXPECT_EQ(c.layout.cuda_graphs, CudaGraphs::full);
    EXPECT_EQ(c.layout.expert_gemms, ExpertGemms::grouped);
    EXPECT_TRUE(c.layout.ep_comm_overlap);
    Overrides o;
    o.precision = "bf16";
    const Case bf16 = apply_overrides(c, o, Naming::flags);
    EXPECT_EQ(bf16.layout.cuda_graphs, CudaGraphs::none);
    EXPECT_EQ(bf16.layout.expert_gemms, ExpertGemms::per_expert);
    EXPECT_FALSE(bf16.layout.ep_comm_overlap);
    j["layout"]["cuda_graphs"] = "none";
    const Case stated = case_from_json(j);
    EXPECT_EQ(stated.layout.cuda_graphs, CudaGraphs::none);
    EXPECT_EQ(stated.layout.expert_gemms, ExpertGemms::grouped);
    o.precision = "mxfp8";
    EXPECT_EQ(apply_overrides(stated, o, Naming::flags).layout.cuda_graphs, CudaGraphs::none);
    j["model"] = "llama3-8b";
    j["layout"].erase("cuda_graphs");
    j["layout"]["ep"] = 1;
    EXPECT_EQ(case_from_json(j).layout.cuda_graphs, CudaGraphs::none);
}

// In the published runs: Megatron-Bridge's MoE runs on Blackwell in MXFP8 plan with the full graph
// exactly from the 26.06 container on (seven runs: Qwen3-235B, Qwen3-30B, DeepSeek-V3, GPT-OSS), and no
// other run of the file does.
TEST(Graphs, ThePublishedRunsTakeTheRecipeByRelease) {
    const std::string file = shardplan::testing::shared_path("validation/calibration.json");
    SHARDPLAN_REQUIRE_SHARED(file);
    const json all = read_json_file(file, "calibration");
    int graphed = 0, earlier = 0;
    for (size_t i = 0; i < all.size(); ++i) {
        const Case c = case_from_json(all[i], "[" + std::to_string(i) + "]");
        const std::string& f = c.layout.framework;
        const bool recipe = f.find("Megatron-Bridge") != std::string::npos && c.model.moe &&
                            c.cluster.gpu.generation == "blackwell" && c.layout.precision == Precision::mxfp8;
        const bool from_2606 = f.find("(26.06") != std::string::npos || f.find("(26.08") != std::string::npos;
        EXPECT_EQ(c.layout.cuda_graphs == CudaGraphs::full, recipe && from_2606) << c.id;
        graphed += c.layout.cuda_graphs == CudaGraphs::full;
        earlier += recipe && !from_2606;
    }
    EXPECT_EQ(graphed, 7);
    EXPECT_GE(earlier, 8);  // 25.11 to 26.04.01: the per-expert GEMMs, no graph
}

// layout.cuda_graphs both ways: JSON keeps it; a Megatron export writes --cuda-graph-impl local
// --cuda-graph-scope full_iteration for full, the import reads it back, and Transformer Engine's
// per-module graphs import as none with a note saying they are not priced.
TEST(Graphs, RoundTripThroughJsonAndMegatron) {
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    Layout l;
    l.dp = 8;
    l.global_batch = 64;
    ImportContext ctx;
    ctx.cluster = c;
    ctx.gpus = 8;
    for (CudaGraphs g : {CudaGraphs::none, CudaGraphs::full}) {
        l.cuda_graphs = g;
        EXPECT_EQ(layout_from_json(to_json(l)).cuda_graphs, g);
        const Export e = export_config(m, c, l, Framework::megatron);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        EXPECT_EQ(e.text.find("--cuda-graph-impl local --cuda-graph-scope full_iteration") != std::string::npos,
                  g == CudaGraphs::full);
        EXPECT_EQ(import_launch(Framework::megatron, e.text, ctx, "exported").c.layout.cuda_graphs, g);
    }
    const Export e = export_config(m, c, l, Framework::megatron);
    std::string scoped = e.text;
    scoped.replace(scoped.find("--cuda-graph-impl local --cuda-graph-scope full_iteration"),
                   std::string("--cuda-graph-impl local --cuda-graph-scope full_iteration").size(),
                   "--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router");
    const Imported te = import_launch(Framework::megatron, scoped, ctx, "scoped");
    EXPECT_EQ(te.c.layout.cuda_graphs, CudaGraphs::none);
    bool said = false;
    for (const std::string& n : te.notes) said = said || n.find("layout.cuda_graphs") != std::string::npos;
    EXPECT_TRUE(said);
    EXPECT_THROW(layout_from_json(json{{"cuda_graphs", "scoped"}}), ConfigError);
}
