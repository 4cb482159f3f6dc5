// The pipeline simulation against the closed forms it must reproduce with uniform stages and free
// communication, its in-flight counts, and the trace it draws.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <tuple>

#include <nlohmann/json.hpp>

#include "shardplan/memory.h"
#include "shardplan/pipeline.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/report.h"
#include "shardplan/simulate.h"
#include "shardplan/trace.h"

using namespace shardplan;

namespace {
PipelineSpec uniform(Schedule sc, int64_t pp, int64_t v, int64_t m, double F, double B, double W) {
    PipelineSpec s;
    s.pp = pp;
    s.vpp = v;
    s.micro_batches = m;
    s.schedule = sc;
    // Per rank the whole rank's times; its chunks share them (a DualPipe chunk takes its rank's time,
    // so that rank's figures are one chunk's: F / v here).
    const double d = sc == Schedule::dualpipe ? double(v) : 1.0;
    s.ranks.assign(size_t(pp), StageTimes{.fwd_s = F / d, .bwd_s = (B + W) / d, .wgrad_s = W / d});
    return s;
}
// The pipeline a plan's step was simulated on (the spec evaluate() handed to the simulation).
PipelineSpec spec_of(const Plan& p) {
    SimulatedStep step;
    evaluate_traced(p.model, p.cluster, p.layout, step);
    return step.spec;
}
// TP · PP · DP with `gbs` sequences of `seq` tokens (micro-batch 1).
Layout layout(int64_t tp, int64_t pp, int64_t dp, int64_t gbs, int64_t seq, Schedule sc = Schedule::one_f_one_b,
              int64_t vpp = 1) {
    Layout l;
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.global_batch = gbs;
    l.seq_len = seq;
    l.schedule = sc;
    l.vpp = vpp;
    return l;
}
}  // namespace

TEST(Simulate, OneFOneBAndGPipeReproduceTheClosedForm) {
    // Uniform stages, F = 1, B = 2 (as B + W = 1.5 + 0.5), free communication:
    // step = (m + p − 1)·(F + B); bubble fraction (p − 1)/(m + p − 1).
    for (auto [pp, m] : {std::pair<int64_t, int64_t>{4, 8}, {8, 32}, {16, 16}, {2, 1}}) {
        for (Schedule sc : {Schedule::one_f_one_b, Schedule::gpipe}) {
            const SimResult r = simulate_pipeline(uniform(sc, pp, 1, m, 1.0, 1.5, 0.5));
            ASSERT_TRUE(r.error.empty()) << r.error;
            EXPECT_NEAR(r.makespan_s, double(m + pp - 1) * 3.0, 1e-9) << pp << " " << m;
            const double bubble = 1.0 - double(m) * 3.0 / r.makespan_s;
            EXPECT_NEAR(bubble, double(pp - 1) / double(m + pp - 1), 1e-9);
        }
    }
}

TEST(Simulate, InterleavingDividesTheBubbleByV) {
    // Bubble (p − 1)·(F + B)/v: step = m·(F + B) + (p − 1)·(F + B)/v, within 1 %.
    for (auto [pp, v, m] : {std::tuple<int64_t, int64_t, int64_t>{4, 2, 8}, {4, 4, 16}, {8, 2, 16}, {8, 3, 24}}) {
        const SimResult r = simulate_pipeline(uniform(Schedule::interleaved, pp, v, m, 1.0, 1.5, 0.5));
        ASSERT_TRUE(r.error.empty()) << r.error;
        const double want = double(m) * 3.0 + double(pp - 1) * 3.0 / double(v);
        EXPECT_NEAR(r.makespan_s, want, 0.01 * want) << pp << "/" << v << "/" << m;
    }
}

TEST(Simulate, ZeroBubbleH1CutsTheBubbleToAThird) {
    // ZB-H1 with T_F = T_B = T_W = 1 (paper): bubble (p − 1)·(T_F + T_B − T_W) = (p − 1), a third of 1F1B's
    // (p − 1)·3; step = 3m + (p − 1), within 1 %.
    for (auto [pp, m] : {std::pair<int64_t, int64_t>{4, 12}, {8, 24}, {4, 32}}) {
        const SimResult zb = simulate_pipeline(uniform(Schedule::zb, pp, 1, m, 1.0, 1.0, 1.0));
        ASSERT_TRUE(zb.error.empty()) << zb.error;
        const double want = 3.0 * double(m) + double(pp - 1);
        EXPECT_NEAR(zb.makespan_s, want, 0.01 * want) << pp << " " << m;
        const SimResult f1b = simulate_pipeline(uniform(Schedule::one_f_one_b, pp, 1, m, 1.0, 1.0, 1.0));
        EXPECT_NEAR((f1b.makespan_s - 3.0 * double(m)) / (zb.makespan_s - 3.0 * double(m)), 3.0, 0.05);
    }
}

TEST(Simulate, InFlightActivationsFollowEachSchedule) {
    const int64_t pp = 4, m = 12;
    const SimResult f1b = simulate_pipeline(uniform(Schedule::one_f_one_b, pp, 1, m, 1, 1.5, 0.5));
    for (int64_t r = 0; r < pp; ++r) EXPECT_EQ(f1b.peak_in_flight[size_t(r)], pp - r);  // 1F1B: stage i keeps pp − i
    const SimResult gp = simulate_pipeline(uniform(Schedule::gpipe, pp, 1, m, 1, 1.5, 0.5));
    for (int64_t r = 0; r < pp; ++r) EXPECT_EQ(gp.peak_in_flight[size_t(r)], m);  // GPipe: all of them
    const SimResult zb = simulate_pipeline(uniform(Schedule::zb, pp, 1, m, 1, 1, 1));
    // ZB-H1: no rank above 1F1B's peak (pp, on the first stage); micro-batches count until their W.
    EXPECT_EQ(*std::max_element(zb.peak_in_flight.begin(), zb.peak_in_flight.end()), pp);
    const SimResult il = simulate_pipeline(uniform(Schedule::interleaved, pp, 2, m, 1, 1.5, 0.5));
    // Interleaved rank 0: (pp − 1)·2 + (v − 1)·pp + 1 = 11 chunk micro-batches (Megatron's warm-up + 1).
    EXPECT_EQ(il.peak_in_flight[0], 11);
}

TEST(Simulate, APlanBecomesATimelineAndAValidTrace) {
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 512;
    const Layout l = layout(8, 4, 16, 256, 8192, Schedule::interleaved, 5);
    const Plan p = evaluate(preset_model("llama3-70b"), c, l);
    ASSERT_FALSE(p.rejection);
    const PipelineSpec s = spec_of(p);
    const SimResult r = simulate_pipeline(s);
    ASSERT_TRUE(r.error.empty()) << r.error;
    // The pass times carry the exposed TP collectives and the PP sends sit between passes, so the
    // simulated makespan is the plan's step less what happens outside the pipeline (the DP reduction
    // tail and the optimizer step): 4.116 s - 68 ms - 1.5 ms = 4.047 s here, simulated 4.036 s.
    const double closed = closed_form_pipeline_s(p);
    EXPECT_NEAR(r.makespan_s, closed, 0.02 * closed);

    const nlohmann::json t = nlohmann::json::parse(trace_text(p, r, s));
    ASSERT_TRUE(t.contains("traceEvents"));
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> threads;
    int complete = 0;
    for (const auto& e : t["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name")) << e.dump();
        ASSERT_TRUE(e["name"].is_string());
        if (e["ph"] == "M") continue;
        ASSERT_EQ(e["ph"], "X");
        ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number());
        ASSERT_GE(e["dur"].get<double>(), 0);
        threads[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
        ++complete;
    }
    EXPECT_GT(complete, 2 * 4 * 5 * 16);
    for (auto& [key, spans] : threads) {  // events never overlap on one thread
        std::sort(spans.begin(), spans.end());
        for (size_t i = 1; i < spans.size(); ++i)
            EXPECT_LE(spans[i - 1].first + spans[i - 1].second, spans[i].first + 1e-6)
                << "pid " << key.first << " tid " << key.second;
    }
}

TEST(Simulate, ThePlanTakesItsPipelineFromTheSimulation) {
    // Llama 3 70B on 128 H100, TP8 · PP4 · DP4, 64 sequences of 4096: m = 16 micro-batches per step.
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 128;
    const ModelSpec model = preset_model("llama3-70b");
    std::map<Schedule, double> bubble;
    for (Schedule sc : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb, Schedule::dualpipe}) {
        Layout l = layout(8, 4, 4, 64, 4096, sc, sc == Schedule::interleaved ? 2 : 1);
        l.tp_comm_overlap = true;  // as Megatron's recipes run it: TP traffic mostly under the GEMMs
        const Plan p = evaluate(model, c, l);
        ASSERT_FALSE(p.rejection) << enum_name(sc);
        ASSERT_TRUE(p.time.pipeline_simulated) << enum_name(sc);
        const TimeBreakdown& t = p.time;
        EXPECT_NEAR(t.step_s, t.compute_s + t.recompute_s + t.exposed_comm_s + t.bubble_s + t.optimizer_s, 1e-9);
        // The bubble is the simulated span without sends less the critical rank's passes.
        PipelineSpec s = spec_of(p);
        s.p2p_s = 0;
        const SimResult r = simulate_pipeline(s);
        const double busy = *std::max_element(r.busy_s.begin(), r.busy_s.end());
        EXPECT_NEAR(t.bubble_s, r.makespan_s - busy, 1e-3 * t.step_s) << enum_name(sc);
        bubble[sc] = t.bubble_s;
        // In-flight activations per stage follow the schedule (units of one whole stage).
        for (const StageReport& st : p.stages) {
            const int64_t i = st.stage.index;
            double want = 0;
            switch (sc) {
                case Schedule::gpipe: want = 16; break;
                case Schedule::one_f_one_b: want = double(4 - i); break;
                case Schedule::interleaved: want = double((4 - i - 1) * 2 + 4 + 1) / 2; break;  // Megatron warm-up + 1
                case Schedule::zb: want = 4; break;
                case Schedule::dualpipe: want = 5.0 / 2; break;  // pp + 1 chunks of two
            }
            EXPECT_DOUBLE_EQ(st.in_flight, want) << enum_name(sc) << " stage " << i;
        }
        double worst = 0;
        for (const StageReport& st : p.stages) worst = std::max(worst, st.memory.total_bytes());
        EXPECT_DOUBLE_EQ(p.memory.total_bytes(), worst);
    }
    // ZB-H1's bubble is (p − 1)(F + B − W) against 1F1B's (p − 1)(F + B + W) (Qi et al. 2023): a third at
    // F : B : W = 1 : 1 : 1; here attention, element-wise work, the layer's fixed launch cost and TP traffic
    // the GEMMs cannot hide sit in F and B but not in W, which lifts it to about a half (0.56 with Hopper's
    // fitted 1.3 ms per layer). Interleaving halves 1F1B's (v = 2), GPipe equals it, and DualPipe is below it.
    EXPECT_NEAR(bubble[Schedule::gpipe], bubble[Schedule::one_f_one_b], 1e-6);
    EXPECT_NEAR(bubble[Schedule::interleaved] / bubble[Schedule::one_f_one_b], 0.5, 0.05);
    EXPECT_LT(bubble[Schedule::zb], 0.6 * bubble[Schedule::one_f_one_b]);
    EXPECT_LT(bubble[Schedule::dualpipe], bubble[Schedule::one_f_one_b]);

    // Over the pass limit the plan keeps its closed forms, and says so.
    const Layout l = layout(8, 4, 4, 64, 4096);
    const Plan closed = evaluate_closed_form(model, c, l);
    const Plan capped = evaluate(model, c, l, {.max_passes = 10});
    EXPECT_FALSE(capped.time.pipeline_simulated);
    EXPECT_DOUBLE_EQ(capped.time.step_s, closed.time.step_s);

    // A global batch near 2^63 (m · pp overflows int64): the closed forms, at once, and no trace.
    const Layout huge = layout(1, 8, 16, int64_t(1) << 62, 4096);
    const Plan big = evaluate(model, c, huge);
    ASSERT_FALSE(big.rejection);
    EXPECT_FALSE(big.time.pipeline_simulated);
    const auto no = trace_refusal(model, c, huge, 100'000);
    ASSERT_TRUE(no);
    EXPECT_EQ(no->field, "layout.global_batch");
}

TEST(Simulate, TheTraceDrawsRecomputationAndOverlappedCollectives) {
    // Llama 3 70B, TP8 · PP4 on 512 H100 with full recomputation: each B starts with its recomputed
    // forward ("R3", ending where "B3" starts); the TP traffic compute hides (TP overlap on) runs on
    // thread 4.
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 512;
    Layout l = layout(8, 4, 16, 64, 8192);
    l.recompute = Recompute::full;
    l.tp_comm_overlap = true;
    const Plan p = evaluate(preset_model("llama3-70b"), c, l);
    ASSERT_FALSE(p.rejection);
    ASSERT_GT(p.stages[0].times.recompute_s, 0);
    const PipelineSpec s = spec_of(p);
    const double r_s = chunk_times(s, 0).r_s;
    const nlohmann::json t = nlohmann::json::parse(trace_text(p, simulate_pipeline(s), s));
    std::map<std::string, std::pair<double, double>> spans;  // "pid/name" → (ts, ts + dur) on the compute thread
    int hidden = 0;
    for (const auto& e : t["traceEvents"]) {
        if (e["ph"] != "X") continue;
        if (e["tid"] == 4) ++hidden;
        if (e["tid"] != 0) continue;
        const double ts = e["ts"].get<double>();
        spans[std::to_string(e["pid"].get<int>()) + "/" + e["name"].get<std::string>()] = {ts, ts + e["dur"].get<double>()};
    }
    EXPECT_GT(hidden, 0);
    int pairs = 0;
    for (const auto& [key, span] : spans) {
        const size_t slash = key.find('/');
        if (key[slash + 1] != 'R') continue;
        const std::string b = key.substr(0, slash + 1) + "B" + key.substr(slash + 2);
        ASSERT_TRUE(spans.count(b)) << b;
        EXPECT_NEAR(span.second, spans[b].first, 1e-6) << key;
        EXPECT_NEAR(span.second - span.first, r_s * 1e6, 0.5 * r_s * 1e6) << key;
        ++pairs;
    }
    EXPECT_EQ(pairs, 4 * 4);  // every backward of every rank: m = 64 / 16 = 4 micro-batches × 4 ranks
}

TEST(Simulate, DualPipeReproducesThePapersBubble) {
    // DeepSeek-V3 report, Table 2: DualPipe's bubble is (pp/2 − 1)(F&B + B − 3W), with F, B (full
    // backward) and W per chunk and F&B an overlapped forward + backward pair. Its figure has equal
    // chunks: F = b = w = 1 (B = b + w = 2, F&B = F + B = 3 when the pair does not overlap compute):
    // (pp/2 − 1)·(3 + 2 − 3) = 2·(pp/2 − 1). Every rank keeps pp + 1 chunks of activations (the paper's
    // "PP + 1"). A rank's two chunks (one per direction) take m/2 micro-batches each: busy = m·(F + b + w).
    for (auto [pp, m] : {std::pair<int64_t, int64_t>{4, 8}, {4, 16}, {8, 16}, {8, 40}, {16, 32}, {16, 64}}) {
        PipelineSpec s = uniform(Schedule::dualpipe, pp, 2, m, 2, 2, 2);  // two chunks of F = b = w = 1
        s.vpp = 1;
        const SimResult r = simulate_pipeline(s);
        ASSERT_TRUE(r.error.empty()) << r.error;
        const double busy = 3.0 * double(m), paper = double(pp / 2 - 1) * (3 + 2 - 3);
        for (int64_t k = 0; k < pp; ++k) {
            EXPECT_NEAR(r.busy_s[size_t(k)], busy, 1e-9);
            EXPECT_EQ(r.peak_in_flight[size_t(k)], pp + 1) << "rank " << k;
        }
        EXPECT_NEAR(r.makespan_s - busy, paper, 0.01 * paper) << pp << " " << m;
        // 1F1B over the same ranks (each rank one stage of 2 chunks' work) idles (pp − 1)·(F + B) = 6(pp − 1).
        const SimResult f1b = simulate_pipeline(uniform(Schedule::one_f_one_b, pp, 1, m, 2, 2, 2));
        EXPECT_NEAR(f1b.makespan_s - 6.0 * double(m), 6.0 * double(pp - 1), 1e-9);
    }
    // Unequal B and W: the timeline stays within the paper's bound and above the busy time.
    for (auto [b, w] : {std::pair<double, double>{1.5, 0.5}, {2.0, 0.5}}) {
        PipelineSpec s = uniform(Schedule::dualpipe, 8, 2, 32, 2, 2 * b, 2 * w);
        s.vpp = 1;
        const SimResult r = simulate_pipeline(s);
        ASSERT_TRUE(r.error.empty()) << r.error;
        const double busy = 32 * (1 + b + w), paper = 3 * ((1 + b + w) + (b + w) - 3 * w);
        EXPECT_GT(r.makespan_s, busy);
        EXPECT_LE(r.makespan_s, busy + paper + 1e-9);
    }
}

TEST(Simulate, DualPipeNeedsAnEvenNumberOfMicroBatchesFromBothEnds) {
    for (int64_t m : {7, 9, 6}) {  // odd, or fewer than 2·pp = 8
        PipelineSpec s = uniform(Schedule::dualpipe, 4, 2, m, 2, 2, 2);
        s.vpp = 1;
        EXPECT_NE(simulate_pipeline(s).error.find("even number of micro-batches"), std::string::npos) << m;
    }
}

// The memory a plan reports at the simulated in-flight count is the stage memory model at that count,
// also when the stage holds activations with nothing in flight (full recompute keeps one layer's
// working set): the simulation once rescaled the whole activation figure by the ratio of counts.
TEST(Simulate, MemoryAtTheSimulatedInFlightCountIsTheStageModel) {
    const ModelSpec m = preset_model("llama3-70b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full})
        for (auto [sc, vpp] : {std::pair{Schedule::one_f_one_b, int64_t{1}}, {Schedule::interleaved, int64_t{5}},
                               {Schedule::zb, int64_t{1}}, {Schedule::dualpipe, int64_t{1}}}) {
            Layout l = layout(8, 4, 2, 32, 4096, sc, vpp);
            l.recompute = rc;
            const Plan p = evaluate(m, c, l);
            ASSERT_FALSE(p.rejection) << p.rejection->expected;
            ASSERT_TRUE(p.time.pipeline_simulated) << p.time.pipeline_note;
            const PipelineSpec s = spec_of(p);
            const SimResult r = simulate_pipeline(s);
            double worst = 0;
            for (const StageReport& st : p.stages) {
                const size_t i = size_t(st.stage.index);
                // The count is the simulation's peak of live chunks, in whole stages.
                EXPECT_DOUBLE_EQ(st.in_flight, double(r.peak_in_flight[i]) / double(chunks_per_rank(s)));
                const MemoryBreakdown want = stage_memory(m, c, l, st.stage, st.in_flight);
                EXPECT_NEAR(st.memory.activations_bytes, want.activations_bytes, 1.0)
                    << enum_name(rc) << " " << enum_name(sc) << " stage " << i;
                EXPECT_NEAR(st.memory.total_bytes(), want.total_bytes(), 1.0);
                worst = std::max(worst, want.total_bytes());
            }
            EXPECT_NEAR(p.memory.total_bytes(), worst, 1.0);
        }
}

// A schedule the simulator cannot run is a finding, not a silent fallback.
TEST(Simulate, AStepThatCannotBeSimulatedSaysWhy) {
    const ModelSpec m = preset_model("llama3-70b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    const Plan p = evaluate(m, c, layout(8, 4, 2, 32, 4096), {.max_passes = 8});  // 16 micro-batches × 4 stages
    EXPECT_FALSE(p.time.pipeline_simulated);
    EXPECT_EQ(p.time.pipeline_note, "more than 8 passes to simulate");
    bool said = false;
    for (const std::string& f : plan_findings(p)) said = said || f.starts_with("Pipeline not simulated (more than 8");
    EXPECT_TRUE(said);
}

// A trace plans once: evaluate_traced gives the plan evaluate() gives, and the recorded simulation it
// kept is the one that plan's pipeline figures came from.
TEST(Simulate, ATracePlansOnceAndDrawsThePlansOwnSimulation) {
    const ModelSpec m = preset_model("llama3-70b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    for (auto [pp, sc, vpp] : {std::tuple{int64_t{4}, Schedule::interleaved, int64_t{5}}, {int64_t{4}, Schedule::zb, int64_t{1}},
                               {int64_t{1}, Schedule::one_f_one_b, int64_t{1}}}) {
        const Layout l = layout(8, pp, 8 / pp, 32, 4096, sc, vpp);
        SimulatedStep step;
        const Plan traced = evaluate_traced(m, c, l, step);
        const Plan plain = evaluate(m, c, l);
        EXPECT_EQ(plan_to_json(traced).dump(), plan_to_json(plain).dump());
        ASSERT_FALSE(step.result.ops.empty());
        EXPECT_EQ(step.spec.pp, pp);
        // Its passes fill the makespan the plan's bubble was taken from (pp > 1).
        double last = 0;
        for (const SimOp& o : step.result.ops) last = std::max(last, o.end_s);
        EXPECT_DOUBLE_EQ(last, step.result.makespan_s);
        if (pp > 1) EXPECT_TRUE(traced.time.pipeline_simulated);
    }
}

// The search re-times its pool in order of a ceiling built on pipeline_floor_s(): no simulation may
// find less. Random ranks (stages of unequal length), schedules, micro-batch counts and send times.
TEST(Simulate, NoSimulationFindsLessThanThePipelineFloor) {
    std::mt19937_64 rng(20261202);
    std::uniform_real_distribution<double> t(0.2, 3.0);
    int checked = 0;
    for (int i = 0; i < 400; ++i) {
        PipelineSpec s;
        s.schedule = std::array{Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb}[i % 4];
        s.pp = std::array<int64_t, 4>{2, 3, 4, 8}[(i / 4) % 4];
        s.vpp = s.schedule == Schedule::interleaved ? 2 + (i / 16) % 3 : 1;
        s.micro_batches = s.schedule == Schedule::interleaved ? s.pp * (1 + i % 3) : 1 + (i * 7) % 24;
        if (s.schedule == Schedule::zb) s.micro_batches = std::max(s.micro_batches, s.pp);
        s.p2p_s = i % 5 == 0 ? 0.0 : 0.05 * t(rng);
        s.record_ops = false;
        for (int64_t r = 0; r < s.pp; ++r) {
            const double w = 0.5 * t(rng);
            s.ranks.push_back({.fwd_s = t(rng), .bwd_s = t(rng) + w, .wgrad_s = w});
        }
        const PipelineResult sim = simulated_pipeline(s, 1'000'000);
        ASSERT_TRUE(sim.simulated) << i << " " << sim.note;
        const double span = sim.bubble_s + sim.sends_exposed_s;
        EXPECT_GE(span * (1 + 1e-12), pipeline_floor_s(s, s.p2p_s)) << i;
        EXPECT_GE(sim.bubble_s * (1 + 1e-12), pipeline_floor_s(s, 0.0)) << i;
        ++checked;
    }
    EXPECT_EQ(checked, 400);
    // Uniform stages without sends: the floor is the closed forms' fill and drain, (pp − 1)(F + B) under
    // 1F1B (3 · (1 + 2) = 9), the same over v when interleaved (9 / 3 = 3 with chunks of a third), and
    // the forwards alone under zero-bubble (3 · 1 = 3).
    EXPECT_DOUBLE_EQ(pipeline_floor_s(uniform(Schedule::one_f_one_b, 4, 1, 8, 1, 1.5, 0.5), 0), 9.0);
    EXPECT_DOUBLE_EQ(pipeline_floor_s(uniform(Schedule::interleaved, 4, 3, 8, 1, 1.5, 0.5), 0), 3.0);
    EXPECT_DOUBLE_EQ(pipeline_floor_s(uniform(Schedule::zb, 4, 1, 8, 1, 1.5, 0.5), 0), 3.0);
    // Each of the 3 ranks a micro-batch waits for adds a send on the way in and one on the way back.
    EXPECT_DOUBLE_EQ(pipeline_floor_s(uniform(Schedule::one_f_one_b, 4, 1, 8, 1, 1.5, 0.5), 0.25), 9.0 + 6 * 0.25);
    EXPECT_DOUBLE_EQ(pipeline_floor_s(uniform(Schedule::dualpipe, 4, 2, 8, 1, 1.5, 0.5), 0.25), 0.0);
}

// The same pipeline simulated twice, the second time from a memo: the same result; another input is
// simulated afresh.
TEST(Simulate, AMemoGivesWhatTheSimulationGives) {
    PipelineSpec s = uniform(Schedule::interleaved, 4, 2, 8, 1, 1.5, 0.5);
    s.record_ops = false;
    s.p2p_s = 0.01;
    PipelineMemo memo;
    EXPECT_FALSE(memo.find(s, 1'000'000));
    const PipelineResult a = simulated_pipeline(s, 1'000'000, &memo);
    ASSERT_TRUE(memo.find(s, 1'000'000));
    EXPECT_FALSE(memo.find(s, 999'999));  // the pass limit is part of the input
    const PipelineResult b = simulated_pipeline(s, 1'000'000, &memo);
    EXPECT_EQ(a.bubble_s, b.bubble_s);
    EXPECT_EQ(a.sends_exposed_s, b.sends_exposed_s);
    EXPECT_EQ(a.in_flight, b.in_flight);
    EXPECT_EQ(a.bubble_s, simulated_pipeline(s, 1'000'000).bubble_s);
    s.ranks[1].fwd_s *= 2;  // rank 1 is now the slowest: 4.5 → 1.5
    EXPECT_FALSE(memo.find(s, 1'000'000));
    EXPECT_NE(simulated_pipeline(s, 1'000'000, &memo).bubble_s, a.bubble_s);
}
