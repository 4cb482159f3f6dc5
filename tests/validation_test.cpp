// Fidelity: the planner against published training runs (../shared/validation/calibration.json and the
// case files in examples/validation/). Bounds are the figures reached when the defaults were last fitted
// (docs/validation.md), with a little headroom: a regression fails CI. The calibration loop on runs of a
// known profile, and the 80 % ranges, are calibrate_test.cpp's; how a prediction is compared with a
// measurement (ranking pairs, memory of its kind, the range's count) is validate_compare_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "helpers.h"
#include "shardplan/calibrate.h"
#include "shardplan/compute.h"
#include "shardplan/constants.h"
#include "shardplan/presets.h"
#include "shardplan/suggest.h"
#include "shardplan/validate.h"

using namespace shardplan;

namespace {
const std::string kCalibration = shardplan::testing::shared_path("validation/calibration.json");

// A case file transcribed into the repository (examples/validation/), fitted on nowhere.
CaseList example_cases(const std::string& file) {
    const std::string path = std::string(SHARDPLAN_SOURCE_DIR) + "/examples/validation/" + file;
    return read_cases(read_json_file(path, file), file);
}
}  // namespace

// A run whose recomputation the source did not state, and which cannot fit without some, is planned with
// the fastest recomputation that fits, not with full: Llama 3 70B at TP 8, micro-batch 4 of 8,192 tokens
// on 64 H100s needs 85.5 GB and more without recomputation and with Megatron's default (core_attn) alone;
// replaying the norms and the MLP as well fits, and is faster than replaying whole layers.
TEST(Validation, AnAssumedRecomputationThatCannotFitIsPlannedWithTheFastestThatFits) {
    const json j = json::parse(R"J({
      "id": "t", "model": "llama3-70b",
      "cluster": {"gpu": "h100-sxm", "gpus": 64, "gpus_per_node": 8, "scale_up_domain": 8},
      "layout": {"tp": 8, "cp": 1, "pp": 1, "dp": 8, "ep": 1, "etp": null, "vpp": 1, "micro_batch": 4,
                 "global_batch": 64, "seq_len": 8192, "zero": 1, "recompute": "none",
                 "sequence_parallel": true, "precision": "bf16"},
      "measured": {"tokens_per_s_per_gpu": 700},
      "derived": ["layout.recompute: [assumed] none (not stated)"]})J");
    const Case c = case_from_json(j);
    ASSERT_TRUE(c.is_assumed("layout.recompute"));
    ASSERT_FALSE(evaluate(c.model, c.cluster, c.layout).memory_fits);
    RecomputeResolution how;
    const Plan p = plan_case(c, &how, true);
    EXPECT_TRUE(p.memory_fits);
    EXPECT_EQ(how.sentence, "layout.recompute: none → selective (core_attn,layernorm,mlp) (the assumed value does not fit)");
    EXPECT_TRUE(how.raised_to_fit);
    EXPECT_FALSE(how.from_framework);
    EXPECT_FALSE(how.fits_as_written);
    // Every lighter option misses and every fitting one is slower: the first selective set and the block
    // method with one layer fewer than it fits with do not fit; full recomputation fits and is slower.
    double fastest = 0;
    for (const auto& [change, l] : recompute_options(c.model, c.cluster, c.layout,
                                                     [&](const Layout& n) { return evaluate(c.model, c.cluster, n); })) {
        const Plan q = evaluate(c.model, c.cluster, l);
        if (q.memory_fits) fastest = std::max(fastest, q.throughput.tokens_per_s_per_gpu);
        if (l.recompute == Recompute::selective && l.recompute_modules == module_bit(RecomputeModule::core_attn))
            EXPECT_FALSE(q.memory_fits) << change;
        if (l.recompute == Recompute::full && l.recompute_method != RecomputeMethod::block)
            EXPECT_LT(q.throughput.tokens_per_s_per_gpu, p.throughput.tokens_per_s_per_gpu);
    }
    EXPECT_DOUBLE_EQ(fastest, p.throughput.tokens_per_s_per_gpu);
    // A stated recomputation is planned as written, fitting or not.
    json stated = j;
    stated["derived"] = json::array();
    EXPECT_FALSE(plan_case(case_from_json(stated), &how, true).memory_fits);
    EXPECT_EQ(how.sentence, "");
    // When nothing fits (70B on 8 H100: its weights and optimizer state alone, about 18 bytes a parameter
    // over 8 GPUs, exceed 80 GB), the run is planned with full recomputation, and said.
    json tight = j;
    tight["cluster"]["gpus"] = 8;
    tight["layout"]["dp"] = 1;
    tight["layout"]["global_batch"] = 8;
    const Plan full = plan_case(case_from_json(tight), &how, true);
    EXPECT_FALSE(full.memory_fits);
    EXPECT_EQ(full.layout.recompute, Recompute::full);
    EXPECT_EQ(full.layout.recompute_method, RecomputeMethod::uniform);
    EXPECT_EQ(how.sentence, "layout.recompute: none → full (the assumed value does not fit; neither does this)");
}

// PaxML's GPU recipes checkpoint with SAVE_DOT_WITH_NO_BATCH_DIM, and with SAVE_NOTHING under FP8
// (paxml/contrib/gpu/scripts_gpu/configs.py): a PaxML case whose recomputation the source leaves out is
// planned so. GPT-3 5B on 16 H100s, 4 × 2,048 tokens a micro-batch, fits either way, so nothing is raised;
// a stated recomputation, or another framework, stays as written.
TEST(Validation, AnAssumedRecomputationIsTheFrameworksOwnWhereItsRecipesSay) {
    json j = json::parse(R"J({
      "id": "pax",
      "model": {"name": "GPT-3 5B", "layers": 24, "hidden": 4096, "ffn_hidden": 16384, "heads": 32, "kv_heads": 32,
                "head_dim": 128, "vocab": 50257, "mlp": "gelu", "tied_embeddings": true},
      "cluster": {"gpu": "h100-sxm", "gpus": 16, "gpus_per_node": 8, "scale_up_domain": 8},
      "layout": {"tp": 1, "cp": 1, "pp": 1, "dp": 16, "ep": 1, "etp": null, "vpp": 1, "micro_batch": 4,
                 "global_batch": 64, "seq_len": 2048, "zero": 3, "recompute": "none",
                 "sequence_parallel": false, "precision": "bf16", "framework": "PaxML (JAX)"},
      "measured": {"tokens_per_s_per_gpu": 12000},
      "derived": ["layout.recompute: [assumed] 'none' (not stated)"]})J");
    RecomputeResolution how;
    const Plan bf16 = plan_case(case_from_json(j), &how, true);
    EXPECT_EQ(bf16.layout.recompute, Recompute::selective);
    EXPECT_EQ(recompute_modules_string(bf16.layout), "core_attn,layernorm,mlp_act");
    EXPECT_TRUE(how.from_framework);
    EXPECT_FALSE(how.raised_to_fit);
    EXPECT_TRUE(how.fits_as_written);
    EXPECT_EQ(how.sentence, "layout.recompute: none → selective (core_attn,layernorm,mlp_act) (the framework's own checkpointing)");
    // The replay costs time: slower than the case as written, which fits too.
    const Case as_written = case_from_json(j);
    EXPECT_LT(bf16.throughput.tokens_per_s_per_gpu,
              evaluate(as_written.model, as_written.cluster, as_written.layout).throughput.tokens_per_s_per_gpu);

    j["layout"]["precision"] = "fp8";
    const Plan fp8 = plan_case(case_from_json(j), &how, true);
    EXPECT_EQ(fp8.layout.recompute, Recompute::full);
    EXPECT_EQ(how.sentence, "layout.recompute: none → full (the framework's own checkpointing)");

    json stated = j;
    stated["derived"] = json::array();
    EXPECT_EQ(plan_case(case_from_json(stated), &how, true).layout.recompute, Recompute::none);
    EXPECT_EQ(how.sentence, "");
    json other = j;
    other["layout"]["framework"] = "MaxText (JAX)";
    EXPECT_EQ(plan_case(case_from_json(other), &how, true).layout.recompute, Recompute::none);
    EXPECT_FALSE(how.from_framework);
}

TEST(Validation, PublishedRunsStayWithinTheReachedBounds) {
    SHARDPLAN_REQUIRE_SHARED(kCalibration);
    const ValidationReport r = validate_cases(read_cases(read_json_file(kCalibration, "calibration"), "calibration"));
    const ValidationSummary& s = r.summary;
    EXPECT_GE(s.predicted, 320);
    // reached in sample: 5.0 % / 16.9 %, ranking 85 %, since SC21's ZeRO-3 runs are priced as DeepSpeed's
    // per-tensor engine ran them, FlashAttention-2 on A100 at its own share of peak and the unfused core as
    // batched GEMMs over the whole square (held out 6.1 → 6.8 %, p90 22.6 → 20.9 %, ranking 75 → 95 %);
    // 5.0 % / 17.2 %, ranking 80 %, since attention's speed follows the head dimension on
    // Hopper and Blackwell (FlashAttention-3 paper, Fig. 5, causal; held out 6.0 → 6.1 %, p90 23.5 → 22.6 %);
    // 4.9 % / 18.0 %, ranking 80 %, since a GEMM's time is its tiles' compute plus its
    // short side's overhead (not their product), and a rank's experts share their waves and, launched one
    // by one (Transformer Engine), are the host's to issue (held out 6.3 → 6.0 %, p90 23.8 → 23.5 %);
    // 4.6 % / 17.6 %, ranking 80 %, since reduce-scatter and all-gather across domains are
    // NCCL's rings, not a two-level form (held out 7.0 → 6.3 %, p90 25.1 → 23.8 %); 4.3 % / 16.2 % since the constants are one set shared by the generations plus each
    // generation's, fitted from generic values (4.3 % / 15.8 % before, the fit's fixed point from the
    // shipped values); 4.3 % / 15.8 % since an assumed recomputation that cannot fit is planned with the
    // fastest that does rather than full, and attention's sequence dependence is taken from its source (5.1 % /
    // 17.7 % before); 5.2 % / 17.7 % with all-gathers and reduce-scatters as rings (17.8 % before); 5.2 % / 17.8 % since the allocator's cache yields to allocations (fewer runs need
    // an assumed recomputation to fit); 5.3 % / 17.7 % with the host's launch cost at its sourced 3 ms, shown in part
    // (5.1 % / 18.4 % with it fitted and added in full; 5.4 % / 18.3 % before the H100 96GB preset's peak; 5.3 % / 18.2 %
    // before torchtitan's and Megatron-LM's gradients went fp32; 5.5 % / 18.3 % before Megatron-Bridge's EP overlap followed the GPU;
    // 5.3 % / 17.7 % before jobs were placed in equal segments per
    // scale-up domain, which took the in-sample ranking from 65 % to 80 %), with attention's two kernel
    // classes (6.2 % / 21.4 % before; 6.4 /
    // 18.1 with only TP overlap as a layout setting, 5.9 / 18.8 with both overlaps as fitted shares, whose
    // fits sat at their bounds); the held-out figures, below, are the ones that matter (docs/validation.md).
    // 5.0 % / 16.8 % since flash attention's backward is 2.9 × its forward (its FLOPs at 0.87 of the
    // forward's speed, FlashAttention-3 paper); 4.9 % / 16.9 % since a layer of fused kernels takes 0.73
    // of the host's launch time (fused_host_share; 5.0 % / 16.9 % before); 5.1 % / 16.7 % since Blackwell's
    // bf16 GEMMs and their roll-off are taken from a B200's kernel timings (SimuMax's), not fitted; 5.1 % /
    // 14.5 % since Megatron-Bridge's MXFP8 MoE recipe on Blackwell from 26.06 runs as its recipe sets it
    // (layout.cuda_graphs full, grouped experts, HybridEP, EP overlap); 5.0 % / 14.3 % since NVFP4's GEMMs
    // run at their burst figure times the B200's under-load ratio (Blackwell's `gemm_8` 0.62 → 0.58, at its
    // cuBLASLt figure rather than above it); 4.9 % / 14.2 % since llm-foundry's runs are priced as the eager
    // PyTorch they ran; 4.7 % / 14.0 % since the defaults take the NIC share from nccl-tests (0.9) instead of
    // fitting it; 4.7 % / 13.2 % since a PaxML run's unstated recomputation is its recipes' own; 4.4 % /
    // 13.0 % since a hidden collective pays the SMs its kernels hold (comm_sms; Hopper's refit gemm_16 0.68 →
    // 0.70, gemm_8 0.63 → 0.65, towards their cuBLAS figures); 4.3 % / 12.8 % since NeMo's and
    // Megatron-Bridge's FP8 weights are held in 8 bits (fp8_params), so their 405B FP8 runs fit as they ran;
    // 4.2 % / 12.8 % since Megatron-Bridge's NVFP4 runs expose their TP traffic; 4.3 % / 13.2 % since every
    // low-precision GEMM's input is cast (the second MLP GEMM's and the experts' too; Hopper's refit gemm_8
    // 0.643 → 0.656, towards cuBLASLt's 0.66-0.69).
    EXPECT_LE(s.median_abs_error, 0.046) << "median |error| of tokens/s per GPU";
    EXPECT_LE(s.p90_abs_error, 0.133) << "90th percentile |error|";
    // The same-job ranking in sample: 90 % of 20 pairs since the NIC share is sourced (one Megatron-Bridge
    // pair); 85 % since SC21's ZeRO-3 runs are priced (its other
    // PTD-P / ZeRO-3 pair goes the measured way); 80 % since reduce-scatter and all-gather are rings (one of
    // SC21's PTD-P / ZeRO-3 pairs now goes the measured way); 75 % since the shared set (80 % before: one Megatron-Bridge
    // Llama 3.1 405B NVFP4 pair that differs only by container release, predicted 0.2 % apart, flips;
    // 65 % while the GB200 jobs filled 72-GPU racks in order and their EP groups crossed racks; held out it
    // is 75 %, below).
    EXPECT_GE(s.ranking.share(), 0.85);
    // reached: 6 of 340 (1.8 %) since the shared set: Blackwell's reserve_gb, which only one source's runs
    // move, takes the shared 2.0 GB (5.3 GB fitted before), and the DeepSeek-V3 GB200 baseline fits.
    // 7 of 340 (2.1 %): torchtitan's compile + Float8 run fits since its expandable segments hold
    // no allocator cache. Before, 8 of 340 (2.4 %): six long-context Qwen3-235B runs; since gradients follow each framework's
    // dtype (fp32 for Megatron-LM with bf16 and for torchtitan), the DeepSeek-V3 GB200 baseline, whose
    // Megatron-MoE-ModelZoo script offloads the optimizer states (--offload-optimizer-states, a setting the
    // case does not state), and torchtitan's FSDP + torch.compile + Float8 run on 8 GPUs, 1.3 GB over
    // (compile's fusion is not modelled: torchtitan's compiled runs are predicted 12-16 % over). 6 before.
    EXPECT_LE(double(s.false_oom) / double(s.cases), 0.018) << "runs predicted not to fit although they ran";
    // reached: 14.1 % on 10 torchtitan runs, against the predicted reserved figure, with no allocator cache
    // under their expandable segments (14.6 % with a fitted 1.9 % of activations; 20.3 % before their
    // gradients were fp32, as torchtitan reduces and FSDP2 accumulates them; 32.7 % before eager kernels,
    // 22.5 % before the sequence-parallel gather buffers and a layer's backward at the peak).
    EXPECT_LE(s.memory.median_abs_error, 0.15) << "memory model against measured peaks";
    // No source is left far behind: each source's median stays under 15 %.
    for (const auto& [source, st] : s.by_source)
        if (st.count >= 5) EXPECT_LE(st.median_abs_error, 0.15) << source;
}

// vTrain's 1,440 single-node A100 runs were never fitted on: they test the ranking on unseen runs. Reached:
// 97 % of 46,421 same-job pairs ordered as measured (96 % before the unfused core was priced as batched
// GEMMs), 85 % of the runs inside their plan's range since the bands of Megatron-DeepSpeed ("deepspeed", its
// engine's family) come from these runs and BigScience's, net of the host launch cost's own widening (in
// sample for that band; built from BigScience's runs alone they cover 98 %: tools/fit_ranges.py), 75 %
// before, from the A100 runs of calibration.json's frameworks, 77 % (78 % before llm-foundry's runs
// were priced as eager PyTorch, whose refit narrowed the Ampere band; 91 % at most), median 7.5 %, p90 18.1 % (7.4 %
// before flash attention's backward was 2.9 × its forward; 74 %, 7.7 %, 18.8 % since DeepSpeed's DP traffic runs after
// the backward, dp_comm_overlap, and the refit it brought; 7.6 %, 18.7 % since NCCL's tree inside a node is
// the chain it is, its small TP all-reduces no longer priced as a binary tree), since
// a layer of Megatron-DeepSpeed's fused kernels takes 0.73 of the host's launch time, the share that meets
// these runs' own floor (15.6 %, 27.5 %, 86 % before: the floor had been read as 3 ms); before, 90 % of the runs inside
// their plan's range, now that it carries the host launch cost's uncertainty (39 % without it, since the
// A100 bands narrowed with the refit; 67 % before; 34 % while the bands were centred on each class's
// held-out bias). Median 14.6 %, p90 27.2 % (15.1 %, 66.4 % with the host's cost fitted and added in full).
// The range's coverage is held between 70 and 92 %: wider bands would be as wrong as narrower ones.
TEST(Validation, VTrainRankingAndRangesStayWithinTheReachedBounds) {
    const std::string file = shardplan::testing::shared_path("validation/vtrain_single_node.json");
    SHARDPLAN_REQUIRE_SHARED(file);
    const ValidationReport r = validate_cases(read_cases(read_json_file(file, "vtrain"), "vtrain"));
    ASSERT_GE(r.summary.predicted, 1400);
    EXPECT_GE(r.summary.ranking.share(), 0.95);
    EXPECT_GE(double(r.summary.in_range) / double(r.summary.predicted), 0.70);
    EXPECT_LE(double(r.summary.in_range) / double(r.summary.predicted), 0.92);
    EXPECT_LE(r.summary.median_abs_error, 0.08);
    EXPECT_LE(r.summary.p90_abs_error, 0.19);
    // The first choice: in each of its 24 jobs the layout predicted fastest is the fastest measured.
    EXPECT_EQ(r.summary.first_choice.jobs, 24);
    EXPECT_GE(r.summary.first_choice.within_5, 23);
}

TEST(Validation, UltraScaleReservedMemoryStaysWithinTheReachedBound) {
    // 1,171 nanotron runs with measured reserved memory. Reached: median 8.0 %, mean signed −7.7 %, 35 %
    // of them more than 10 % under, each compared with the first pipeline stage, the one its rank 0 holds
    // (8.3 %, −6.9 % against the fullest stage, which read the LM head's stage where it is fuller), with the classic allocator's cache at 0.2 of the activations (a
    // constant these runs chose: they are in sample for it; docs/model.md §2.5) and trimmed to usable HBM
    // (13.1 %, −15.6 % and 62 % with 0.019 fitted on torchtitan's expandable-segment runs; 12.4 % and −14.8 % before the refit with tile and wave quantization lowered
    // Hopper's fitted fragmentation from 0.035 to 0.019; 13.3 % and −15.7 % without a layer's backward at the peak; 30.3 % and −29.7 % before nanotron's cost-balanced stage split, DDP's bucket copies
    // and the sequence-parallel gather buffers; 39.6 % and −40 % before eager kernels; docs/validation.md
    // "Memory"). The ranking of its same-job pairs: 75.9 % now that TP traffic is exposed unless the
    // layout overlaps it, as nanotron does not (70.1 % with a fitted Hopper share hiding 89 % of it; 68.5 %
    // before tile and wave quantization, 67.2 % before the split).
    const std::string file = shardplan::testing::shared_path("validation/ultrascale_playbook.json");
    SHARDPLAN_REQUIRE_SHARED(file);
    const ValidationReport r = validate_cases(read_cases(read_json_file(file, "ultrascale"), "ultrascale"));
    EXPECT_GE(r.summary.memory.count, 1100);
    EXPECT_LE(r.summary.memory.median_abs_error, 0.082);
    EXPECT_GE(r.summary.memory.mean_signed_error, -0.08);
    EXPECT_LE(double(r.summary.memory_under_10) / double(r.summary.memory.count), 0.36);
    // 86.1 % of its 51,075 pairs since a cluster whose interconnect_note names AWS's EFA takes EFA's latency
    // across nodes (22 µs a step against 6; docs/validation.md, "AWS EFA's latency"; 86.0 % at 20 µs, 86.2 %
    // at 35, 86.0 % at 75). 85.8 % since nanotron's pipeline across nodes holds each layer to tp × the eager
    // layer's launch cost (pipeline_pacing; the throughput median 94 → 21 %: its form is read from these
    // runs, its 3 ms is the host's sourced figure; docs/validation.md, "nanotron's pipeline engine"); 82.2 %
    // before; 82.0 % of its 50,932 pairs since reduce-scatter and all-gather across nodes are rings (81.8 % before; 81.7 % before nanotron's gradient accumulation pass; 80.3 % with the host's launch cost fitted and added in full, 81 % before
    // the H100 96GB preset's peak moved Hopper's refit; 75.9 % before attention's kernel classes).
    EXPECT_GE(r.summary.ranking.share(), 0.858);
    EXPECT_LE(r.summary.median_abs_error, 0.22);
    // 85 % of the runs inside their plan's 80 % range (994 of 1,171) since nanotron's bands, within one node
    // and across nodes, come from these runs (in sample for them: a band built from half of them, drawn at
    // random, covers 80-89 % of the other half in 20 draws, one built without a model's runs 76-91 % of
    // that model's, one built from the earlier half by job id 95 % of the later and the later 35 % of the
    // earlier, whose slowest batch it has not seen; without any of them the runs take Hopper's band for any
    // framework and 48 % fall inside; 49 %, 574, before; docs/validation.md, "The 80 % range every plan
    // carries").
    EXPECT_GE(double(r.summary.in_range) / double(r.summary.predicted), 0.75);
    EXPECT_LE(double(r.summary.in_range) / double(r.summary.predicted), 0.92);
    // The first choice, where the ranking's pairs do not say it: of its 16 jobs (model × GPU count), the
    // layout predicted fastest is the fastest measured in 5 and within 5 % of it in 8, a median 5.4 %
    // (mean 23 %) short. The misses: at 128-512 GPUs the two small models' picks are DP 128-256 across
    // nodes of EFA, measured 24-85 % below their job's fastest, and the 80B model on 64 GPUs picks a
    // pipeline measured at a third of TP 16's (docs/validation.md, "The first choice").
    EXPECT_EQ(r.summary.first_choice.jobs, 16);
    EXPECT_GE(r.summary.first_choice.within_5, 8);
    EXPECT_LE(r.summary.first_choice.median_shortfall, 0.055);
}

// BigScience's search for BLOOM's layout (examples/validation/bigscience_tr11_search.json, in the repository,
// fitted on nowhere): 40 Megatron-DeepSpeed runs on up to 384 A100s of Jean Zay, whose nodes have four
// Omni-Path 100 Gb/s links for eight GPUs (6.25 GB/s each, the BLOOM paper), as each case states. Reached:
// throughput median 18.9 %, p90 27.4 %, ranking 87 % of 38 pairs since DeepSpeed's DP traffic runs after the
// backward (dp_comm_overlap false: its reduction over Omni-Path is exposed; the pair that flips, 196B at DP 4 ·
// PP 12 with micro-batch 2 against 4, is predicted 0.1 % apart either way); 19.3 %, 28.0 %, 89 % since a GEMM with an unaligned operand row
// runs at gemm_unaligned (the hidden-14,400 rows' head dimension, 150: they read +17..+29 %, as the others,
// where they had read +45..+64 %); 38.8 %, p90 55.2 %, ranking 89 % since the defaults take the NIC share
// from nccl-tests' 0.9 (Ampere's had been fitted at 0.77; 38.1 %, 54.0 % before); 38.0 %, p90 53.8 %,
// ranking 87 % of 38 pairs, memory median 6.4 % of the device figure,
// since flash attention's backward is 2.9 × its forward; 38.2 %, 54.0 %, 87 % since a layer of fused kernels
// takes 0.73 of the host's launch time (one pair flips); 38.0 %, 54.2 %, 89 %
// (41.4 % with the A100 preset's 25 GB/s NIC, 41.6 % since the NIC share is nccl-tests' 0.9) since SC21's ZeRO-3 runs are priced and Ampere's NIC share
// left its 0.30 floor for 0.76 (20.3 %, 35.2 %, 79 % at the floor, which slowed these runs by a
// share no NIC delivers; docs/validation.md, "DeepSpeed's BF16 optimizer"). Since DeepSpeed's pipeline
// engine sends an eighth of the boundary tensor a TP rank and waits on its sends (pipeline_scatter_gather,
// pipeline_sends): 19.4 %, p90 28.0 % (27.8 % before, through Ampere's refit), ranking 87 → 89 %.
TEST(Validation, BigScienceLayoutSearchStaysWithinTheReachedBounds) {
    const CaseList cases = example_cases("bigscience_tr11_search.json");
    const ValidationReport r = validate_cases(cases);
    ASSERT_EQ(r.summary.predicted, 40);
    EXPECT_LE(r.summary.median_abs_error, 0.195);
    EXPECT_LE(r.summary.p90_abs_error, 0.281);
    EXPECT_GE(r.summary.ranking.share(), 0.88);
    // Its 10 jobs' first choices: the fastest measured in 7, every one within 5 % of it (2.0 % at worst).
    EXPECT_EQ(r.summary.first_choice.jobs, 10);
    EXPECT_EQ(r.summary.first_choice.within_5, 10);
    EXPECT_LE(r.summary.memory.median_abs_error, 0.07);
    // 34 of 40 inside their plan's 80 % range since Megatron-DeepSpeed's band across nodes is theirs (in
    // sample: from vTrain's single-node runs alone, 1 of 40; none before, from Megatron-LM's A100 runs).
    EXPECT_GE(r.summary.in_range, 30);
    EXPECT_LE(r.summary.in_range, 37);
    // The network is the case's: with the preset's four times faster NIC the same runs come out faster.
    CaseList preset = cases;
    for (Case& c : preset.cases) c.cluster.gpu.scale_out_Bps = preset_gpu("a100-80g").scale_out_Bps;
    EXPECT_GE(validate_cases(preset).summary.median_abs_error, r.summary.median_abs_error + 0.02);
}

// A cluster's own memory readings, the workflow docs/validation.md ("Calibrating on your own cluster")
// describes: fit the allocator's share and the runtime on every second run, predict the others' memory.
// BigScience's search (nvidia-smi, the device figure, under DeepSpeed's classic allocator): the share
// 0.2 → 0.24 and the runtime to its floor of 0.5 GB, a model defect (beside their activations the runs
// hold less than the model allocates them); the 18 held out 7.2 → 5.4 %, p90 18.2 → 16.0 %, signed +8.5 → +5.6 %. The Ultra-Scale
// Playbook's runs through job 13,522,803 (max_memory_reserved; nanotron's first batch, which kept each
// column-parallel GEMM's gathered input, docs/validation.md "Memory"): the share goes to its bound of 0.3
// and calibrate reports it as a model defect, the kept inputs being what a share of the activations
// cannot say; the 128 held out 14.8 → 12.3 %, 78 → 69 of them more than 10 % under.
namespace {
struct MemorySplit {
    MemoryFit fit;
    MemoryScore held_before, held_after;
};
MemorySplit calibrate_memory_on_every_second(const std::vector<Case>& cases) {
    std::vector<Case> fit, held;
    for (size_t i = 0; i < cases.size(); ++i) (i % 2 == 0 ? held : fit).push_back(cases[i]);
    const Efficiency start = cases.front().cluster.gpu.eff;
    MemorySplit out{fit_memory(fit, start), {}, {}};
    out.held_before = score_memory(held, start);
    out.held_after = score_memory(held, out.fit.eff);
    return out;
}
}  // namespace

TEST(Validation, CalibratingMemoryOnOneClustersRunsPredictsItsOtherRuns) {
    const MemorySplit bloom = calibrate_memory_on_every_second(example_cases("bigscience_tr11_search.json").cases);
    EXPECT_EQ(bloom.held_before.memory.count, 18);
    EXPECT_GT(bloom.fit.eff.fragmentation, 0.2);
    EXPECT_EQ(bloom.fit.at_bounds, std::vector<std::string>{"reserve_gb"});
    EXPECT_LE(bloom.held_after.memory.median_abs_error, bloom.held_before.memory.median_abs_error - 0.01);
    EXPECT_LE(bloom.held_after.memory.median_abs_error, 0.06);
    EXPECT_LT(bloom.held_after.memory.p90_abs_error, bloom.held_before.memory.p90_abs_error);
    const std::string file = shardplan::testing::shared_path("validation/ultrascale_playbook.json");
    SHARDPLAN_REQUIRE_SHARED(file);
    std::vector<Case> first;
    for (const Case& c : read_cases(read_json_file(file, "ultrascale"), "ultrascale").cases)
        if (std::stoll(c.id.substr(c.id.rfind('_') + 1)) <= 13522803) first.push_back(c);
    ASSERT_EQ(first.size(), 256u);
    const MemorySplit usp = calibrate_memory_on_every_second(first);
    EXPECT_EQ(usp.fit.at_bounds, std::vector<std::string>{"fragmentation"});
    EXPECT_LT(usp.held_after.memory.median_abs_error, usp.held_before.memory.median_abs_error);
    EXPECT_LT(usp.held_after.under_10, usp.held_before.under_10);
    EXPECT_GT(usp.held_after.memory.median_abs_error, 0.10);  // a share of the activations cannot say what they kept
}

// SimuMax's B200 runs (examples/validation/simumax_b200.json, in the repository, fitted on nowhere): 43
// Megatron-LM runs on one 8-GPU B200 node, models cut to their first layers, with the most
// max_memory_allocated of any rank (19 readings, one per layout). Reached: memory median 1.5 %, p90 5.9 %,
// none more than 10 % under; throughput median 5.9 %, p90 14.0 %, ranking 98 % since every low-precision
// GEMM's input is cast (Blackwell refit: `attn` 0.215 → 0.241, towards the node's own 0.25); 6.4 %, 13.7 %
// since the pipeline's sends are priced as each framework runs them; 7.2 %, 14.9 %, ranking 98 % of 103 pairs since Megatron-LM's
// DP traffic runs after the backward as these runs launch it, without --overlap-grad-reduce (dp_comm_overlap
// false; the step's fixed part measured 24-98 ms where the model had 7-22 ms); 8.7 %, 15.9 %, 96 % since the
// defaults take the NIC share from nccl-tests (Blackwell refit: `moe` 0.67 → 0.63); 8.5 %, 15.8 % since NVFP4's
// GEMMs run at their burst figure times the node's under-load ratio (Blackwell refit: `attn` 0.158 → 0.185,
// its dense rows a point faster, the 128k-token CP rows 8 points nearer); 6.9 %, 18.8 % since the
// recomputation ladder took the cheap replays (Blackwell refit); 7.3 % since Blackwell's `moe` was refit
// with Megatron-Bridge's 26.06 MoE recipe (0.81 → 0.74, its MoE rows 2-3 % slower); 6.5 %, 18.9 % since
// Blackwell's GEMM roll-off is taken from the node's kernel timings (13.7 %, 22.0 %, 97 % with it fitted
// on calibration.json; docs/validation.md, "Megatron-LM on one B200 node").
TEST(Validation, SimuMaxB200RunsStayWithinTheReachedBounds) {
    const CaseList cases = example_cases("simumax_b200.json");
    const ValidationReport r = validate_cases(cases);
    ASSERT_EQ(r.summary.predicted, 43);
    EXPECT_EQ(r.summary.false_oom, 0);
    ASSERT_EQ(r.summary.memory.count, 19);
    ASSERT_EQ(r.summary.memory_by_kind.count("allocated"), 1u);  // compared with the allocated figure
    EXPECT_EQ(r.summary.memory_by_kind.at("allocated").count, 19);
    EXPECT_LE(r.summary.memory.median_abs_error, 0.02);
    EXPECT_LE(r.summary.memory.p90_abs_error, 0.065);
    EXPECT_EQ(r.summary.memory_under_10, 0);
    EXPECT_LE(r.summary.median_abs_error, 0.065);
    EXPECT_LE(r.summary.p90_abs_error, 0.145);
    EXPECT_GE(r.summary.ranking.share(), 0.97);
    // Its 7 jobs' first choices: the fastest measured in 6, all within 5 % of it (0.6 % at worst).
    EXPECT_EQ(r.summary.first_choice.jobs, 7);
    EXPECT_EQ(r.summary.first_choice.within_5, 7);
}

// One cluster's own runs, the workflow docs/validation.md ("Calibrating on your own cluster") describes:
// calibrate on SimuMax's B200 rows at 4 and 8 micro-batches and the context-parallel rows (31), predict
// the 12 rows at 32 micro-batches it never saw. Reached: held out 7.5 % with the defaults, 2.9 % with the
// fit since the layout exposes their DP traffic (dp_comm_overlap false for Megatron-LM: 7.8 % and 3.0 %
// before; 5.9 % and 2.9 % before the defaults took the NIC share from nccl-tests; 10.9 % and 2.4 % while
// Blackwell's roll-off was fitted on calibration.json). The fit's GEMM curve stays near the node's own
// kernel timings, 0.42 of peak at a 4,096-wide GEMM and 0.36 at 640 against the timings' 0.45-0.51 and
// 0.37-0.45: gemm_16 and gemm_half_dim trade along a flat valley (0.43 and 134 from these defaults, about
// 0.5 and 262 from the last ones), so the curve is checked, not either constant. It finds attention
// faster than the defaults (`attn` 0.29 against the node's 0.25), needs no DP overlap share (the layout
// exposes the DP traffic Megatron-LM runs without --overlap-grad-reduce), and leaves no MoE constant at a bound (moe and a2a went to 1 from the
// fitted roll-off).
TEST(Validation, CalibratingOnOneNodesRunsPredictsItsOtherRuns) {
    const CaseList cases = example_cases("simumax_b200.json");
    std::vector<Case> fit, held;
    for (const Case& c : cases.cases) {
        (c.id.ends_with("_mbc32") ? held : fit).push_back(c);
    }
    ASSERT_EQ(fit.size(), 31u);
    ASSERT_EQ(held.size(), 12u);
    const Efficiency start = fit.front().cluster.gpu.eff;
    const FitResult r = fit_efficiency(fit, start, kPriorWeight, fit_params(), 1);
    const FitScore before = score_efficiency(held, start), after = score_efficiency(held, r.eff);
    EXPECT_GT(before.throughput.median_abs_error, 0.05);
    EXPECT_LT(after.throughput.median_abs_error, 0.035);
    EXPECT_LT(after.throughput.p90_abs_error, 0.09);
    const double wide = gemm_efficiency(r.eff, Precision::bf16, 8192, 8192, 4096);
    const double narrow = gemm_efficiency(r.eff, Precision::bf16, 8192, 8192, 640);
    EXPECT_GE(wide, 0.40);
    EXPECT_LE(wide, 0.55);
    EXPECT_GE(narrow, 0.30);
    EXPECT_LE(narrow, 0.45);
    EXPECT_GE(r.eff.attn, 0.20);
    EXPECT_LE(r.eff.attn, 0.34);
    // Megatron-LM without --overlap-grad-reduce: its DP traffic runs after the backward whatever
    // overlap_dp says (dp_comm_overlap false), so these runs leave the constant where it started, where
    // it had been pressed to its bound of 0 before the layout said so.
    EXPECT_DOUBLE_EQ(r.eff.overlap_dp, start.overlap_dp);
    EXPECT_LT(r.eff.moe, 0.99);
    EXPECT_LT(r.eff.a2a, 0.99);
}

// The headline figure: each source of calibration.json predicted with constants fitted on the others.
// Reached: median 5.1 %, p90 16.3 %, ranking 90 % of 20 since Megatron-Bridge's NVFP4 runs expose their TP
// traffic, as its performance configs run them (tp_comm_overlap off for nvfp4); 5.4 %, 16.4 %, 90 % since
// NeMo's and Megatron-Bridge's FP8 weights are
// held in 8 bits (fp8_params; Megatron-Bridge's GB200 405B FP8 runs no longer planned with a recomputation
// they did not run); 5.4 %, 16.5 %, 90 % since a collective hidden under computation pays
// the SMs its kernels take from it (comm_sms / sms of the hidden time, docs/model.md §5.3; 5.3 %, 16.1 %
// charging only the DP traffic, but DeepSeek's all-to-all kernels hold their 20 SMs too); median 5.6 %,
// p90 17.2 %, ranking 90 % of 20 since the TP calls of the vocabulary-parallel ends
// (embedding, output layer) are priced; 5.5 %, 17.1 %, 90 % since Megatron-LM's and DeepSpeed's DP
// traffic runs after the backward unless the layout overlaps it (dp_comm_overlap; SC21 4.1 → 4.8 %, p90
// 15.1 → 16.7 %, its Table 1 runs at DP 32 slower still; MosaicML 4.0 → 4.2 % through Ampere's refit), and
// since a recomputation the source leaves out is
// planned as the framework's recipes run it where they say (PaxML's GPU configs: DGX Cloud's p90 23.7 →
// 17.4 %, its PaxML rows +22..+53 % → +3..+34 %; Megatron-Bridge 8.4 → 9.0 % through Hopper's refit);
// 5.8 %, 17.3 %, 90 %, since the defaults take the NIC share from
// nccl-tests' 0.9 of line rate instead of fitting it (Blackwell's fitted 0.66, below any measurement, had
// pressed a2a to its end; Megatron-Bridge 8.9 → 8.4 %, p90 20.7 → 17.9 %, MosaicML 4.4 → 3.9 %, DGX Cloud
// 6.5 → 6.4 %); 5.7 %, 16.9 %, 85 %, since llm-foundry's runs are priced as the eager
// PyTorch they ran (kernels and gradient accumulation eager: MosaicML's p90 14.5 → 14.1 %, DGX Cloud 6.7 →
// 6.5 %, Megatron-Bridge 8.5 → 8.9 % through the refit); 5.7 %, 17.2 %, 85 %, since NVFP4's GEMMs run at their cuBLASLt burst
// figure times the B200's under-load ratio (0.76 × 0.51/0.63 = 0.615; Megatron-Bridge 9.4 → 8.5 %, p90
// 22.2 → 20.8 %, its NVFP4 runs +15..+26 % → +5..+17 %); 5.8 %, 17.3 %, 85 %, since the recomputation ladder offers the cheap
// replays without the attention core (Megatron-Bridge's p90 23.6 → 22.2 %); 5.8 %, 17.4 %, 85 %, since
// Megatron-Bridge's MXFP8 MoE recipe on Blackwell from its 26.06 container is planned as it runs
// (layout.cuda_graphs full, grouped experts, HybridEP, EP overlap: its seven runs from -12..-38 % to
// -6..+10 %; Megatron-Bridge 10.8 → 9.3 %, p90 28.1 → 23.6 %); 6.0 %, 20.0 %, 85 %, since Blackwell's bf16 GEMMs and their roll-off are
// taken from a B200's kernel timings (SimuMax's), not fitted (the median better, the p90 a step worse at the
// 90th run: the 75th-88th percentiles all fell, 0.138 → 0.128 at the 75th); 6.6 %, 19.6 %, 85 %, since
// flash attention's backward is 2.9 × its
// forward (2.5 × had taken it at the forward's speed; MosaicML 4.7 → 4.9 %, torchtitan 5.9 → 5.7 %); 6.6 %,
// 20.0 %, 85 %, since a layer of fused kernels takes 0.73 of the
// host's launch time (fused_host_share, from vTrain's floor; DGX Cloud 8.5 → 7.6 %, Megatron-Bridge 13.1 →
// 11.3 %, SC21 7.7 → 4.5 %; two Megatron-Bridge Qwen3-30B pairs on 16 H100 flip, whose PP 2 run measured
// half its prediction and had been ordered by a 4 % margin); 6.8 %, 20.9 %, 95 %, since SC21's ZeRO-3 runs are priced as DeepSpeed's
// per-tensor ZeRO-3 of 2021 (layout.zero3_comm), FlashAttention-2 on A100 is read at its own share of peak
// (attn_gpu) and the unfused core as batched GEMMs over the whole square: alone, the ZeRO-3 price had left
// A100's attention to torchtitan's three runs when MosaicML was held out (8.1 %, 23.6 %, 85 %); 6.1 %, 22.6 %,
// 75 %, since attention's speed follows the head dimension
// on Hopper and Blackwell; 6.0 %, 23.5 %, since a GEMM's time is its tiles' compute plus its
// short side's overhead, a rank's expert GEMMs share the SMs' waves, and Transformer Engine's one launch per
// expert is the host's to issue (layout.expert_gemms), where the product of roll-off and tiles and one
// expert per wave had made more routed tokens finish sooner (6.0 %, 25.9 % with the first two alone: the
// MoE runs' held-out median 11.8 → 14.2 %); 6.3 %, 23.8 % since reduce-scatter and all-gather across domains
// are priced as NCCL runs them, rings only (src/graph/tuning.cc), not also by a two-level form NCCL has
// for all-reduce alone (DGX Cloud's p90 33.0 → 22.4 %, MosaicML 5.5 → 4.2 %); 7.0 %, 25.1 % since each refit is one set shared by the
// generations plus each generation's own from it, its GEMMs starting at the generation's cuBLAS figures
// (a source alone on Blackwell had been predicted with the generic constants: GB200 and B200 runs 20-45 %
// fast held out); 7.9 %, 31.5 % since an assumed recomputation that cannot fit is planned with the
// fastest that does (Megatron-Bridge's GPT-OSS runs on B200, whose recipe replays only layernorm and
// moe_act, are then predicted 40-100 % fast held out, where full recomputation had hidden it) and
// attn_half_seq is sourced (8.2 %, 30.7 % before; 8.3 %, 30.3 % (30.4 % before the eager frameworks' gradient accumulation pass),
// ranking 75 % of 20 pairs since the allocator's cache yields to
// allocations (a run whose cache alone tipped it over fits as published, no longer planned with assumed
// recomputation, and one Megatron-Bridge pair flips: 80 % before, median 8.4 %, p90 31.2 %); with the
// host's launch cost at its sourced 3 ms and shown in part (10.3 %, 31.5 % with it fitted and added in full; 11.1 %, 35.4 % before the H100 96GB
// preset took the middle of its source's peak range; 10.7 % before torchtitan's and Megatron-LM's
// gradients went fp32, doubling their DP bytes), with Megatron-Bridge's EP overlap on
// Hopper only, as its configs set it (10.8 %, 41.4 % with it everywhere), jobs placed in equal segments
// per scale-up domain and constants only one source's runs move left unfitted (10.9 %, 39.5 % with jobs
// filling NVL72 racks in order; 12.0 %, 42.2 % before attention told FlashAttention-2 from the fused
// Hopper kernels; 12.5 %, 53.9 %, 75 % before TP and EP overlap were layout settings, the all-to-all
// across domains left over each rank's own NIC and group-limited routing was modelled; docs/validation.md).
// The TP calls of the vocabulary-parallel ends, priced since, moved it 5.59 → 5.64 %, p90 17.11 → 17.21 %
// while no source's held-out median rose (Megatron-Bridge 9.0 → 8.7 %): the pooled figure's composition.
// The pipeline's sends as each framework's code runs them (scatter-gather and blocking sends) moved it
// 5.10 → 5.23 %, p90 16.34 → 16.31 %, one run fewer under 5 % and one fewer over 15 %, through the Ampere
// and Blackwell refits (Korthikanti 3.7 → 3.3 %, MosaicML 3.6 → 3.0 %, Megatron-Bridge 7.2 → 7.3 %).
// Every low-precision GEMM's input cast, the second MLP GEMM's and the experts' too, moved it 5.23 →
// 4.45 %, p90 16.31 → 16.43 %: 169 of 324 runs under 5 % (160 before), 43 over 15 % (44); the mean
// |error| 8.30 → 8.18 %, most of the median's move runs crossing 5 %.
TEST(Validation, LeaveOneSourceOutStaysWithinTheReachedBounds) {
    SHARDPLAN_REQUIRE_SHARED(kCalibration);
    const LeaveOneSourceOut l = leave_one_source_out(read_cases(read_json_file(kCalibration, "calibration"), "calibration").cases);
    EXPECT_LE(l.throughput.median_abs_error, 0.047);
    EXPECT_LE(l.throughput.p90_abs_error, 0.165);
    EXPECT_GE(l.ranking.share(), 0.85);
    // Held out, each job's first choice: the fastest measured in 6 of 11, within 5 % of it in 10; the
    // miss is Megatron-Bridge's Qwen3-30B on 16 H100s, whose PP 2 run (26.02) measured half its prediction.
    EXPECT_EQ(l.first_choice.jobs, 11);
    EXPECT_GE(l.first_choice.within_5, 10);
}
