// The pipeline's boundary exchange as each framework runs it (layout.pipeline_sends and
// layout.pipeline_scatter_gather, enums.h and layout.h): whether a rank waits for its own sends, and
// whether, without sequence parallelism, the TP ranks split the boundary tensor between them.
#include <gtest/gtest.h>

#include <string>

#include "helpers.h"
#include "shardplan/collectives.h"
#include "shardplan/comm.h"
#include "shardplan/pipeline.h"
#include "shardplan/resolve.h"
#include "shardplan/shardplan.h"
#include "shardplan/simulate.h"

using namespace shardplan;

namespace {

// Two stages, two micro-batches, 1F1B; every rank takes F = 1 s and B = 2 s, a send 0.5 s.
PipelineSpec two_stages(bool blocking) {
    PipelineSpec s;
    s.pp = 2;
    s.micro_batches = 2;
    s.ranks.assign(2, StageTimes{.fwd_s = 1.0, .bwd_s = 2.0, .wgrad_s = 0.0});
    s.p2p_s = 0.5;
    s.blocking_sends = blocking;
    return s;
}

// The pipeline's boundary sends in a plan (not the tied embedding's all-reduce, also on the PP axis).
const CommTerm* sends(const Plan& p) {
    for (const CommTerm& t : p.comm)
        if (t.axis == Axis::pp && !t.gradient_sync) return &t;
    return nullptr;
}

}  // namespace

// Rank 0 runs F0 F1 B0 B1, rank 1 F0 B0 F1 B1 (1F1B: one warm-up forward on the first of two stages).
// Overlapped: r0 F0 [0, 1], F1 [1, 2]; r1 F0 from 1 + 0.5 [1.5, 2.5], B0 [2.5, 4.5], F1 [4.5, 5.5], B1
// [5.5, 7.5]; r0 B0 from 4.5 + 0.5 [5, 7], B1 from 7.5 + 0.5 [8, 10]: 10 s.
// Blocking: r0 waits out each forward's send: F0 [0, 1] then 0.5, F1 [1.5, 2.5] then 0.5; r1 (the last
// stage sends only gradients) F0 [1.5, 2.5], B0 [2.5, 4.5] then 0.5, F1 from max(5, 2.5 + 0.5) [5, 6], B1
// [6, 8] then 0.5; r0 B0 from 4.5 + 0.5 [5, 7], B1 from 8 + 0.5 [8.5, 10.5]: 10.5 s.
TEST(Sends, ABlockingRankWaitsOutEachOfItsSends) {
    const SimResult overlapped = simulate_pipeline(two_stages(false));
    const SimResult blocking = simulate_pipeline(two_stages(true));
    ASSERT_TRUE(overlapped.error.empty() && blocking.error.empty());
    EXPECT_DOUBLE_EQ(overlapped.makespan_s, 10.0);
    EXPECT_DOUBLE_EQ(blocking.makespan_s, 10.5);
    // The passes themselves take as long either way: the waits are not work.
    EXPECT_DOUBLE_EQ(overlapped.busy_s[0], blocking.busy_s[0]);
    // What the sends add, against the same pipeline with free sends (3 · (1 + 2) = 9 s).
    EXPECT_DOUBLE_EQ(simulated_pipeline(two_stages(false), 1000, nullptr).sends_exposed_s, 1.0);
    EXPECT_DOUBLE_EQ(simulated_pipeline(two_stages(true), 1000, nullptr).sends_exposed_s, 1.5);
}

// The closed form adds the busiest rank's own sends every micro-batch: 2·v of them where a rank holds no
// chunk at either end of the line, one fewer at pp 2. Against the simulation it errs high, never low
// (the search bounds its estimate from below by the floor, not by this).
TEST(Sends, TheClosedFormCountsTheBusiestRanksSends) {
    PipelineSpec s = two_stages(true);
    // Fill and drain 2·(pp − 1)·0.5 = 1 s, plus (2 − 1) send a micro-batch × 2 micro-batches × 0.5 s.
    EXPECT_DOUBLE_EQ(exposed_sends_s(s), 2.0);
    for (Schedule sc : {Schedule::one_f_one_b, Schedule::interleaved})
        for (int64_t pp : {2, 4, 8}) {
            PipelineSpec p;
            p.schedule = sc;
            p.pp = pp;
            p.vpp = sc == Schedule::interleaved ? 2 : 1;
            p.micro_batches = 32;
            p.ranks.assign(size_t(pp), StageTimes{.fwd_s = 1.0, .bwd_s = 2.0, .wgrad_s = 0.0});
            p.p2p_s = 0.1;
            p.blocking_sends = true;
            p.record_ops = false;
            const double sim = simulated_pipeline(p, 1 << 20, nullptr).sends_exposed_s;
            EXPECT_GE(exposed_sends_s(p), sim) << enum_name(sc) << " pp " << pp;
            EXPECT_LE(exposed_sends_s(p), 1.25 * sim) << enum_name(sc) << " pp " << pp;
            p.blocking_sends = false;  // blocking never makes the pipeline faster
            EXPECT_GE(sim, simulated_pipeline(p, 1 << 20, nullptr).sends_exposed_s) << enum_name(sc) << " pp " << pp;
        }
}

// Without SP each TP rank holds the whole boundary tensor. Split (scatter-gather), 1/tp of it crosses and
// the receiving TP group all-gathers it: GPT-3 175B's 2,048 × 12,288 bf16 activations (50.3 MB) at TP 8
// send 6.3 MB a rank. With SP the tensor is a sequence shard already and nothing changes.
TEST(Sends, ScatterGatherSendsAShareAndGathersItOnArrival) {
    const ModelSpec m = preset_model("gpt3-175b");
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 64;
    Layout l;
    l.tp = 8;
    l.pp = 8;
    l.dp = 1;
    l.seq_len = 2048;
    l.global_batch = 64;
    l.sequence_parallel = false;
    const Plan whole = evaluate(m, c, l);
    l.pipeline_scatter_gather = true;
    ASSERT_TRUE(scatters_pipeline_sends(l));
    const Plan split = evaluate(m, c, l);
    const CommTerm* a = sends(whole);
    const CommTerm* b = sends(split);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->calls_per_step, 2 * 64);  // 64 micro-batches, forward and backward
    ASSERT_EQ(b->calls_per_step, 2 * 64);
    const double S = 2.0 * 2048 * 12288;  // bytes of one micro-batch's boundary tensor
    EXPECT_DOUBLE_EQ(a->bytes_per_step / 128, S);
    EXPECT_DOUBLE_EQ(b->bytes_per_step / 128, S / 8);
    // The send of an eighth over the NIC, then the TP group's all-gather of the whole inside the node.
    const Fabric f = make_fabric(c);
    const double send = collective_time(Collective::send_recv, S / 8, 2, 1, f).time_s;
    const double gather = collective_time(Collective::all_gather, S, 8, 8, f).time_s;
    EXPECT_NEAR(b->time_s / 128, send + gather, 1e-12);
    EXPECT_LT(b->time_s, a->time_s);
    l.sequence_parallel = true;
    EXPECT_FALSE(scatters_pipeline_sends(l));
}

// Which frameworks block and split: DeepSpeed's engine and Megatron-LM through 2022 both; Megatron-Core
// (Megatron-LM today, NeMo, Megatron-Bridge) blocks under 1F1B only; the rest overlap and send whole.
TEST(Sends, TheFrameworkSaysHowItsPipelineSends) {
    for (const char* f : {"Megatron-DeepSpeed (BigScience, 2022)", "DeepSpeed", "Megatron-LM (2021)", "Megatron-LM (2022)"}) {
        EXPECT_EQ(framework_defaults(f).pipeline_sends, PipelineSends::blocking) << f;
        EXPECT_TRUE(framework_defaults(f).pipeline_scatter_gather) << f;
    }
    for (const char* f : {"Megatron-LM", "NeMo (Megatron-Core)", "Megatron-Bridge / Megatron-Core (26.04 NeMo Container)"}) {
        EXPECT_EQ(framework_defaults(f).pipeline_sends, PipelineSends::blocking_1f1b) << f;
        EXPECT_FALSE(framework_defaults(f).pipeline_scatter_gather) << f;
    }
    for (const char* f : {"torchtitan", "nanotron", "MaxText (JAX)", ""}) {
        EXPECT_EQ(framework_defaults(f).pipeline_sends, PipelineSends::overlapped) << f;
        EXPECT_FALSE(framework_defaults(f).pipeline_scatter_gather) << f;
    }
    Layout l;
    l.pp = 4;
    l.pipeline_sends = PipelineSends::blocking_1f1b;
    EXPECT_TRUE(blocks_pipeline_sends(l));
    l.schedule = Schedule::interleaved;
    l.vpp = 2;
    EXPECT_FALSE(blocks_pipeline_sends(l));
    l.pipeline_sends = PipelineSends::blocking;
    EXPECT_TRUE(blocks_pipeline_sends(l));
    l.pp = 1;
    EXPECT_FALSE(blocks_pipeline_sends(l));
}

// A case may state either field; flags override them; a wrong value is refused by its field's name.
TEST(Sends, ALayoutMayStateThemAndAWrongValueIsNamed) {
    json j = {{"model", "llama3-8b"},
              {"cluster", {{"gpu", "a100-80g"}, {"gpus", 64}}},
              {"layout", {{"tp", 8}, {"pp", 4}, {"framework", "Megatron-LM (2022)"}}}};
    const Case given = case_from_json(j);
    EXPECT_EQ(given.layout.pipeline_sends, PipelineSends::blocking);
    j["layout"]["pipeline_sends"] = "overlapped";
    j["layout"]["pipeline_scatter_gather"] = false;
    const Case stated = case_from_json(j);
    EXPECT_EQ(stated.layout.pipeline_sends, PipelineSends::overlapped);
    EXPECT_FALSE(stated.layout.pipeline_scatter_gather);
    EXPECT_EQ(to_json(stated.layout)["pipeline_sends"], "overlapped");
    EXPECT_EQ(to_json(stated.layout)["pipeline_scatter_gather"], false);
    Overrides o;
    o.pipeline_sends = "blocking_1f1b";
    o.pipeline_scatter_gather = "true";
    const Case over = apply_overrides(stated, o, Naming::flags);
    EXPECT_EQ(over.layout.pipeline_sends, PipelineSends::blocking_1f1b);
    EXPECT_TRUE(over.layout.pipeline_scatter_gather);
    j["layout"]["pipeline_sends"] = "async";
    try {
        case_from_json(j);
        FAIL() << "an unknown pipeline_sends was accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("layout.pipeline_sends"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("overlapped, blocking, blocking_1f1b"), std::string::npos) << e.what();
    }
}
