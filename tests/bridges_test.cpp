// The bridges to other tools: Hugging Face configs in; Megatron-LM, torchtitan and DeepSpeed configs
// out; CSV, Markdown and SVG for sweeps. Fixtures are written here from the public config values.
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include "shardplan/error.h"
#include "shardplan/export.h"
#include "shardplan/hf.h"
#include "shardplan/import.h"
#include "shardplan/io.h"
#include "shardplan/presets.h"
#include "shardplan/sweep.h"
#include "shardplan/table.h"
#include "plan_helpers.h"

using namespace shardplan;
using shardplan::testing::run_by;

namespace {

json hf(const char* text) { return json::parse(text); }

const char* kLlama3_8B = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
  "vocab_size": 128256, "tie_word_embeddings": false, "rope_theta": 500000.0})";

const char* kMixtral = R"({"architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
  "num_local_experts": 8, "num_experts_per_tok": 2, "tie_word_embeddings": false})";

const char* kDeepSeekV3 = R"({"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 7168, "intermediate_size": 18432,
  "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280,
  "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
  "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
  "first_k_dense_replace": 3, "moe_layer_freq": 1, "n_group": 8, "topk_group": 4, "tie_word_embeddings": false})";

const char* kQwen3_30B = R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 6144,
  "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
  "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "decoder_sparse_step": 1,
  "mlp_only_layers": [], "tie_word_embeddings": false})";

const char* kGptOss = R"({"architectures": ["GptOssForCausalLM"], "hidden_size": 2880, "intermediate_size": 2880,
  "num_hidden_layers": 36, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
  "num_local_experts": 128, "num_experts_per_tok": 4, "attention_bias": true, "tie_word_embeddings": false})";

// A minimal XML well-formedness check: balanced, properly nested tags, quoted attributes, no stray '<' or '&'.
bool well_formed_xml(const std::string& s) {
    std::vector<std::string> stack;
    size_t i = 0;
    while ((i = s.find('<', i)) != std::string::npos) {
        const size_t end = s.find('>', i);
        if (end == std::string::npos) return false;
        std::string tag = s.substr(i + 1, end - i - 1);
        if (tag.find('<') != std::string::npos) return false;
        int quotes = 0;
        for (char ch : tag) quotes += ch == '"';
        if (quotes % 2) return false;
        if (tag[0] == '/') {
            if (stack.empty() || stack.back() != tag.substr(1)) return false;
            stack.pop_back();
        } else if (tag.back() != '/') {
            stack.push_back(tag.substr(0, tag.find_first_of(" \n")));
        }
        i = end + 1;
    }
    for (size_t a = 0; (a = s.find('&', a)) != std::string::npos; ++a)
        if (s.compare(a, 4, "&lt;") && s.compare(a, 4, "&gt;") && s.compare(a, 5, "&amp;") && s.compare(a, 6, "&quot;"))
            return false;
    return stack.empty();
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string cell;
    bool quoted = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
            else if (ch == '"') quoted = false;
            else cell += ch;
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            rows.back().push_back(cell), cell.clear();
        } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            rows.back().push_back(cell), cell.clear(), rows.emplace_back(), ++i;
        } else {
            cell += ch;
        }
    }
    if (rows.back().empty()) rows.pop_back();
    return rows;
}

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

TEST(HfImport, ParameterCountsMatchThePublishedTotals) {
    EXPECT_EQ(model_params_total(model_from_hf_config(hf(kLlama3_8B), "m")), 8'030'261'248);
    const ModelSpec mixtral = model_from_hf_config(hf(kMixtral), "m");
    EXPECT_EQ(model_params_total(mixtral), 46'702'792'704);
    EXPECT_EQ(model_params_active(mixtral), 12'748'853'248);  // without the input embedding (model_test.cpp)
    // The same families as the presets, read from their configs, count the same.
    for (auto [text, preset] : {std::pair{kDeepSeekV3, "deepseek-v3"}, {kQwen3_30B, "qwen3-30b-a3b"}, {kGptOss, "gpt-oss-120b"}}) {
        const ModelSpec m = model_from_hf_config(hf(text), "m");
        EXPECT_EQ(model_params_total(m), model_params_total(preset_model(preset))) << preset;
        EXPECT_EQ(model_params_active(m), model_params_active(preset_model(preset))) << preset;
        EXPECT_EQ(to_json(m)["moe"], to_json(preset_model(preset))["moe"]) << preset;  // DeepSeek-V3: 4 of 8 groups
    }
}

TEST(HfImport, Qwen2HasQkvBiasAndQwen3HasQkNorm) {
    // Tiny Qwen2: h 64, 2 layers, 4 heads of 16, 2 kv heads, f 128, V 100, tied.
    // Per layer: q 64·64 + k,v 2·64·32 + o 64·64 = 12,288; q/k/v biases 64 + 32 + 32 = 128;
    // SwiGLU 3·64·128 = 24,576; norms 128 → 37,120 × 2 = 74,240; embedding 6,400; final norm 64 → 80,704.
    const json q2 = hf(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
      "tie_word_embeddings": true})");
    EXPECT_EQ(model_params_total(model_from_hf_config(q2, "m")), 80'704);
    json q3 = q2;
    q3["architectures"] = {"Qwen3ForCausalLM"};
    // Qwen3 drops the biases (−2·128) and adds per-head q/k norms (+2·2·16).
    EXPECT_EQ(model_params_total(model_from_hf_config(q3, "m")), 80'704 - 256 + 64);
}

// Sliding windows from a config: transformers' layer_types where it is there (gpt-oss: 128 tokens on every
// second layer, 18 of 36, as the preset has it), else each family's older keys: Mistral's sliding_window on
// every layer; Qwen2's only with use_sliding_window, from max_window_layers on (2 layers, 1 full: 1).
TEST(HfImport, SlidingWindowsComeFromLayerTypesOrTheFamilysKeys) {
    json oss = hf(kGptOss);
    oss["sliding_window"] = 128;
    oss["layer_types"] = json::array();
    for (int i = 0; i < 36; ++i) oss["layer_types"].push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
    const ModelSpec m = model_from_hf_config(oss, "m");
    EXPECT_EQ(m.sliding_window, 128);
    EXPECT_EQ(m.window_layers, 18);
    EXPECT_EQ(m.window_layers, preset_model("gpt-oss-120b").window_layers);
    json mistral = hf(kLlama3_8B);
    mistral["architectures"] = {"MistralForCausalLM"};
    mistral["sliding_window"] = 4096;
    const ModelSpec mi = model_from_hf_config(mistral, "m");
    EXPECT_EQ(mi.sliding_window, 4096);
    EXPECT_EQ(mi.window_layers, mi.layers);
    json q2 = hf(R"({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
      "sliding_window": 32, "max_window_layers": 1, "use_sliding_window": false})");
    EXPECT_EQ(model_from_hf_config(q2, "m").window_layers, 0);
    q2["use_sliding_window"] = true;
    EXPECT_EQ(model_from_hf_config(q2, "m").window_layers, 1);
    EXPECT_EQ(model_from_hf_config(hf(kLlama3_8B), "m").sliding_window, 0);
    oss["layer_types"].erase(0);  // 35 entries for 36 layers
    try {
        model_from_hf_config(oss, "m");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "m.layer_types")) << e.what();
    }
}

TEST(HfImport, ErrorsListWhatIsSupportedOrMissing) {
    try {
        model_from_hf_config(hf(R"({"architectures": ["FalconForCausalLM"], "hidden_size": 64})"), "--model");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "--model.architectures"));
        EXPECT_TRUE(contains(e.what(), "got \"FalconForCausalLM\""));
        // Every supported architecture fits the line, the last one too.
        EXPECT_TRUE(contains(e.what(), "...ForCausalLM: Llama, Mistral")) << e.what();
        EXPECT_TRUE(contains(e.what(), "...ForConditionalGeneration: Gemma3, Llama4")) << e.what();
        EXPECT_FALSE(contains(e.what(), "...\n")) << e.what();
    }
    json j = hf(kMixtral);
    j.erase("num_local_experts");
    try {
        model_from_hf_config(j, "--model");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "--model.num_local_experts"));
    }
    EXPECT_TRUE(looks_like_hf_config(hf(kLlama3_8B)));
    EXPECT_FALSE(looks_like_hf_config(json::parse(R"({"layers": 2})")));
}

namespace {
struct Scene {
    ModelSpec m;
    ClusterSpec c;
    Layout l;
};
Scene llama70b() {
    Scene s{preset_model("llama3-70b"), preset_cluster("dgx-h100"), Layout{}};
    s.c.gpus = 512;
    s.l.tp = 8;
    s.l.pp = 4;
    s.l.dp = 16;
    s.l.vpp = 5;
    s.l.schedule = Schedule::interleaved;
    s.l.global_batch = 512;
    s.l.seq_len = 8192;
    s.l.recompute = Recompute::selective;
    return s;
}
}  // namespace

TEST(Export, MegatronArgumentsFlagByFlag) {
    const Scene s = llama70b();
    const Export e = export_config(s.m, s.c, s.l, Framework::megatron);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    for (const char* flag : {"--num-layers 80", "--hidden-size 8192", "--ffn-hidden-size 28672", "--num-attention-heads 64",
                             "--group-query-attention --num-query-groups 8", "--swiglu", "--normalization RMSNorm",
                             "--untie-embeddings-and-output-weights", "--disable-bias-linear",
                             "--tensor-model-parallel-size 8", "--pipeline-model-parallel-size 4",
                             "--context-parallel-size 1", "--num-virtual-stages-per-pipeline-rank 5", "--sequence-parallel",
                             "--use-distributed-optimizer", "--recompute-granularity selective",
                             "--micro-batch-size 1", "--global-batch-size 512", "--seq-length 8192", "--bf16"})
        EXPECT_TRUE(contains(e.text, flag)) << flag;
    EXPECT_FALSE(contains(e.text, "--num-experts"));
    EXPECT_FALSE(contains(e.text, "--fp8"));

    // FP8, full recompute, MoE with MLA, uneven pipeline (61 layers: first 3 dense).
    Scene d{preset_model("deepseek-v3"), preset_cluster("h800"), Layout{}};
    d.c.gpus = 2048;
    d.l.pp = 16;
    d.l.dp = 128;
    d.l.ep = 64;
    d.l.global_batch = 4096;
    d.l.precision = Precision::fp8;
    d.l.recompute = Recompute::full;
    const Export x = export_config(d.m, d.c, d.l, Framework::megatron);
    ASSERT_FALSE(x.refusal) << *x.refusal;
    for (const char* flag : {"--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512", "--qk-head-dim 128",
                             "--qk-pos-emb-head-dim 64", "--v-head-dim 128", "--num-experts 256", "--moe-router-topk 8",
                             "--moe-ffn-hidden-size 2048", "--moe-shared-expert-intermediate-size 2048",
                             "--moe-layer-freq '[0,0,0,1,", "--expert-model-parallel-size 64",
                             "--decoder-first-pipeline-num-layers 3", "--decoder-last-pipeline-num-layers 2",
                             "--fp8-format hybrid", "--recompute-granularity full --recompute-method uniform"})
        EXPECT_TRUE(contains(x.text, flag)) << flag;
    EXPECT_FALSE(contains(x.text, "--fp8-param-gather"));
    // Weights held in 8 bits alone are Megatron's --fp8-param-gather, and come back from it; MXFP8's needs
    // the gradient buffer for its gather.
    d.l.fp8_params = true;
    const Export kept = export_config(d.m, d.c, d.l, Framework::megatron);
    ASSERT_FALSE(kept.refusal) << *kept.refusal;
    EXPECT_TRUE(contains(kept.text, "--fp8-param-gather"));
    EXPECT_FALSE(contains(kept.text, "--reuse-grad-buf-for-mxfp8-param-ag"));
    ImportContext ctx;
    ctx.cluster = d.c;
    ctx.model = d.m;
    ctx.gpus = d.c.gpus;
    EXPECT_TRUE(import_launch(Framework::megatron, kept.text, ctx, "run.sh").c.layout.fp8_params);
    EXPECT_FALSE(import_launch(Framework::megatron, x.text, ctx, "run.sh").c.layout.fp8_params);
    d.l.precision = Precision::mxfp8;
    d.c = preset_cluster("dgx-b200");
    d.c.gpus = 2048;
    EXPECT_TRUE(contains(export_config(d.m, d.c, d.l, Framework::megatron).text,
                         "--fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag"));
}

TEST(Export, RefusalsSayWhy) {
    Scene s = llama70b();
    // A sliding window no exporter writes: the job would run full attention on every layer.
    s.m.sliding_window = 4096;
    s.m.window_layers = s.m.layers;
    for (Framework f : {Framework::megatron, Framework::torchtitan, Framework::deepspeed})
        EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, f).refusal, "model.sliding_window"));
    s = llama70b();
    s.l.schedule = Schedule::gpipe;
    s.l.vpp = 1;
    ASSERT_TRUE(export_config(s.m, s.c, s.l, Framework::megatron).refusal);
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::megatron).refusal, "GPipe"));
    s = llama70b();
    s.l.zero = 1;
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::torchtitan).refusal, "ZeRO-1/2"));
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::deepspeed).refusal, "pipeline"));
    // torchtitan shards the norms along the sequence whenever it splits tensors: sequence parallelism off
    // is not a layout it runs (its disable_loss_parallel gathers the logits, which is another thing).
    s = llama70b();
    s.l.zero = 3;
    s.l.recompute = Recompute::none;
    s.l.sequence_parallel = false;
    ASSERT_GT(s.l.tp, 1);
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::torchtitan).refusal, "SequenceParallel"));
    EXPECT_FALSE(export_config(s.m, s.c, s.l, Framework::torchtitan).refused_for_settings);  // its form, not a setting
    s.l.sequence_parallel = true;
    EXPECT_FALSE(export_config(s.m, s.c, run_by(Framework::torchtitan, s.m, s.c, s.l), Framework::torchtitan).refusal);
    // With CP it shards over the CP ranks whatever the shard degree: no zero 0 beside it.
    s.l.zero = 0;
    s.l.cp = 2;
    s.l.dp = 8;
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::torchtitan).refusal, "zero 3"));
    // Without PP it accumulates one micro-batch at a time: no GPipe (all forwards first) there.
    s = llama70b();
    s.l.zero = 3;
    s.l.recompute = Recompute::none;
    s.l.pp = 1;
    s.l.vpp = 1;
    s.l.dp = 64;
    s.l.schedule = Schedule::gpipe;
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::torchtitan).refusal, "schedule 1f1b"));
    // DeepSpeed: AutoTP keeps the norms whole; bf16 at stage 0 is its BF16 optimizer, sharded as ZeRO-1.
    s.l.schedule = Schedule::one_f_one_b;
    s.l.zero = 1;
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::deepspeed).refusal, "sequence_parallel false"));
    s.l.sequence_parallel = false;
    EXPECT_FALSE(export_config(s.m, s.c, run_by(Framework::deepspeed, s.m, s.c, s.l), Framework::deepspeed).refusal);
    s.l.zero = 0;
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::deepspeed).refusal, "zero 1"));
    s.l.schedule = Schedule::gpipe;
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::deepspeed).refusal, "schedule 1f1b"));
    s = llama70b();
    s.l.zero = 1;
    s.l.tp = 3;  // an invalid layout is refused with its own reason (tp·cp·pp·dp no longer = gpus)
    EXPECT_TRUE(contains(*export_config(s.m, s.c, s.l, Framework::megatron).refusal, "layout.dp: expected tp·cp·pp·dp"));
}

// What an export writes is what was planned: read back, it plans the same step and memory, or the export
// is refused naming what the framework would run instead. The 70B layout at ZeRO-3 planned with
// shardplan's defaults (bf16 gradients, fused accumulation and loss) is not what torchtitan runs: its
// mixed_precision_reduce is float32, FSDP2 adds each micro-batch's gradients in a pass of their own, and
// its loss upcasts the logits. Planned as torchtitan runs it, it exports, and the TOML reads back to it.
TEST(Export, WhatItWritesIsWhatWasPlanned) {
    Scene s = llama70b();
    s.l.zero = 3;
    s.l.recompute = Recompute::full;
    const Export e = export_config(s.m, s.c, s.l, Framework::torchtitan);
    ASSERT_TRUE(e.refusal);
    EXPECT_TRUE(e.refused_for_settings);
    for (const char* what : {"grad_dtype \"fp32\" (not \"bf16\")", "cross_entropy \"upcast\" (not \"fused\")",
                             "plan with --framework torchtitan"})
        EXPECT_TRUE(contains(*e.refusal, what)) << *e.refusal;
    EXPECT_FALSE(contains(*e.refusal, "sequence_parallel")) << *e.refusal;  // the same either way here
    const Layout run = run_by(Framework::torchtitan, s.m, s.c, s.l);
    const Export ok = export_config(s.m, s.c, run, Framework::torchtitan);
    ASSERT_FALSE(ok.refusal) << *ok.refusal;
    ImportContext ctx;
    ctx.cluster = s.c;
    ctx.model = s.m;
    ctx.gpus = s.c.gpus;
    ctx.seq_len = s.l.seq_len;
    const Imported back = import_launch(Framework::torchtitan, ok.text, ctx, "job.toml");
    EXPECT_DOUBLE_EQ(evaluate(back.c.model, back.c.cluster, back.c.layout).time.step_s, evaluate(s.m, s.c, run).time.step_s);
    // Megatron-LM: bf16 gradients are --grad-reduce-in-bf16, and round-trip as they are.
    EXPECT_FALSE(export_config(s.m, s.c, run_by(Framework::megatron, s.m, s.c, llama70b().l), Framework::megatron).refusal);
}

TEST(Export, TorchtitanTomlParses) {
    Scene s = llama70b();
    s.l.zero = 3;
    s.l.precision = Precision::fp8;
    s.l.recompute_modules = op_level_selective_modules();  // torchtitan's "selective" (import_test.cpp)
    const Export e = export_config(s.m, s.c, run_by(Framework::torchtitan, s.m, s.c, s.l), Framework::torchtitan);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    const toml::table t = toml::parse(e.text);  // throws on malformed TOML
    EXPECT_EQ(t["parallelism"]["tensor_parallel_degree"].value<int64_t>(), 8);
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_degree"].value<int64_t>(), 4);
    EXPECT_EQ(t["parallelism"]["data_parallel_shard_degree"].value<int64_t>(), 16);
    EXPECT_EQ(t["parallelism"]["data_parallel_replicate_degree"].value<int64_t>(), 1);
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_schedule"].value<std::string>(), "Interleaved1F1B");
    EXPECT_EQ(t["parallelism"]["pipeline_parallel_layers_per_stage"].value<int64_t>(), 4);  // 80 / (4 · 5)
    EXPECT_EQ(t["training"]["local_batch_size"].value<int64_t>(), 32);
    EXPECT_EQ(t["training"]["global_batch_size"].value<int64_t>(), 512);
    EXPECT_EQ(t["training"]["seq_len"].value<int64_t>(), 8192);
    EXPECT_EQ(t["activation_checkpoint"]["mode"].value<std::string>(), "selective");
    EXPECT_EQ(t["model"]["converters"][0].value<std::string>(), "float8");
}

TEST(Export, DeepSpeedJsonParses) {
    Scene s{preset_model("llama3-8b"), preset_cluster("dgx-h100"), Layout{}};
    s.c.gpus = 64;
    s.l.tp = 2;
    s.l.dp = 32;
    s.l.micro_batch = 2;
    s.l.global_batch = 256;
    s.l.zero = 2;
    s.l.recompute = Recompute::full;
    s.l.sequence_parallel = false;  // AutoTP splits the linear layers only
    const Export e = export_config(s.m, s.c, run_by(Framework::deepspeed, s.m, s.c, s.l), Framework::deepspeed);
    ASSERT_FALSE(e.refusal) << *e.refusal;
    const json j = json::parse(e.text);
    EXPECT_EQ(j["train_batch_size"], 256);
    EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 2);
    EXPECT_EQ(j["gradient_accumulation_steps"], 4);  // 256 / (2 · 32)
    EXPECT_EQ(j["zero_optimization"]["stage"], 2);
    EXPECT_EQ(j["bf16"]["enabled"], true);
    EXPECT_EQ(j["tensor_parallel"]["autotp_size"], 2);
    EXPECT_TRUE(j.contains("activation_checkpointing"));
}

TEST(Sweep, CsvAndSvgAreWellFormed) {
    const ModelSpec m = preset_model("llama3-8b");
    const ClusterSpec c = preset_cluster("dgx-h100");
    Layout base;
    base.global_batch = 256;
    base.seq_len = 4096;
    const auto points = sweep(m, c, base, SearchSpace{}, SweepAxis::gpus, {1, 8, 16, 64}, {.top = 1});
    ASSERT_EQ(points.size(), 4u);
    EXPECT_TRUE(points[0].result.best.empty());  // 8B with Adam does not fit on one 80 GB GPU
    EXPECT_FALSE(points[3].result.best.empty());
    const auto rows = parse_csv(to_csv(sweep_table(points, SweepAxis::gpus)));
    ASSERT_EQ(rows.size(), 5u);  // header + a row per point
    EXPECT_EQ(rows[0][0], "gpus");
    for (const auto& r : rows) EXPECT_EQ(r.size(), rows[0].size());
    EXPECT_EQ(rows[4][0], "64");
    EXPECT_GT(std::stod(rows[4][6]), 0);  // tokens_per_s_per_gpu
    // memory_bytes, then what its allocations could still take (Plan::margin_bytes).
    ASSERT_EQ(rows[0][9], "margin_bytes");
    EXPECT_DOUBLE_EQ(std::stod(rows[4][9]), points[3].result.best.front().margin_bytes());
    EXPECT_GT(std::stod(rows[4][9]), 0);
    const std::string svg = sweep_svg(points, SweepAxis::gpus, "Llama <3> & friends");
    EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    EXPECT_TRUE(well_formed_xml(svg)) << svg.substr(0, 400);
    EXPECT_TRUE(contains(svg, "Llama &lt;3&gt; &amp; friends"));
    EXPECT_TRUE(contains(svg, "no layout fits"));
    EXPECT_TRUE(contains(svg, "<polyline"));
    EXPECT_TRUE(contains(svg, "(log scale)"));
    EXPECT_FALSE(well_formed_xml("<svg><g></svg></g>"));  // the checker itself can fail
}

TEST(Formats, PlanCsvHasTheFieldTableAndMarkdownEscapesPipes) {
    Table t;
    t.header = {"a", "b"};
    t.rows = {{"x,y", "say \"hi\"\nthere"}, {"p|q", ""}};
    const auto rows = parse_csv(to_csv(t));
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[1][0], "x,y");
    EXPECT_EQ(rows[1][1], "say \"hi\"\nthere");
    EXPECT_TRUE(contains(to_markdown(t), "p\\|q"));
    EXPECT_EQ(number_text(0.1), "0.1");
    EXPECT_EQ(number_text(1e9), "1000000000");
}
