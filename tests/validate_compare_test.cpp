// How validate compares a prediction with what a run measured: the measured part never read while
// predicting, a run without throughput still counted as a false OOM, the ranking of same-job pairs and the
// first choice of each job, memory against the figure of its kind and its rank's stage, throughput
// against the plan's 80 % range (validate.h). The published runs' reached bounds are validation_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "helpers.h"
#include "shardplan/presets.h"
#include "shardplan/validate.h"

using namespace shardplan;

namespace {
// A run as validate scores it: its job, its layout as planned, measured and predicted tokens/s per GPU.
CaseResult scored_run(const char* id, const char* job, const char* layout, double measured, double predicted) {
    CaseResult r;
    r.id = id;
    r.job = job;
    r.layout = layout;
    r.measured_tokens_per_s_per_gpu = measured;
    r.tokens_per_s_per_gpu = predicted;
    r.throughput_error = (predicted - measured) / measured;
    return r;
}
}  // namespace

TEST(Validation, MeasuredPartIsNeverReadWhilePredicting) {
    Case c;
    c.model = preset_model("llama3-8b");
    c.cluster = preset_cluster("dgx-h100");
    c.cluster.gpus = 8;
    c.layout.dp = 8;
    c.layout.global_batch = 64;
    const CaseResult a = predict_case(c);
    c.measured.tokens_per_s_per_gpu = 1.0;  // an absurd measurement changes the error, not the prediction
    c.measured.memory_gb_per_gpu = 1.0;
    const CaseResult b = predict_case(c);
    EXPECT_DOUBLE_EQ(a.tokens_per_s_per_gpu, b.tokens_per_s_per_gpu);
    EXPECT_DOUBLE_EQ(a.memory_bytes, b.memory_bytes);
    ASSERT_TRUE(b.throughput_error);
    EXPECT_GT(*b.throughput_error, 100.0);
}

TEST(Validation, ARunWithoutThroughputStillCountsAsAFalseOom) {
    // Llama 3 70B on 8 H100s, DP8, no recomputation, nothing sharded: 70e9 × 16 B = 1.1 TB of model
    // state per GPU cannot fit in 85.5 GB, yet the "run" ran. No throughput was published.
    Case c;
    c.id = "no-throughput";
    c.model = preset_model("llama3-70b");
    c.cluster = preset_cluster("dgx-h100");
    c.cluster.gpus = 8;
    c.layout.dp = 8;
    c.layout.global_batch = 8;
    c.layout.zero = 0;
    c.layout.recompute = Recompute::none;
    Case fits = c;  // the same run on 8 × 8B fits; it has a throughput
    fits.id = "with-throughput";
    fits.model = preset_model("llama3-8b");
    fits.layout.zero = 1;
    fits.measured.tokens_per_s_per_gpu = 1000;
    CaseList list;
    list.cases = {c, fits};
    const ValidationSummary s = validate_cases(list).summary;
    EXPECT_EQ(s.predicted, 1);    // only the run with a throughput is in the error statistics
    EXPECT_EQ(s.unpredicted, 1);  // "no measured throughput to compare with"
    EXPECT_EQ(s.false_oom, 1);    // but both ran, and one is predicted not to fit
}

// Ranking, by hand: one job run with three layouts measured at 100, 110 and 200 tokens/s/GPU and
// predicted at 105, 100 and 190. Pairs more than 5 % apart: (100, 110) 10 % — predicted in the wrong
// order; (100, 200) and (110, 200) right: 2 of 3. A repeat of a layout, a pair within 5 % and a run of
// another job add no pair.
TEST(Validation, RankingCountsSameJobPairsMoreThanFivePercentApart) {
    auto run = [](const char* job, const char* layout, double measured, double predicted) {
        return scored_run("", job, layout, measured, predicted);
    };
    const std::vector<CaseResult> runs = {run("j", "A", 100, 105), run("j", "B", 110, 100), run("j", "C", 200, 190),
                                          run("j", "C", 180, 150),  // C again: no pair with C
                                          run("j", "D", 203, 100),  // within 5 % of C's 200; against A, B right, against C's repeat (180) wrong
                                          run("k", "A", 50, 500)};  // another job
    std::vector<const CaseResult*> ptrs;
    for (const CaseResult& r : runs) ptrs.push_back(&r);
    const RankingStats first3 = ranking_stats({ptrs[0], ptrs[1], ptrs[2]});
    EXPECT_EQ(first3.pairs, 3);
    EXPECT_EQ(first3.ordered, 2);
    // All: A-B ✗, A-C ✓, B-C ✓, A-C' ✓, B-C' ✓, A-D ✗ (100 vs 203 measured, 105 vs 100 predicted),
    // B-D: 110 vs 203 measured, 100 vs 100 predicted: not ordered ✗, C-D within 5 %: none, C'-D: 180 vs
    // 203 (12.8 %), 150 vs 100 predicted ✗. 8 pairs, 4 ordered.
    const RankingStats all = ranking_stats(ptrs);
    EXPECT_EQ(all.pairs, 8);
    EXPECT_EQ(all.ordered, 4);
    EXPECT_DOUBLE_EQ(all.share(), 0.5);
}

// The ranking by how far apart the two predictions are, by hand: one job at four layouts measured at
// 100, 120, 90 and 200 tokens/s/GPU and predicted at 100, 103, 108 and 150. Every pair is more than 5 %
// apart as measured. Predicted gaps |a − b| / min: A-B 3 % (in order), B-C 5/103 = 4.85 % (against),
// A-C 8 % (against), A-D 50 %, B-D 45.6 %, C-D 38.9 % (all three in order). So under 5 %: 1 of 2;
// 5–10 %: 0 of 1; 10–20 %: none; 20 % or more: 3 of 3; in all 4 of 6.
TEST(Validation, RankingSplitsPairsByHowFarApartTheirPredictionsAre) {
    auto run = [](const char* layout, double measured, double predicted) { return scored_run("", "j", layout, measured, predicted); };
    const std::vector<CaseResult> runs = {run("A", 100, 100), run("B", 120, 103), run("C", 90, 108), run("D", 200, 150)};
    std::vector<const CaseResult*> ptrs;
    for (const CaseResult& r : runs) ptrs.push_back(&r);
    RankingStats st = ranking_stats(ptrs);
    EXPECT_EQ(st.pairs, 6);
    EXPECT_EQ(st.ordered, 4);
    const std::array<int64_t, 4> pairs = {2, 1, 0, 3}, ordered = {1, 0, 0, 3};
    for (size_t i = 0; i < st.by_gap.size(); ++i) {
        EXPECT_EQ(st.by_gap[i].pairs, pairs[i]) << i;
        EXPECT_EQ(st.by_gap[i].ordered, ordered[i]) << i;
    }
    const json j = ranking_json(st);
    ASSERT_EQ(j["by_predicted_gap"].size(), 4u);
    EXPECT_DOUBLE_EQ(j["by_predicted_gap"][0]["to"].get<double>(), 0.05);
    EXPECT_DOUBLE_EQ(j["by_predicted_gap"][0]["share"].get<double>(), 0.5);
    EXPECT_TRUE(j["by_predicted_gap"][3]["to"].is_null());
    EXPECT_EQ(format_ranking_gaps(st), " under 5 % 50 % of 2 · 5–10 % 0 % of 1 · 20 % or more 100 % of 3");
    // Pooled over held-out sources, the bins add up (leave_one_source_out).
    st += st;
    EXPECT_EQ(st.pairs, 12);
    EXPECT_EQ(st.by_gap[3].ordered, 6);
}

// The first choice by hand. Job j: A measured 100 predicted 120, B 150 / 110, C 140 / 120: A and C tie as
// predicted and the tie takes the slower measured, A, where B ran fastest: 1 − 100/150 = 33.3 % short.
// Job k: A 200 / 210, B 195 / 205: the pick is the fastest (0). Job l: one layout twice, no choice to
// make. Job m: A 100 / 100, B 104 / 90: 1 − 100/104 = 3.85 % short, within 5 %. A run with no
// measured throughput is left out. Three jobs, one best, two within 5 %; median 3.85 %, mean
// (33.33 + 0 + 3.85) / 3 = 12.39 %, worst 33.3 % (jA, where jB ran fastest).
TEST(Validation, FirstChoiceIsTheRunPredictedFastestAgainstTheFastestMeasured) {
    const auto run = scored_run;
    std::vector<CaseResult> runs = {run("jA", "j", "A", 100, 120), run("jB", "j", "B", 150, 110), run("jC", "j", "C", 140, 120),
                                    run("kA", "k", "A", 200, 210), run("kB", "k", "B", 195, 205),
                                    run("lD", "l", "D", 300, 100), run("lD2", "l", "D", 280, 90),
                                    run("mA", "m", "A", 100, 100), run("mB", "m", "B", 104, 90)};
    CaseResult unmeasured = run("mC", "m", "C", 1, 500);
    unmeasured.measured_tokens_per_s_per_gpu.reset();
    unmeasured.throughput_error.reset();
    runs.push_back(unmeasured);
    std::vector<const CaseResult*> ptrs;
    for (const CaseResult& r : runs) ptrs.push_back(&r);
    const FirstChoiceStats st = first_choice_stats(ptrs);
    EXPECT_EQ(st.jobs, 3);
    EXPECT_EQ(st.best, 1);
    EXPECT_EQ(st.within_5, 2);
    EXPECT_NEAR(st.median_shortfall, 1.0 - 100.0 / 104.0, 1e-12);
    EXPECT_NEAR(st.mean_shortfall, ((1.0 - 100.0 / 150.0) + 0.0 + (1.0 - 100.0 / 104.0)) / 3.0, 1e-12);
    EXPECT_NEAR(st.worst_shortfall, 1.0 / 3.0, 1e-12);
    EXPECT_EQ(st.worst_pick, "jA");
    EXPECT_EQ(st.worst_best, "jB");
    const json j = first_choice_json(st);
    EXPECT_EQ(j["within_5_pct"].get<int64_t>(), 2);
    EXPECT_EQ(j["worst_pick"].get<std::string>(), "jA");
    EXPECT_EQ(format_first_choice(st),
              "first choice: in 1 of 3 jobs the layout predicted fastest is the fastest measured, in 2 within 5 % of it; "
              "a median 3.8 % (mean 12.4 %) below the fastest, at worst 33.3 % (jA, where jB ran fastest)");
    // No job with a choice: nothing to say, and no ids.
    const FirstChoiceStats none = first_choice_stats({ptrs[5], ptrs[6]});
    EXPECT_EQ(none.jobs, 0);
    EXPECT_EQ(format_first_choice(none), "");
    EXPECT_TRUE(first_choice_json(none)["worst_pick"].is_null());
}

// Measured memory is compared with the predicted figure of its kind (allocated < reserved < device).
namespace {
// Llama 3 8B at TP 8 on one H100 server, measured at 1,000 tokens/s per GPU.
Case llama8b_tp8_case() {
    Case c;
    c.id = "8b";
    c.model = preset_model("llama3-8b");
    c.cluster = preset_cluster("dgx-h100");
    c.cluster.gpus = 8;
    c.layout.tp = 8;
    c.layout.dp = 1;
    c.layout.global_batch = 8;
    c.layout.seq_len = 8192;
    c.measured.tokens_per_s_per_gpu = 1000;
    return c;
}
}  // namespace

TEST(Validation, MemoryIsComparedWithTheFigureOfItsKind) {
    const Case c = llama8b_tp8_case();
    const Plan p = evaluate(c.model, c.cluster, c.layout);
    CaseList list;
    for (const char* kind : {"allocated", "reserved", "device", ""}) {
        Case k = c;
        k.id = kind;
        k.measured.memory_kind = kind;
        k.measured.memory_gb_per_gpu = p.memory.allocated_bytes() / 1e9;  // the allocated figure, for each kind
        list.cases.push_back(k);
    }
    Case over = c;  // nvidia-smi reading 1.2 × the device figure: the prediction 1/1.2 − 1 = 16.7 % under
    over.id = "over";
    over.measured.memory_kind = "device";
    over.measured.memory_gb_per_gpu = 1.2 * p.memory.device_bytes() / 1e9;
    list.cases.push_back(over);
    const ValidationReport r = validate_cases(list);
    ASSERT_EQ(r.cases.size(), 5u);
    EXPECT_NEAR(*r.cases[0].memory_error, 0.0, 1e-12);
    EXPECT_NEAR(*r.cases[1].memory_error, (p.memory.reserved_bytes() - p.memory.allocated_bytes()) / p.memory.allocated_bytes(), 1e-12);
    EXPECT_NEAR(*r.cases[2].memory_error, (p.memory.device_bytes() - p.memory.allocated_bytes()) / p.memory.allocated_bytes(), 1e-12);
    EXPECT_EQ(r.cases[3].memory_kind, "device");  // unstated: what nvidia-smi shows
    EXPECT_NEAR(*r.cases[4].memory_error, 1.0 / 1.2 - 1.0, 1e-12);
    EXPECT_EQ(r.summary.memory_by_kind.size(), 3u);
    EXPECT_EQ(r.summary.memory_by_kind.at("device").count, 3);
    // More than 10 % under, overall and by kind (issue 15: "report the share").
    EXPECT_EQ(r.summary.memory_under_10, 1);
    EXPECT_EQ(r.summary.memory_under_10_by_kind.at("device"), 1);
    EXPECT_EQ(r.summary.memory_under_10_by_kind.count("allocated"), 0u);
    const json j = validation_to_json(r)["summary"]["memory_by_kind"];
    EXPECT_EQ(j["device"]["under_10"], 1);
    EXPECT_EQ(j["allocated"]["under_10"], 0);
    EXPECT_NE(format_validation(r, false).find("device (compared with the predicted device figure): 3 cases"), std::string::npos);
    EXPECT_NE(format_validation(r, false).find("1 (33 %) more than 10 % under"), std::string::npos);
}

// A reading of one rank is compared with that rank's stage (measured.memory_stage, which a note naming
// rank 0 sets: io_test); without one, with the fullest stage.
TEST(Validation, MemoryReadOnOneRankIsComparedWithItsStage) {
    Case c = llama8b_tp8_case();
    c.cluster.gpus = 16;
    c.layout.pp = 2;
    c.layout.global_batch = 16;
    c.measured.memory_kind = "reserved";
    c.measured.memory_gb_per_gpu = 10.0;
    const Plan p = evaluate(c.model, c.cluster, c.layout);
    ASSERT_EQ(p.stages.size(), 2u);
    const double first = p.stages[0].memory.reserved_bytes(), last = p.stages[1].memory.reserved_bytes();
    ASSERT_NE(first, last);
    CaseList list;
    for (const std::optional<int64_t> stage : {std::optional<int64_t>(0), std::optional<int64_t>(1),
                                               std::optional<int64_t>(), std::optional<int64_t>(2)}) {
        list.cases.push_back(c);
        list.cases.back().measured.memory_stage = stage;
    }
    const ValidationReport r = validate_cases(list);
    ASSERT_EQ(r.cases.size(), 4u);
    EXPECT_NEAR(*r.cases[0].memory_error, first / 10e9 - 1.0, 1e-12);
    EXPECT_NEAR(*r.cases[1].memory_error, last / 10e9 - 1.0, 1e-12);
    EXPECT_NEAR(*r.cases[2].memory_error, std::max(first, last) / 10e9 - 1.0, 1e-12);  // the fullest
    EXPECT_EQ(r.cases[3].error, "measured.memory_stage: expected a stage index below pp (2), got 2");
}

// validate counts how often measured throughput falls inside each plan's 80 % range: two runs just
// inside either end, two just outside, so 2 of 4.
TEST(Validation, CountsMeasuredThroughputInsideThePlansRange) {
    const Case c = llama8b_tp8_case();
    const CaseResult p = predict_case(c);
    ASSERT_TRUE(p.error.empty()) << p.error;
    ASSERT_LT(p.range_low, p.tokens_per_s_per_gpu);
    ASSERT_GT(p.range_high, p.tokens_per_s_per_gpu);
    CaseList list;
    for (double m : {p.range_low * 1.01, p.range_high * 0.99, p.range_high * 1.01, p.range_low * 0.99}) {
        Case k = c;
        k.measured.tokens_per_s_per_gpu = m;
        list.cases.push_back(k);
    }
    const ValidationReport r = validate_cases(list);
    EXPECT_EQ(r.summary.predicted, 4);
    EXPECT_EQ(r.summary.in_range, 2);
    const json j = validation_to_json(r)["summary"]["range"];
    EXPECT_EQ(j["inside"], 2);
    EXPECT_DOUBLE_EQ(j["share"].get<double>(), 0.5);
    EXPECT_NE(format_validation(r, false).find("80 % range: 2 of 4 measured inside (50 %)"), std::string::npos);
}
