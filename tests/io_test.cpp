// The boundary: every bad input names its field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.h"
#include "shardplan/calibrate.h"
#include "shardplan/comm.h"
#include "shardplan/constants.h"
#include "shardplan/error.h"
#include "shardplan/io.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/validate.h"

using namespace shardplan;

namespace {
json good_case() {
    return json::parse(R"({
      "id": "t", "model": "llama3-8b",
      "cluster": {"gpu": "h100-sxm", "gpus": 64, "gpus_per_node": 8, "scale_up_domain": 8},
      "layout": {"tp": 8, "cp": 1, "pp": 1, "dp": 8, "ep": 1, "etp": null, "vpp": 1, "micro_batch": 1,
                 "global_batch": 64, "seq_len": 8192, "zero": 1, "recompute": "none",
                 "sequence_parallel": true, "precision": "bf16"},
      "measured": {"tokens_per_s_per_gpu": 1000, "memory_gb_per_gpu": null}})");
}

std::string error_of(const json& j) {
    try {
        case_from_json(j);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST(Io, GoodCaseParses) {
    const Case c = case_from_json(good_case());
    EXPECT_EQ(c.model.name, "llama3-8b");
    EXPECT_EQ(c.cluster.gpus, 64);
    EXPECT_EQ(c.layout.tp, 8);
    EXPECT_EQ(c.layout.etp, 0);
    EXPECT_EQ(*c.measured.tokens_per_s_per_gpu, 1000);
    EXPECT_FALSE(c.measured.memory_gb_per_gpu);
}

TEST(Io, ErrorsNameTheField) {
    struct Bad { const char* pointer; json value; const char* field; };
    const Bad cases[] = {
        {"/layout/tp", "8", "layout.tp: expected an integer"},
        {"/layout/tp", 2.5, "layout.tp: expected an integer"},
        {"/layout/recompute", "some", "layout.recompute: expected one of none, selective, full"},
        {"/layout/precision", "fp9", "layout.precision: expected one of bf16"},
        {"/layout/zero", 4, "layout.zero"},
        {"/layout/sequence_parallel", "yes", "layout.sequence_parallel: expected true or false"},
        {"/layout/tpp", 2, "layout.tpp: expected a known field"},
        {"/layout/order", "tp-dp", "layout.order"},
        {"/model", "llama9", "model: expected a model preset"},
        {"/model", json::array(), "model: expected an object"},
        {"/cluster/gpu", "h900", "cluster.gpu: expected a GPU preset"},
        {"/cluster/gpus", -4, "cluster.gpus"},
        {"/cluster/gpus", nullptr, "cluster.gpus: expected a value; the field is missing"},
        {"/cluster/efficiency", json{{"gemm_16", 1.5}}, "cluster.efficiency.gemm_16"},
        {"/cluster/efficiency", json{{"overlap_tp", 0.5}}, "cluster.efficiency.overlap_tp: expected no TP overlap share here: TP overlap is the layout's tp_comm_overlap"},
        {"/cluster/efficiency", json{{"overlap_ep", 0.5}}, "cluster.efficiency.overlap_ep: expected no EP overlap share here"},
        {"/model", json{{"preset", "deepseek-v3"}, {"moe", {{"experts", 256}, {"top_k", 8}, {"expert_ffn_hidden", 2048}, {"router_groups", 7}}}}, "model.moe.router_groups: expected a divisor of experts (256), got 7"},
        {"/measured/tokens_per_s_per_gpu", "fast", "measured.tokens_per_s_per_gpu: expected a number"},
    };
    for (const Bad& b : cases) {
        json j = good_case();
        j[json::json_pointer(b.pointer)] = b.value;
        const std::string err = error_of(j);
        EXPECT_NE(err.find(b.field), std::string::npos) << b.pointer << " → \"" << err << "\"";
    }
}

// TP overlap comes from the framework (NeMo's and Megatron-Bridge's recipes turn it on), can be given,
// and is refused beside sequence_parallel false, whose collectives it would overlap.
TEST(Io, TensorParallelOverlapFollowsTheFrameworkAndNeedsSequenceParallelism) {
    json j = good_case();
    EXPECT_FALSE(case_from_json(j).layout.tp_comm_overlap);
    j["layout"]["framework"] = "NeMo (Megatron-Core) per recipe";
    EXPECT_TRUE(case_from_json(j).layout.tp_comm_overlap);
    j["layout"]["framework"] = "Megatron-Bridge / Megatron-Core (25.09 NeMo Container)";
    EXPECT_TRUE(case_from_json(j).layout.tp_comm_overlap);
    j["layout"]["tp_comm_overlap"] = false;
    EXPECT_FALSE(case_from_json(j).layout.tp_comm_overlap);
    j["layout"]["framework"] = "Megatron-LM";
    j["layout"]["tp_comm_overlap"] = true;
    EXPECT_TRUE(case_from_json(j).layout.tp_comm_overlap);
    j["layout"]["sequence_parallel"] = false;
    EXPECT_EQ(error_of(j), "layout.tp_comm_overlap: expected only with sequence_parallel true (it overlaps SP's "
                           "all-gathers and reduce-scatters)");
    // The recipes' default without sequence parallelism is off, as NeMo's callback turns it off: the
    // layout says what runs.
    j["layout"].erase("tp_comm_overlap");
    j["layout"]["framework"] = "NeMo (Megatron-Core) per recipe";
    EXPECT_FALSE(case_from_json(j).layout.tp_comm_overlap);
    EXPECT_EQ(to_json(case_from_json(j).layout)["tp_comm_overlap"], false);
}

// The gradient dtype follows the framework and the precision the case states (framework_defaults); a
// stated grad_dtype wins.
TEST(Io, GradientDtypeFollowsTheFrameworkAndThePrecision) {
    json j = good_case();
    EXPECT_EQ(case_from_json(j).layout.grad_dtype, GradDtype::bf16);
    j["layout"]["framework"] = "torchtitan";
    EXPECT_EQ(case_from_json(j).layout.grad_dtype, GradDtype::fp32);
    j["layout"]["grad_dtype"] = "bf16";
    EXPECT_EQ(case_from_json(j).layout.grad_dtype, GradDtype::bf16);
    j["layout"].erase("grad_dtype");
    j["layout"]["framework"] = "Megatron-LM";
    j["layout"]["precision"] = "fp16";
    EXPECT_EQ(case_from_json(j).layout.grad_dtype, GradDtype::bf16);
    j["layout"]["precision"] = "bf16";
    EXPECT_EQ(case_from_json(j).layout.grad_dtype, GradDtype::fp32);
}

// The MoE dispatcher is read, written back and refused by name.
TEST(Io, MoeDispatcherByName) {
    json j = good_case();
    EXPECT_EQ(case_from_json(j).layout.moe_dispatcher, Dispatcher::alltoall);
    j["layout"]["moe_dispatcher"] = "hybridep";
    const Case c = case_from_json(j);
    EXPECT_EQ(c.layout.moe_dispatcher, Dispatcher::hybridep);
    EXPECT_EQ(to_json(c.layout)["moe_dispatcher"], "hybridep");
    j["layout"]["moe_dispatcher"] = "nccl";
    EXPECT_EQ(error_of(j), "layout.moe_dispatcher: expected one of alltoall, deepep, hybridep, got \"nccl\"");
}

// EP overlap comes from Megatron-Bridge's recipes, can be given, and is refused at pp > 1 without the
// interleaved schedule (Megatron's prerequisite for --overlap-moe-expert-parallel-comm).
TEST(Io, ExpertParallelOverlapFollowsTheFrameworkAndNeedsInterleavingUnderPipelining) {
    json j = good_case();
    j["model"] = "mixtral-8x7b";
    j["layout"]["ep"] = 8;
    EXPECT_FALSE(case_from_json(j).layout.ep_comm_overlap);
    j["layout"]["framework"] = "Megatron-Bridge / Megatron-Core (26.04 NeMo Container)";
    EXPECT_TRUE(case_from_json(j).layout.ep_comm_overlap);
    j["layout"]["framework"] = "NeMo (Megatron-Core) per recipe";
    EXPECT_FALSE(case_from_json(j).layout.ep_comm_overlap);
    j["layout"]["ep_comm_overlap"] = true;
    EXPECT_TRUE(case_from_json(j).layout.ep_comm_overlap);
    j["layout"]["pp"] = 2;
    j["layout"]["dp"] = 4;
    EXPECT_EQ(error_of(j), "layout.ep_comm_overlap: expected only with the interleaved schedule (vpp > 1) when pp > 1: "
                           "Megatron's --overlap-moe-expert-parallel-comm pairs micro-batches across virtual stages");
    j["layout"]["vpp"] = 2;
    EXPECT_TRUE(case_from_json(j).layout.ep_comm_overlap);
    // Megatron-Bridge's default at pp > 1 without interleaving cannot run: off, not refused.
    j["layout"].erase("ep_comm_overlap");
    j["layout"]["vpp"] = 1;
    j["layout"]["framework"] = "Megatron-Bridge / Megatron-Core (26.04 NeMo Container)";
    EXPECT_FALSE(case_from_json(j).layout.ep_comm_overlap);
    j["layout"]["vpp"] = 2;
    EXPECT_TRUE(case_from_json(j).layout.ep_comm_overlap);
}

// Memory read on one rank: a stated memory_stage, or a note that names rank 0 as words.
TEST(Io, MemoryStageFromTheFieldOrARankZeroNote) {
    auto stage = [](const json& measured) {
        json j = good_case();
        j["measured"] = measured;
        return case_from_json(j).measured.memory_stage;
    };
    EXPECT_EQ(stage({{"memory_stage", 3}}), 3);
    EXPECT_EQ(stage({{"memory_note", "torch.cuda.max_memory_reserved() on global rank 0 only"}}), 0);
    EXPECT_EQ(stage({{"memory_note", "Rank 0."}}), 0);
    EXPECT_FALSE(stage({{"memory_note", "max across PP ranks"}}));
    EXPECT_FALSE(stage({{"memory_note", "ranks 0-7"}}));
    EXPECT_FALSE(stage({{"memory_note", "rank 0-7"}}));
    EXPECT_FALSE(stage({{"memory_note", "rank 01"}}));
    EXPECT_FALSE(stage({{"memory_note", "crank 0"}}));
    json j = good_case();
    j["measured"]["memory_stage"] = -1;
    EXPECT_NE(error_of(j).find("measured.memory_stage: expected a pipeline stage index >= 0"), std::string::npos) << error_of(j);
    j["measured"]["memory_stage"] = "first";
    EXPECT_NE(error_of(j).find("measured.memory_stage: expected an integer"), std::string::npos) << error_of(j);
}

// The network between nodes where the cluster's note names it: AWS's EFA takes its own per-step latency
// (kEfaScaleOutLatency_s, 22 µs against the presets' 6 µs), unless the GPU object states one.
TEST(Io, AnEfaNoteSetsTheScaleOutLatency) {
    auto latency_us = [](const json& cluster) { return cluster_from_json(cluster, "cluster").gpu.scale_out_latency_s * 1e6; };
    const json plain = {{"gpu", "h100-sxm"}, {"gpus", 16}};
    EXPECT_NEAR(latency_us(plain), 6.0, 1e-9);
    json efa = plain;
    efa["interconnect_note"] = "8x H100 per node, NVLink within the node; AWS EFA between nodes (playbook text)";
    EXPECT_NEAR(latency_us(efa), 22.0, 1e-9);
    json stated = efa;
    stated["gpu"] = {{"base", "h100-sxm"}, {"scale_out_latency_us", 9}};
    EXPECT_NEAR(latency_us(stated), 9.0, 1e-9);
    json preset = {{"preset", "dgx-h100"}, {"interconnect_note", "p5.48xlarge, EFAv2"}};
    EXPECT_NEAR(latency_us(preset), 22.0, 1e-9);
    json other = plain;
    other["interconnect_note"] = "intra-node: NVLink4 [system default; not stated in the row]; inter-node: 1600 Gbps RoCE";
    EXPECT_NEAR(latency_us(other), 6.0, 1e-9);
    EXPECT_TRUE(names_efa("efa"));
    EXPECT_TRUE(names_efa("AWS-EFA."));
    EXPECT_TRUE(names_efa("EFAv3 (3200 Gbps)"));
    EXPECT_FALSE(names_efa("system default"));
    EXPECT_FALSE(names_efa("EFA2"));
    EXPECT_FALSE(names_efa("EFAv"));
    EXPECT_FALSE(names_efa(""));
    // The preset of AWS's p5 nodes: the same GPUs as dgx-h100, EFA's latency, so a TP group across its
    // nodes pays more a step (Llama 3 70B at TP 16 over two nodes, DP 4: 22.9 against 19.2 s, each of its
    // 15-step rings 15 · 16 µs slower, a dozen a layer and micro-batch with the recomputation).
    EXPECT_NEAR(preset_cluster("aws-p5").gpu.scale_out_latency_s, kEfaScaleOutLatency_s, 1e-15);
    Layout l;
    l.tp = 16;
    l.dp = 4;
    l.global_batch = 64;
    l.seq_len = 8192;
    l.recompute = Recompute::full;
    ClusterSpec p5 = preset_cluster("aws-p5"), dgx = preset_cluster("dgx-h100");
    p5.gpus = dgx.gpus = 64;
    const Plan on_p5 = evaluate(preset_model("llama3-70b"), p5, l), on_dgx = evaluate(preset_model("llama3-70b"), dgx, l);
    ASSERT_FALSE(on_p5.rejection);
    EXPECT_GT(on_p5.time.step_s, on_dgx.time.step_s);
}

TEST(Io, AnUnstatedBatchIsPlannedAsTheCaseSays) {
    // Stated: nothing to say.
    EXPECT_TRUE(case_from_json(good_case()).unstated.empty());
    // micro_batch null: the layout's default, 1, said so.
    json j = good_case();
    j["layout"]["micro_batch"] = nullptr;
    Case c = case_from_json(j);
    EXPECT_EQ(c.layout.micro_batch, 1);
    ASSERT_EQ(c.unstated.size(), 1u);
    EXPECT_NE(c.unstated[0].find("layout.micro_batch: not stated; planned at 1"), std::string::npos) << c.unstated[0];
    // global_batch null with both throughput and step time measured: the step's tokens are
    // 1000 tokens/s/GPU × 64 GPUs × 8.2 s = 524,800, over 8,192 tokens 64.06 sequences, 1.001 × the 64
    // that whole micro-batches a DP rank (1 × 8) round to: 64.
    j = good_case();
    j["layout"]["global_batch"] = nullptr;
    j["measured"]["step_time_s"] = 8.2;
    c = case_from_json(j);
    EXPECT_EQ(c.layout.global_batch, 64);
    ASSERT_EQ(c.unstated.size(), 1u);
    EXPECT_NE(c.unstated[0].find("layout.global_batch: not stated; 64 sequences, from the measured"), std::string::npos)
        << c.unstated[0];
    // A step 5 % off whole micro-batches (8.6 s: 67.2 sequences) is not a batch: one micro-batch a DP rank, said so.
    j["measured"]["step_time_s"] = 8.6;
    c = case_from_json(j);
    EXPECT_EQ(global_batch(c.layout), 8);
    EXPECT_NE(c.unstated[0].find("planned as one micro-batch a DP rank (8)"), std::string::npos) << c.unstated[0];
    // No step time to read: the same.
    j["measured"].erase("step_time_s");
    c = case_from_json(j);
    EXPECT_EQ(global_batch(c.layout), 8);
    ASSERT_EQ(c.unstated.size(), 1u);
    // validate reports them per case and counts the cases.
    j["layout"]["micro_batch"] = nullptr;
    CaseList list;
    list.cases.push_back(case_from_json(j));
    list.cases.push_back(case_from_json(good_case()));
    const json out = validation_to_json(validate_cases(list));
    EXPECT_EQ(out["cases"][0]["unstated"].size(), 2u);
    EXPECT_TRUE(out["cases"][1]["unstated"].empty());
    EXPECT_EQ(out["summary"]["unstated"], 1);
    // A measured memory without its kind is compared with the device figure (docs/model.md §2.5), said so;
    // with its kind, nothing to say.
    j = good_case();
    j["measured"]["memory_gb_per_gpu"] = 60.0;
    j["measured"]["memory_kind"] = nullptr;
    c = case_from_json(j);
    ASSERT_EQ(c.unstated.size(), 1u);
    EXPECT_NE(c.unstated[0].find("measured.memory_kind: not stated; compared with the device figure"), std::string::npos)
        << c.unstated[0];
    j["measured"]["memory_kind"] = "reserved";
    EXPECT_TRUE(case_from_json(j).unstated.empty());
}
TEST(Io, ALongStringIsQuotedWholeCharactersOnly) {
    // Found by fuzz_case: a string where an object belongs is quoted in the message, cut to 40 bytes;
    // the 40th byte fell inside a two-byte character (U+0321), and quoting half of it threw.
    const std::string s = "inOOOOOOOOOOOOOOOO64_fx6\xcc\xa1OOOOOOO64_fx6\xcc\xa1" "fs1p";
    const std::string err = error_of(json(s));
    EXPECT_NE(err.find("expected an object, got \"inOOOOOOOOOOOOOOOO64_fx6\xcc\xa1OOOOOOO64_fx6...\""), std::string::npos)
        << err;
}

TEST(Io, MissingSectionsAndModelFields) {
    json j = good_case();
    j.erase("layout");
    EXPECT_NE(error_of(j).find("layout: expected a value"), std::string::npos);
    j = good_case();
    j["model"] = json::parse(R"({"layers": 2, "hidden": 64, "heads": 4, "vocab": 100})");
    EXPECT_NE(error_of(j).find("model.ffn_hidden: expected a value"), std::string::npos);
    j["model"]["ffn_hidden"] = 256;
    j["model"]["heads"] = 0;
    EXPECT_NE(error_of(j).find("model.heads"), std::string::npos);
    j = good_case();
    j["model"] = json::parse(R"({"preset": "llama3-8b", "layers": 16})");  // preset + override
    EXPECT_EQ(case_from_json(j).model.layers, 16);
}

TEST(Io, ResolvedInputsRoundTrip) {
    const Case c = case_from_json(good_case());
    const json model = to_json(c.model), cluster = to_json(c.cluster), layout = to_json(c.layout);
    json again = {{"model", model}, {"cluster", cluster}, {"layout", layout}};
    again["model"].erase("params_total");
    again["model"].erase("params_active");
    const Case d = case_from_json(again);
    const Plan a = evaluate(c.model, c.cluster, c.layout), b = evaluate(d.model, d.cluster, d.layout);
    EXPECT_DOUBLE_EQ(a.time.step_s, b.time.step_s);
    EXPECT_DOUBLE_EQ(a.memory.total_bytes(), b.memory.total_bytes());
}

TEST(Io, EveryPublishedCaseParses) {
    const std::string file = shardplan::testing::shared_path("validation/calibration.json");
    SHARDPLAN_REQUIRE_SHARED(file);
    const json all = read_json_file(file, "calibration");
    ASSERT_TRUE(all.is_array());
    for (size_t i = 0; i < all.size(); ++i) EXPECT_NO_THROW(case_from_json(all[i], "[" + std::to_string(i) + "]")) << i;
}

TEST(Io, FilesThatAreNotJson) {
    const auto dir = std::filesystem::temp_directory_path();
    const auto empty = dir / "shardplan_empty.json", broken = dir / "shardplan_broken.json";
    { std::ofstream(empty) << "  \n"; }
    { std::ofstream(broken) << "{\"model\": "; }
    EXPECT_THROW(read_json_file(empty.string(), "--case"), ConfigError);
    try {
        read_json_file(broken.string(), "--case");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("--case: expected valid JSON"), std::string::npos);
    }
    EXPECT_THROW(read_json_file((dir / "does-not-exist.json").string(), "--case"), ConfigError);
}

// One table of constants: the JSON reader and writer cover every entry, validation uses its ranges,
// calibrate fits exactly the fitted ones, and docs/model.md shows each with its ranges and source.
TEST(Constants, OneTableDrivesReaderWriterFitAndDocs) {
    const Efficiency base = preset_gpu("h100-sxm").eff;
    size_t fitted = 0;
    for (const Constant& k : efficiency_constants()) {
        SCOPED_TRACE(k.key);
        ASSERT_EQ(find_constant(k.key), &k);
        // A value in the middle of its fit range goes through JSON and back unchanged.
        const double mid = 0.5 * (k.fit_lo + k.fit_hi);
        const Efficiency e = efficiency_from_json(json{{k.key, mid}}, base, "efficiency");
        EXPECT_NEAR(k.to_json(e), mid, 1e-9 * std::max(1.0, mid));
        EXPECT_NEAR(to_json(e)[k.key].get<double>(), mid, 1e-9 * std::max(1.0, mid));
        // Just past its valid range is refused, naming the key.
        const double bad = k.valid_hi + std::max(1.0, k.valid_hi);
        try {
            Efficiency x = base;
            k.from_json(x, bad);
            validate_efficiency(x, "cluster");
            ADD_FAILURE() << "accepted " << bad;
        } catch (const ConfigError& err) {
            EXPECT_EQ(err.field(), std::string("cluster.efficiency.") + k.key);
        }
        if (k.fitted) ++fitted;
        EXPECT_LE(k.valid_lo, k.fit_lo);
        EXPECT_GE(k.valid_hi, k.fit_hi);
    }
    ASSERT_EQ(fit_params().size(), fitted);
    for (const FitParam& f : fit_params()) EXPECT_TRUE(find_constant(f.name)) << f.name;
    // docs/model.md's table is the code's: one row per constant, with its source.
    std::ifstream doc(std::string(SHARDPLAN_SOURCE_DIR) + "/docs/model.md");
    std::stringstream ss;
    ss << doc.rdbuf();
    const std::string text = ss.str();
    for (const Constant& k : efficiency_constants()) {
        const std::string row = std::string("| `") + k.key + "` | " + k.unit + " |";
        const size_t at = text.find(row);
        ASSERT_NE(at, std::string::npos) << "docs/model.md has no row for " << k.key;
        const std::string line = text.substr(at, text.find('\n', at) - at);
        EXPECT_NE(line.find(k.source), std::string::npos) << line;
    }
    // ... and no row for a constant the code no longer has.
    const size_t begin = text.find("<!-- constants-begin -->"), end = text.find("<!-- constants-end -->");
    ASSERT_NE(begin, std::string::npos);
    ASSERT_NE(end, std::string::npos);
    size_t rows = 0;
    for (size_t at = text.find("\n| `", begin); at != std::string::npos && at < end; at = text.find("\n| `", at + 1)) ++rows;
    EXPECT_EQ(rows, efficiency_constants().size()) << "docs/model.md lists constants the code does not have";
}

// dp_comm_overlap: the framework's default where the layout does not say (off for Megatron-LM and
// DeepSpeed, on otherwise), what it says where it does, and a one-line error for a value not a boolean.
TEST(Io, DpCommOverlapFollowsTheFrameworkUnlessStated) {
    EXPECT_TRUE(layout_from_json(json::object()).dp_comm_overlap);
    EXPECT_FALSE(layout_from_json(json{{"framework", "Megatron-LM"}}).dp_comm_overlap);
    EXPECT_TRUE(layout_from_json(json{{"framework", "Megatron-LM"}, {"dp_comm_overlap", true}}).dp_comm_overlap);
    EXPECT_FALSE(layout_from_json(json{{"framework", "nanotron"}, {"dp_comm_overlap", false}}).dp_comm_overlap);
    Layout l;
    l.dp_comm_overlap = false;
    EXPECT_FALSE(layout_from_json(to_json(l)).dp_comm_overlap);
    try {
        layout_from_json(json{{"dp_comm_overlap", "yes"}});
        ADD_FAILURE() << "a string accepted";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("layout.dp_comm_overlap"), std::string::npos) << e.what();
    }
}

// layout.zero3_comm: JSON keeps it both ways, a case's framework brings its default, and a ZeRO-3 plan
// under DeepSpeed 2021's per-tensor engine moves the same DP bytes at no more than 21 GB/s a GPU — every
// call of its term: 3 a micro-batch, 2 · 175B · 2 B gathered and 2 B a gradient reduce-scattered.
TEST(Io, Zero3CommRoundTripsAndPricesTheDpTerm) {
    Layout l;
    l.dp = 64;
    l.zero = 3;
    l.global_batch = 64;
    l.seq_len = 2048;
    l.precision = Precision::fp16;
    for (Zero3Comm z : {Zero3Comm::bucketed, Zero3Comm::per_tensor}) {
        l.zero3_comm = z;
        EXPECT_EQ(layout_from_json(to_json(l)).zero3_comm, z);
    }
    EXPECT_EQ(layout_from_json(json{{"framework", "Megatron-LM (2021)"}}).zero3_comm, Zero3Comm::per_tensor);
    EXPECT_EQ(layout_from_json(json{{"framework", "Megatron-LM (2021)"}, {"zero3_comm", "bucketed"}}).zero3_comm,
              Zero3Comm::bucketed);
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 64;
    const ModelSpec m = preset_model("gpt3-175b");
    auto dp_term = [&](Zero3Comm z) {
        Layout x = l;
        x.zero3_comm = z;
        const Plan p = evaluate(m, c, x);
        for (const CommTerm& t : p.comm)
            if (t.axis == Axis::dp) return std::make_pair(t, p.time.step_s);
        return std::make_pair(CommTerm{}, 0.0);
    };
    const auto [bucketed, bucketed_step] = dp_term(Zero3Comm::bucketed);
    const auto [per_tensor, per_tensor_step] = dp_term(Zero3Comm::per_tensor);
    EXPECT_EQ(per_tensor.calls_per_step, 3);
    EXPECT_DOUBLE_EQ(per_tensor.bytes_per_step, bucketed.bytes_per_step);
    EXPECT_GE(per_tensor.time_s, per_tensor.bytes_per_step / kPerTensorZero3_Bps * (1 - 1e-12));
    EXPECT_GT(per_tensor.time_s, 2.0 * bucketed.time_s);  // 8 NICs of 25 GB/s a GPU's ring, not 21 GB/s
    EXPECT_GT(per_tensor_step, bucketed_step);
}
