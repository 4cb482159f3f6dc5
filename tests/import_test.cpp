// Launch configurations both ways: every argument and key an export writes is one its framework defines,
// with a value of the type it defines (the tables of import_keys.cpp, from Megatron-LM's arguments.py,
// torchtitan's job_config.py and DeepSpeed's config keys); export → import gives back the layout; the
// findings of issue 16 each hold.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <sstream>

#include "shardplan/error.h"
#include "shardplan/export.h"
#include "shardplan/import.h"
#include "shardplan/memory.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/schedule.h"
#include "shardplan/toml.h"
#include "plan_helpers.h"

using namespace shardplan;

namespace {

struct Job {
    const char* model;
    const char* cluster;
    int64_t gpus, tp, cp, pp, ep, etp, vpp, micro, global, seq;
    int zero;
    Recompute recompute;
    Schedule schedule;
    const char* order;
};

Layout layout_of(const Job& j) {
    Layout l;
    l.recompute_modules = 0;
    l.tp = j.tp; l.cp = j.cp; l.pp = j.pp; l.ep = j.ep; l.etp = j.etp; l.vpp = j.vpp;
    l.dp = j.gpus / (j.tp * j.cp * j.pp);
    l.micro_batch = j.micro; l.global_batch = j.global; l.seq_len = j.seq;
    l.zero = j.zero; l.recompute = j.recompute; l.schedule = j.schedule;
    l.order = *parse_order(j.order);
    l.tp_comm_overlap = j.tp > 1;  // --tp-comm-overlap, torchtitan's async TP
    return l;
}

ClusterSpec cluster_of(const Job& j) {
    ClusterSpec c = preset_cluster(j.cluster);
    c.gpus = j.gpus;
    return c;
}

// A layout as a framework runs it (its defaults, what an export is planned with), with TP overlap on where
// it can ask for it: torchtitan's async TP under torch.compile, its "selective" its op-level set; DeepSpeed
// has no TP overlap to ask for.
Layout layout_for(Framework f, const Job& j) {
    Layout l = shardplan::testing::run_by(f, preset_model(j.model), cluster_of(j), layout_of(j));
    l.tp_comm_overlap = j.tp > 1 && f != Framework::deepspeed;
    if (f == Framework::torchtitan) {
        l.kernels = Kernels::fused;
        if (l.recompute == Recompute::selective) l.recompute_modules = op_level_selective_modules();
    }
    if (f == Framework::deepspeed) l.sequence_parallel = false;  // AutoTP keeps the norms' activations whole
    return l;
}

// Layouts each framework can run: dense and MoE, PP with and without interleaving, uneven stages, CP.
const Job kMegatronJobs[] = {
    {"llama3-70b", "dgx-h100", 512, 8, 1, 4, 1, 0, 5, 1, 512, 8192, 1, Recompute::selective, Schedule::interleaved, "tp-cp-ep-dp-pp"},
    {"llama3-405b", "dgx-h100", 2048, 8, 1, 16, 1, 0, 1, 1, 512, 8192, 1, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-pp-dp"},
    {"llama3-8b", "dgx-h100", 64, 2, 2, 1, 1, 0, 1, 2, 256, 16384, 0, Recompute::none, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"mixtral-8x7b", "dgx-h100", 128, 2, 1, 4, 8, 1, 1, 1, 256, 4096, 1, Recompute::selective, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-405b", "dgx-h100", 1024, 8, 1, 8, 1, 0, 1, 1, 256, 8192, 3, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
};
const Job kTorchtitanJobs[] = {
    {"llama3-70b", "dgx-h100", 512, 8, 1, 4, 1, 0, 5, 1, 512, 8192, 3, Recompute::full, Schedule::interleaved, "tp-cp-ep-dp-pp"},
    {"llama3-70b", "dgx-h100", 480, 8, 1, 3, 1, 0, 1, 1, 480, 8192, 3, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-8b", "dgx-h100", 64, 2, 2, 1, 1, 0, 1, 2, 256, 16384, 3, Recompute::none, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-8b", "dgx-h100", 16, 1, 1, 1, 1, 0, 1, 4, 256, 4096, 0, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-8b", "dgx-h100", 32, 4, 1, 2, 1, 0, 1, 1, 64, 8192, 3, Recompute::selective, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-405b", "dgx-h100", 2048, 8, 1, 8, 1, 0, 1, 2, 1024, 8192, 3, Recompute::full, Schedule::gpipe, "tp-cp-ep-dp-pp"},
};
const Job kDeepspeedJobs[] = {
    {"llama3-8b", "dgx-h100", 64, 2, 1, 1, 1, 0, 1, 2, 256, 4096, 2, Recompute::none, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-8b", "dgx-a100", 128, 1, 1, 1, 1, 0, 1, 1, 512, 4096, 3, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
    {"llama3-70b", "dgx-h100", 256, 8, 1, 1, 1, 0, 1, 1, 256, 8192, 1, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"},
};

// The exported Megatron arguments as (name, values) pairs, in order.
std::vector<std::pair<std::string, std::vector<std::string>>> megatron_args(const std::string& text) {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) {
        if (w == "\\") continue;
        if (w.starts_with("--")) out.push_back({w, {}});
        else if (!out.empty()) out.back().second.push_back(w);
    }
    return out;
}

bool in_choices(const LaunchKey& k, const std::string& v) {
    if (k.choices.empty()) return true;
    std::string all = "|" + std::string(k.choices) + "|";
    return all.find("|" + v + "|") != std::string::npos;
}

bool is_integer(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

void expect_typed(const LaunchKey& k, const json& v, const std::string& where) {
    switch (k.kind) {
        case ArgKind::flag: EXPECT_TRUE(v.is_boolean()) << where; break;
        case ArgKind::integer: EXPECT_TRUE(v.is_number_integer()) << where; break;
        case ArgKind::number: EXPECT_TRUE(v.is_number()) << where; break;
        case ArgKind::text: EXPECT_TRUE(v.is_string() && in_choices(k, v.get<std::string>())) << where << " " << v; break;
        case ArgKind::list: EXPECT_TRUE(v.is_array()) << where; break;
    }
}

void expect_keys_defined(Framework f, const json& j, const std::string& prefix) {
    for (const auto& [key, value] : j.items()) {
        const std::string name = prefix.empty() ? key : prefix + "." + key;
        if (value.is_object() && !find_launch_key(f, name)) {
            expect_keys_defined(f, value, name);
            continue;
        }
        const LaunchKey* k = find_launch_key(f, name);
        ASSERT_NE(k, nullptr) << enum_name(f) << " does not define " << name;
        expect_typed(*k, value, name);
    }
}

Case round_trip(Framework f, const Job& j) {
    const ModelSpec m = preset_model(j.model);
    const ClusterSpec c = cluster_of(j);
    const Layout l = layout_for(f, j);
    const Export e = export_config(m, c, l, f);
    EXPECT_FALSE(e.refusal) << to_string(l) << ": " << e.refusal.value_or("");
    ImportContext ctx;
    ctx.cluster = preset_cluster(j.cluster);
    if (f != Framework::torchtitan) ctx.model = m;  // torchtitan's [model] names the Llama 3 flavours itself
    if (f == Framework::megatron) ctx.gpus = j.gpus;
    if (f == Framework::deepspeed) ctx.seq_len = j.seq;
    if (f == Framework::torchtitan) ctx.gpus = j.gpus;
    return import_launch(f, e.text, ctx, "exported").c;
}

void expect_same_layout(Framework f, const Case& got, const Job& j) {
    const Layout want = layout_for(f, j);
    const Layout& l = got.layout;
    const std::string name = to_string(want);
    EXPECT_EQ(got.model.name, j.model) << name;
    EXPECT_EQ(got.cluster.gpus, j.gpus) << name;
    EXPECT_EQ(l.tp, want.tp) << name;
    EXPECT_EQ(l.cp, want.cp) << name;
    EXPECT_EQ(l.pp, want.pp) << name;
    EXPECT_EQ(l.dp, want.dp) << name;
    EXPECT_EQ(l.ep, want.ep) << name;
    EXPECT_EQ(effective_etp(l), effective_etp(want)) << name;
    EXPECT_EQ(l.vpp, want.vpp) << name;
    EXPECT_EQ(l.micro_batch, want.micro_batch) << name;
    EXPECT_EQ(global_batch(l), global_batch(want)) << name;
    EXPECT_EQ(l.seq_len, want.seq_len) << name;
    EXPECT_EQ(l.zero, want.zero) << name;
    EXPECT_EQ(l.recompute, want.recompute) << name;
    EXPECT_EQ(recompute_modules_string(l), recompute_modules_string(want)) << name;
    EXPECT_EQ(l.schedule, want.schedule) << name;
    EXPECT_EQ(l.kernels, want.kernels) << name;
    EXPECT_EQ(l.tp_comm_overlap, want.tp_comm_overlap) << name;
    EXPECT_EQ(overlaps_dp(l), overlaps_dp(want)) << name;
    EXPECT_EQ(l.sequence_parallel, want.sequence_parallel) << name;
    EXPECT_EQ(l.moe_dispatcher, want.moe_dispatcher) << name;
}

}  // namespace

TEST(LaunchKeys, TablesAreSortedAndUnique) {
    for (Framework f : {Framework::megatron, Framework::torchtitan, Framework::deepspeed}) {
        const auto keys = launch_keys(f);
        ASSERT_FALSE(keys.empty());
        for (size_t i = 1; i < keys.size(); ++i) EXPECT_LT(keys[i - 1].name, keys[i].name) << enum_name(f);
        for (const LaunchKey& k : keys) EXPECT_EQ(find_launch_key(f, k.name), &k);
    }
    EXPECT_EQ(find_launch_key(Framework::megatron, "--no-such-flag"), nullptr);
}

TEST(LaunchKeys, EveryMegatronArgumentTheExportWritesIsDefinedWithItsType) {
    for (const Job& j : kMegatronJobs) {
        const Export e = export_config(preset_model(j.model), cluster_of(j), layout_for(Framework::megatron, j), Framework::megatron);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        for (const auto& [name, values] : megatron_args(e.text)) {
            const LaunchKey* k = find_launch_key(Framework::megatron, name);
            ASSERT_NE(k, nullptr) << "Megatron-LM defines no " << name;
            switch (k->kind) {
                case ArgKind::flag: EXPECT_TRUE(values.empty()) << name; break;
                case ArgKind::integer: ASSERT_EQ(values.size(), 1u) << name; EXPECT_TRUE(is_integer(values[0])) << name; break;
                case ArgKind::number: ASSERT_EQ(values.size(), 1u) << name; EXPECT_NO_THROW((void)std::stod(values[0])) << name; break;
                case ArgKind::text: ASSERT_EQ(values.size(), 1u) << name; EXPECT_TRUE(in_choices(*k, values[0])) << name << " " << values[0]; break;
                case ArgKind::list:
                    EXPECT_FALSE(values.empty()) << name;
                    for (const std::string& v : values) EXPECT_TRUE(in_choices(*k, v)) << name << " " << v;
                    break;
            }
        }
    }
}

TEST(LaunchKeys, EveryTorchtitanAndDeepSpeedKeyTheExportWritesIsDefinedWithItsType) {
    for (const Job& j : kTorchtitanJobs) {
        const Export e = export_config(preset_model(j.model), cluster_of(j), layout_for(Framework::torchtitan, j), Framework::torchtitan);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        expect_keys_defined(Framework::torchtitan, parse_toml(e.text, "export"), "");
    }
    for (const Job& j : kDeepspeedJobs) {
        const Export e = export_config(preset_model(j.model), cluster_of(j), layout_for(Framework::deepspeed, j), Framework::deepspeed);
        ASSERT_FALSE(e.refusal) << *e.refusal;
        expect_keys_defined(Framework::deepspeed, json::parse(e.text), "");
    }
}

TEST(Import, ExportThenImportGivesBackTheLayout) {
    for (const Job& j : kMegatronJobs) expect_same_layout(Framework::megatron, round_trip(Framework::megatron, j), j);
    for (const Job& j : kTorchtitanJobs) expect_same_layout(Framework::torchtitan, round_trip(Framework::torchtitan, j), j);
    for (const Job& j : kDeepspeedJobs) expect_same_layout(Framework::deepspeed, round_trip(Framework::deepspeed, j), j);
}

TEST(Export, TorchtitanSelectiveIsItsOpLevelSet) {
    // torchtitan's selective_ac_option "op" replays the norms, the activations and every second GEMM; a
    // plan that replays only Megatron's default core_attn is not what it would run.
    Job j = kTorchtitanJobs[4];
    const Export e = export_config(preset_model(j.model), cluster_of(j), layout_of(j), Framework::torchtitan);
    ASSERT_TRUE(e.refusal);
    EXPECT_NE(e.refusal->find("--recompute-modules layernorm,mlp_act,every_second_gemm"), std::string::npos) << *e.refusal;
    // and Megatron has no module for it.
    Layout op = layout_of(j);
    op.recompute = Recompute::selective;
    op.recompute_modules = op_level_selective_modules();
    const Export mg = export_config(preset_model(j.model), cluster_of(j), op, Framework::megatron);
    ASSERT_TRUE(mg.refusal);
    EXPECT_NE(mg.refusal->find("no recompute module"), std::string::npos) << *mg.refusal;
}

TEST(Import, MegatronLaunchScriptWithVariablesAndTorchrun) {
    const std::string script = R"(#!/bin/bash
# a launch script as people write them
GPUS_PER_NODE=8
NNODES=4
TP=4; PP=2
MODEL_ARGS=(--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32
            --group-query-attention --num-query-groups 8 --swiglu --normalization RMSNorm
            --disable-bias-linear --untie-embeddings-and-output-weights --vocab-size 128256)
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes ${NNODES} pretrain_gpt.py \
    "${MODEL_ARGS[@]}" \
    --tensor-model-parallel-size $TP --pipeline-model-parallel-size=$PP \
    --sequence-parallel --use-distributed-optimizer \
    --micro-batch-size 2 --global-batch-size 128 --seq-length 8192 \
    --recompute-granularity selective --recompute-modules core_attn mlp \
    --lr 3e-4 --data-path /data/x --bf16   # trailing comment
)";
    ImportContext ctx;
    ctx.cluster = preset_cluster("dgx-h100");
    const Imported im = import_launch(Framework::megatron, script, ctx, "run.sh");
    const Layout& l = im.c.layout;
    EXPECT_EQ(im.c.model.name, "llama3-8b");  // the architecture of a preset is that preset
    EXPECT_EQ(im.c.cluster.gpus, 32);         // torchrun: 8 per node × 4 nodes
    EXPECT_EQ(l.tp, 4);
    EXPECT_EQ(l.pp, 2);
    EXPECT_EQ(l.dp, 4);
    EXPECT_EQ(l.micro_batch, 2);
    EXPECT_EQ(micro_batches(l), 16);  // 128 / (2 · 4)
    EXPECT_TRUE(recomputes(l, RecomputeModule::core_attn));
    EXPECT_TRUE(recomputes(l, RecomputeModule::mlp));
    EXPECT_TRUE(l.dropout);  // Megatron's default dropout 0.1, said in the notes
    EXPECT_EQ(l.grad_dtype, GradDtype::fp32);
    EXPECT_GE(im.ignored, 2);  // --lr, --data-path
    EXPECT_FALSE(im.notes.empty());
}

TEST(Import, BadInputNamesTheArgumentOrKey) {
    ImportContext ctx;
    ctx.cluster = preset_cluster("dgx-h100");
    ctx.model = preset_model("llama3-8b");
    ctx.gpus = 8;
    auto fails_with = [&](Framework f, const std::string& text, const std::string& field) {
        try {
            (void)import_launch(f, text, ctx, "F");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.field(), field) << e.what();
        }
    };
    fails_with(Framework::megatron, "--tensor-model-parallel-size four --micro-batch-size 1 --seq-length 4096 --bf16",
               "F --tensor-model-parallel-size");
    fails_with(Framework::megatron, "--tensor-model-parallel-size $TP --micro-batch-size 1 --seq-length 4096 --bf16",
               "F --tensor-model-parallel-size");
    fails_with(Framework::megatron, "--micro-batch-size 1 --seq-length 4096", "F --bf16");  // fp32 is not modelled
    fails_with(Framework::megatron,
               "--recompute-granularity full --recompute-method block --recompute-num-layers 0 --micro-batch-size 1 "
               "--seq-length 4096 --bf16",
               "F --recompute-num-layers");
    fails_with(Framework::megatron, "--recompute-granularity partial --micro-batch-size 1 --seq-length 4096 --bf16",
               "F --recompute-granularity");
    fails_with(Framework::megatron, "--tensor-model-parallel-size 3 --micro-batch-size 1 --seq-length 4096 --bf16",
               "F (data-parallel degree)");  // 8 GPUs
    fails_with(Framework::megatron, "--micro-batch-size 3 --global-batch-size 8 --seq-length 4096 --bf16",
               "F (layout.global_batch)");
    fails_with(Framework::torchtitan, "[parallelism]\ntensor_parallel_degree = \"2\"\n", "F parallelism.tensor_parallel_degree");
    fails_with(Framework::torchtitan, "[parallelism\n", "F");
    fails_with(Framework::torchtitan, "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"2\"\n",
               "F activation_checkpoint.selective_ac_option");
    fails_with(Framework::torchtitan, "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\n",
               "F parallelism.data_parallel_shard_degree");
    // torchtitan's shard degree defaults to the rest: with replicas that is DDP when nothing is left, else HSDP.
    fails_with(Framework::torchtitan,
               "[activation_checkpoint]\nmode = \"none\"\n[parallelism]\ndata_parallel_replicate_degree = 2\n",
               "F parallelism.data_parallel_shard_degree");  // 8 GPUs: 2 replicas of 4 shards
    {
        ImportContext ddp = ctx;
        const Imported im = import_launch(Framework::torchtitan,
                                          "[training]\nlocal_batch_size = 1\n[activation_checkpoint]\nmode = \"none\"\n"
                                          "[parallelism]\ndata_parallel_replicate_degree = 8\n",
                                          ddp, "F");
        EXPECT_EQ(im.c.layout.zero, 0);
        EXPECT_EQ(im.c.layout.dp, 8);
    }
    // With context parallelism torchtitan always shards over data_parallel_shard × cp
    // (ParallelDims.fsdp_enabled: dp_shard or cp enabled): FSDP even at a shard degree of 1, and HSDP
    // beside replicas, which is not modelled.
    {
        const Imported im = import_launch(Framework::torchtitan,
                                          "[training]\nlocal_batch_size = 1\n[activation_checkpoint]\nmode = \"none\"\n"
                                          "[parallelism]\ndata_parallel_shard_degree = 1\ncontext_parallel_degree = 2\n"
                                          "tensor_parallel_degree = 4\n",
                                          ctx, "F");
        EXPECT_EQ(im.c.layout.zero, 3);
        EXPECT_EQ(im.c.layout.dp, 1);
        EXPECT_EQ(im.c.layout.cp, 2);
    }
    fails_with(Framework::torchtitan,
               "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 1\ncontext_parallel_degree = 2\n",
               "F parallelism.data_parallel_replicate_degree");
    fails_with(Framework::deepspeed, R"({"train_batch_size": 8, "bf16": {"enabled": true}})", "--seq-len");
    ctx.seq_len = 4096;
    fails_with(Framework::deepspeed, R"({"train_batch_size": 8, "zero_optimization": {"stage": 4}, "bf16": {"enabled": true}})",
               "F zero_optimization.stage");
    fails_with(Framework::deepspeed, "{", "F");
}

// ---- The findings of issue 16 ------------------------------------------------------------------------------

TEST(Export, TorchtitanLocalBatchIsOnePassPerRank) {
    // Llama 3 70B on 512 H100, micro-batch 1, global 512: without PP local_batch_size is the micro-batch and
    // global_batch_size makes the accumulation; with PP it is every micro-batch of the step (b·m = 1·32).
    Job flat{"llama3-8b", "dgx-h100", 64, 1, 1, 1, 1, 0, 1, 1, 512, 8192, 3, Recompute::full, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"};
    json t = parse_toml(export_config(preset_model(flat.model), cluster_of(flat), layout_for(Framework::torchtitan, flat), Framework::torchtitan).text, "t");
    EXPECT_EQ(t["training"]["local_batch_size"], 1);
    EXPECT_EQ(t["training"]["global_batch_size"], 512);
    const Job& piped = kTorchtitanJobs[0];
    t = parse_toml(export_config(preset_model(piped.model), cluster_of(piped), layout_for(Framework::torchtitan, piped), Framework::torchtitan).text, "t");
    EXPECT_EQ(t["training"]["local_batch_size"], 32);  // 512 / dp 16
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_microbatch_size"], 1);
}

TEST(Export, TorchtitanInterleavedStagesDivideByPp) {
    // 80 layers, pp 4, vpp 5: 4 layers per virtual stage and no layers taken off the first and last, so
    // torchtitan makes ceil((80 + 0 + 0) / 4) = 20 stages = 5 per rank (with its defaults of 1: 21).
    const Job& j = kTorchtitanJobs[0];
    const json t = parse_toml(export_config(preset_model(j.model), cluster_of(j), layout_for(Framework::torchtitan, j), Framework::torchtitan).text, "t");
    const json& p = t["parallelism"];
    const int64_t per = p["pipeline_parallel_layers_per_stage"];
    const int64_t stages = (80 + p["pipeline_parallel_first_stage_less_layers"].get<int64_t>() +
                            p["pipeline_parallel_last_stage_less_layers"].get<int64_t>() + per - 1) / per;
    EXPECT_EQ(stages, 20);
    EXPECT_EQ(stages % 4, 0);
}

TEST(Export, ZeroStageRefusalsSayWhy) {
    const ModelSpec m = preset_model("llama3-8b");
    Job zero3tp{"llama3-8b", "dgx-h100", 64, 2, 1, 1, 1, 0, 1, 2, 256, 4096, 3, Recompute::none, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"};
    const Export e = export_config(m, cluster_of(zero3tp), layout_of(zero3tp), Framework::deepspeed);
    ASSERT_TRUE(e.refusal);
    EXPECT_NE(e.refusal->find("AutoTP"), std::string::npos) << *e.refusal;
    Job zero2{"llama3-8b", "dgx-h100", 64, 2, 1, 1, 1, 0, 1, 2, 256, 4096, 2, Recompute::none, Schedule::one_f_one_b, "tp-cp-ep-dp-pp"};
    const Export z = export_config(m, cluster_of(zero2), layout_of(zero2), Framework::megatron);
    ASSERT_TRUE(z.refusal);
    EXPECT_NE(z.refusal->find("ZeRO-2"), std::string::npos) << *z.refusal;
}

TEST(Export, LlamaOrderWithoutEpIsMegatronsTpPpDpMapping) {
    // Llama 3's nesting tp-cp-pp-dp: ep goes just outside cp, which is Megatron's tp-cp-ep-pp-dp.
    EXPECT_EQ(*parse_order("tp-cp-pp-dp"), *parse_order("tp-cp-ep-pp-dp"));
    Job j{"llama3-70b", "dgx-h100", 512, 8, 1, 4, 1, 0, 1, 1, 512, 8192, 1, Recompute::none, Schedule::one_f_one_b, "tp-cp-pp-dp"};
    const Export e = export_config(preset_model(j.model), cluster_of(j), layout_for(Framework::megatron, j), Framework::megatron);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    EXPECT_NE(e.text.find("--use-tp-pp-dp-mapping"), std::string::npos);
    // A dense model's ep has no ranks: its place in the order does not matter to Megatron either.
    j.order = "tp-cp-pp-ep-dp";
    EXPECT_FALSE(export_config(preset_model(j.model), cluster_of(j), layout_for(Framework::megatron, j), Framework::megatron).refusal);
}

TEST(Precision, RulesPerGpuGeneration) {
    const ModelSpec m = preset_model("llama3-8b");
    auto problem = [&](const char* cluster, Precision p) {
        ClusterSpec c = preset_cluster(cluster);
        c.gpus = 8;
        Layout l;
        l.dp = 8;
        l.global_batch = 8;
        l.precision = p;
        const auto bad = check_layout(m, c, l);
        return bad ? bad->code : std::string();
    };
    EXPECT_EQ(problem("dgx-a100", Precision::fp8), "precision_unsupported");  // Transformer Engine refuses FP8 on A100
    EXPECT_EQ(problem("dgx-h100", Precision::fp8), "");
    EXPECT_EQ(problem("dgx-h100", Precision::mxfp8), "precision_unsupported");  // MXFP8 needs Blackwell
    EXPECT_EQ(problem("dgx-h100", Precision::nvfp4), "precision_unsupported");
    EXPECT_EQ(problem("dgx-b200", Precision::mxfp8), "");
    EXPECT_EQ(problem("dgx-b200", Precision::nvfp4), "");
    EXPECT_EQ(problem("dgx-a100", Precision::bf16), "");
    EXPECT_EQ(problem("l40s", Precision::fp8), "");  // Ada has FP8 tensor cores
    EXPECT_EQ(problem("l40s", Precision::mxfp8), "precision_unsupported");
    EXPECT_EQ(problem("v100-32g", Precision::bf16), "precision_unsupported");
}

TEST(Precision, Fp8KeepsQuantizedGemmInputsAndWeightCopies) {
    // Transformer Engine keeps each GEMM's input as the FP8 copy the forward made (1 B instead of 2 B) and
    // caches FP8 weights with their transposes on Hopper (2 B per weight), one copy on Blackwell.
    const ModelSpec m = preset_model("llama3-8b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 8;
    Layout l;
    l.dp = 8;
    l.global_batch = 8;
    l.seq_len = 4096;
    l.zero = 0;
    const Stage s{0, m.layers, 0, true, true, 0};
    // While the passes run (one GPU's 16-bit gradients would make the optimizer step the peak).
    const MemoryBreakdown bf16 = stage_memory_in_passes(m, c, l, s, 1.0);
    l.precision = Precision::fp8;
    const MemoryBreakdown fp8 = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_LT(fp8.activations_bytes, 0.9 * bf16.activations_bytes);
    // Per token per layer, h = 4096, f = 14336: the norm outputs feeding QKV and the MLP −2h, O +1h (flash
    // keeps it in bf16 as well), the activation feeding the down projection −f: (2h − h + f) bytes less.
    const double T = 4096, saved_per_layer = T * (2 * 4096 - 4096 + 14336);
    EXPECT_NEAR(bf16.activations_bytes - fp8.activations_bytes, 32 * saved_per_layer, 1e-6 * bf16.activations_bytes);
    const StageParams p = stage_params(m, l, s);
    EXPECT_NEAR(fp8.other_bytes - bf16.other_bytes, 2.0 * (p.total() - p.embedding), 1e3);
    // With the attention core recomputed (Megatron's selective default, core_attn) its replay makes O
    // again, so flash's bf16 copy goes with the core's fp32 log-sum-exp: per token and layer 2 · 4,096 +
    // 4 · 32 heads = 8,320 bytes fewer. What stays is the output projection's FP8 copy, as under the
    // unfused core, whose recomputed scores leave the same tensors behind.
    l.recompute = Recompute::selective;
    const MemoryBreakdown core = stage_memory_in_passes(m, c, l, s, 1.0);
    EXPECT_NEAR(fp8.activations_bytes - core.activations_bytes, 32 * T * (2 * 4096 + 4 * 32), 1e-9 * fp8.activations_bytes);
    l.attention_kernel = AttentionKernel::unfused;
    EXPECT_NEAR(stage_memory_in_passes(m, c, l, s, 1.0).activations_bytes, core.activations_bytes, 1e-9 * core.activations_bytes);
}

TEST(Import, TorchtitanKernelsFollowTorchCompile) {
    // Without torch.compile torchtitan runs eager ops (silu's output and the fp32 loss copies kept); with it,
    // fused ones. The export writes `compile = true` for a fused plan and leaves it out for an eager one.
    const Job& j = kTorchtitanJobs[2];
    // Async TP needs torch.compile: an eager plan that asks for it is refused with the way out.
    Layout l = layout_for(Framework::torchtitan, j);
    l.kernels = Kernels::eager;
    const Export async = export_config(preset_model(j.model), cluster_of(j), l, Framework::torchtitan);
    ASSERT_TRUE(async.refusal);
    EXPECT_NE(async.refusal->find("kernels fused, or tp_comm_overlap false"), std::string::npos);
    l.tp_comm_overlap = false;
    const Export e = export_config(preset_model(j.model), cluster_of(j), l, Framework::torchtitan);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    EXPECT_EQ(e.text.find("compile"), std::string::npos);
    ImportContext ctx;
    ctx.cluster = preset_cluster(j.cluster);
    ctx.gpus = j.gpus;
    EXPECT_EQ(import_launch(Framework::torchtitan, e.text, ctx, "t").c.layout.kernels, Kernels::eager);
    EXPECT_EQ(import_launch(Framework::torchtitan, e.text + "\n[compile]\nenable = true\n", ctx, "t").c.layout.kernels,
              Kernels::fused);
    // Compiled or not, FSDP2 adds each micro-batch's gradients in a pass of its own.
    EXPECT_EQ(import_launch(Framework::torchtitan, e.text + "\n[compile]\nenable = true\n", ctx, "t").c.layout.grad_accumulation,
              GradAccumulation::eager);
    // Its launcher turns on the expandable allocator, so an imported run carries no classic cache.
    EXPECT_EQ(import_launch(Framework::torchtitan, e.text, ctx, "t").c.layout.allocator, Allocator::expandable);
}

// find_launch_key looks a key up by binary search, so each framework's table must stay sorted by name: a
// key added out of order hides itself and those after it (--moe-use-legacy-grouped-gemm once did).
TEST(Import, KeyTablesAreSortedSoEveryKeyIsFound) {
    for (Framework f : {Framework::megatron, Framework::torchtitan, Framework::deepspeed}) {
        const auto keys = launch_keys(f);
        for (size_t i = 1; i < keys.size(); ++i) EXPECT_LT(keys[i - 1].name, keys[i].name) << keys[i].name;
        for (const LaunchKey& k : keys) EXPECT_EQ(find_launch_key(f, k.name), &k) << k.name;
    }
}

// Every layout a framework accepts comes back from its exported configuration with the same plan: random
// layouts (fixed seed) drawn within what each framework can express, planned with the framework's
// defaults (now and then a dropout, gradient dtype or DP overlap off them), exported, imported and planned
// again. It found the experts' gradients of a MoE layout at EP 1 reduced over the TP group when etp was left
// implicit (plan.cpp), a torchtitan CP job read back as DDP, and settings the exports had approximated
// instead of refusing (export.cpp): dropout and bf16 gradients to torchtitan and DeepSpeed, 8-bit weights
// alone to torchtitan, bf16 gradients under Megatron's FSDP2, which export_config now reads back itself.
TEST(Import, RandomLayoutsComeBackWithTheirPlan) {
    std::mt19937_64 rng(20261204);
    auto pick = [&](std::initializer_list<int64_t> xs) {
        return *(xs.begin() + std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng));
    };
    const char* models[] = {"llama3-8b", "llama3-70b", "mixtral-8x7b", "qwen3-30b-a3b", "gpt3-175b"};
    const char* clusters[] = {"dgx-h100", "dgx-a100", "dgx-b200", "nvl72"};
    for (Framework f : {Framework::megatron, Framework::torchtitan, Framework::deepspeed}) {
        const bool ds = f == Framework::deepspeed, tt = f == Framework::torchtitan;
        int compared = 0;
        for (int i = 0; i < 400 && compared < 40; ++i) {
            const ModelSpec m = preset_model(models[pick({0, 1, 2, 3, 4})]);
            ClusterSpec c = preset_cluster(clusters[pick({0, 1, 2, 3})]);
            c.gpus = pick({8, 64, 256});
            Layout l;
            l.tp = pick({1, 2, 4, 8});
            l.cp = ds ? 1 : pick({1, 1, 2});
            l.pp = ds ? 1 : pick({1, 2, 4});
            l.dp = c.gpus / (l.tp * l.cp * l.pp);
            if (l.dp < 1) continue;
            l.ep = m.moe && !ds ? pick({1, 2, 4, 8}) : 1;
            l.micro_batch = pick({1, 2});
            l.global_batch = l.micro_batch * l.dp * pick({1, 4, 8});
            l.seq_len = pick({2048, 4096});
            l.zero = static_cast<int>(tt ? pick({0, 3}) : ds ? pick({1, 2}) : pick({0, 1}));
            if (tt && l.cp > 1) l.zero = 3;
            l.recompute = ds || tt ? (pick({0, 1}) ? Recompute::full : Recompute::none)
                                   : (pick({0, 1}) ? Recompute::full : Recompute::selective);
            if (l.pp > 1 && pick({0, 1})) {
                l.vpp = 2;
                l.schedule = Schedule::interleaved;
            }
            l.sequence_parallel = l.tp > 1 && !ds;
            l.framework = f == Framework::megatron ? "Megatron-LM" : tt ? "torchtitan" : "DeepSpeed";
            apply_framework_defaults(framework_defaults(l.framework, c.gpu.generation, l.precision, m.moe.has_value()), l);
            if (tt && l.recompute == Recompute::selective) l.recompute_modules = op_level_selective_modules();
            // A setting off the framework's default now and then: written where the configuration can say
            // it, else the export is refused (export_config reads its text back and plans it again).
            if (pick({0, 1, 2, 3}) == 0) l.dropout = !l.dropout;
            if (pick({0, 1, 2, 3}) == 0) l.grad_dtype = l.grad_dtype == GradDtype::bf16 ? GradDtype::fp32 : GradDtype::bf16;
            if (pick({0, 1, 2, 3}) == 0) l.dp_comm_overlap = !l.dp_comm_overlap;
            const Plan before = evaluate(m, c, l);
            if (before.rejection) continue;
            const Export e = export_config(m, c, l, f);
            if (e.refusal) continue;
            ImportContext ctx;
            ctx.cluster = c;
            ctx.model = m;
            ctx.gpus = c.gpus;
            ctx.seq_len = l.seq_len;
            const Imported im = import_launch(f, e.text, ctx, "exported");
            const Plan after = evaluate(im.c.model, im.c.cluster, im.c.layout);
            const std::string id = std::string(enum_name(f)) + " " + m.name + " " + c.name + " " + to_string(l);
            ASSERT_FALSE(after.rejection) << id;
            EXPECT_NEAR(after.time.step_s, before.time.step_s, 1e-12 * before.time.step_s) << id;
            EXPECT_NEAR(after.memory.total_bytes(), before.memory.total_bytes(), 1e-12 * before.memory.total_bytes()) << id;
            ++compared;
        }
        EXPECT_EQ(compared, 40) << enum_name(f);
    }
}

