// Hugging Face configs of the families added after the first eight: Llama 4 (MoE interleaved with dense
// layers, chunked attention, its multimodal config's text_config), Gemma 1-3 (gated GELU, sandwich norms,
// sliding windows by pattern, transformers' defaults for the keys their configs leave out), Qwen2-MoE and
// Phi-3; and the MoE layer patterns of Qwen and DeepSeek when a layer step or frequency is above 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "shardplan/error.h"
#include "shardplan/hf.h"
#include "shardplan/io.h"
#include "shardplan/presets.h"

using namespace shardplan;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string error_of(const json& j) {
    try {
        model_from_hf_config(j, "m");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

// meta-llama/Llama-4-Scout-17B-16E's config.json, its text_config's keys that shape the model.
const char* kScout = R"({"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
  "tie_word_embeddings": false, "vision_config": {"hidden_size": 1408},
  "text_config": {"model_type": "llama4_text", "attention_chunk_size": 8192, "head_dim": 128, "hidden_size": 5120,
    "interleave_moe_layer_step": 1, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "no_rope_layers": [], "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
    "num_key_value_heads": 8, "num_local_experts": 16, "use_qk_norm": true, "vocab_size": 202048}})";

// google/gemma-3-27b-it's config.json: its text_config leaves vocab_size, tie_word_embeddings and the window
// pattern to Gemma3TextConfig's defaults (262,208; true; every sixth layer global).
const char* kGemma3_27B = R"({"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
  "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
    "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16, "query_pre_attn_scalar": 168,
    "sliding_window": 1024}, "vision_config": {"hidden_size": 1152}})";

}  // namespace

// Scout, per layer: attention q 5120·5120 + k, v 2·5120·1024 + o 5120·5120 = 62,914,560 (its q/k norms are
// L2 norms without weights); norms 2·5120 = 10,240; 16 routed experts 16·3·5120·8192 = 2,013,265,920; the
// shared expert 125,829,120; the router 16·5120 = 81,920 → 2,202,101,760 × 48 = 105,700,884,480; the
// embedding and the untied head 2·202,048·5120 = 2,068,971,520; the final norm 5,120 → 107,769,861,120.
// Active: the expert and the shared expert 2·125,829,120 a layer instead of all routed ones, and no input
// embedding: (62,914,560 + 10,240 + 251,658,240 + 81,920)·48 + 1,034,485,760 + 5,120 = 16,138,408,960.
TEST(HfFamilies, Llama4ScoutCountsItsTextModel) {
    const ModelSpec m = model_from_hf_config(json::parse(kScout), "m");
    EXPECT_EQ(model_params_total(m), 107'769'861'120);
    EXPECT_EQ(model_params_active(m), 16'138'408'960);
    EXPECT_TRUE(contains(m.name, "(text model)")) << m.name;
    // Chunked attention on the RoPE layers, all but every fourth (no_rope_layer_interval 4): 36 of 48.
    EXPECT_EQ(m.window_kind, WindowKind::chunked);
    EXPECT_EQ(m.sliding_window, 8192);
    EXPECT_EQ(m.window_layers, 36);
    EXPECT_EQ(moe_layers_in(m, 0, m.layers), 48);
}

// Maverick: 128 experts on every second layer from layer 1 (interleave_moe_layer_step 2: moe_layers =
// range(1, 48, 2)); the other 24 dense, of intermediate_size_mlp. A moe_layers list says the same, and one
// shardplan cannot place is refused by name.
TEST(HfFamilies, Llama4MaverickInterleavesDenseAndMoeLayers) {
    json j = json::parse(kScout);
    j["text_config"]["num_local_experts"] = 128;
    j["text_config"]["interleave_moe_layer_step"] = 2;
    const ModelSpec m = model_from_hf_config(j, "m");
    EXPECT_FALSE(is_moe_layer(m, 0));
    EXPECT_TRUE(is_moe_layer(m, 1));
    EXPECT_FALSE(is_moe_layer(m, 46));
    EXPECT_TRUE(is_moe_layer(m, 47));
    EXPECT_EQ(moe_layers_in(m, 0, m.layers), 24);
    EXPECT_EQ(m.ffn_hidden, 16384);
    // 400.7 B in all, as Meta's 400 B; 17.2 B active with the input embedding, as its 17 B.
    EXPECT_NEAR(static_cast<double>(model_params_total(m)) / 1e9, 400.7, 0.05);
    EXPECT_NEAR(static_cast<double>(model_params_active(m) + embedding_params(m)) / 1e9, 17.2, 0.05);
    json listed = j;
    listed["text_config"]["moe_layers"] = json::array();
    for (int i = 1; i < 48; i += 2) listed["text_config"]["moe_layers"].push_back(i);
    EXPECT_EQ(to_json(model_from_hf_config(listed, "m"))["moe"], to_json(m)["moe"]);
    listed["text_config"]["moe_layers"] = {1, 3, 7};
    EXPECT_TRUE(contains(error_of(listed), "m.text_config.moe_layers")) << error_of(listed);
    // A NoPE layer list decides which layers are full: two of them here, so 46 chunked.
    json nope = json::parse(kScout);
    nope["text_config"]["no_rope_layers"] = json::array();
    for (int i = 0; i < 48; ++i) nope["text_config"]["no_rope_layers"].push_back(i < 2 ? 0 : 1);
    EXPECT_EQ(model_from_hf_config(nope, "m").window_layers, 46);
    json none = json::parse(kScout);
    none["text_config"]["attention_chunk_size"] = nullptr;
    EXPECT_EQ(model_from_hf_config(none, "m").window_layers, 0);
    json no_text = json::parse(kScout);
    no_text.erase("text_config");
    EXPECT_TRUE(contains(error_of(no_text), "m.text_config")) << error_of(no_text);
}

// Gemma 3 27B's text model, per layer: q 5376·4096 + k, v 2·5376·2048 + o 4096·5376 = 66,060,288, q/k norms
// 2·128 = 256; gated GELU 3·5376·21504 = 346,816,512; four norms 4·5376 = 21,504 → 412,898,560 × 62 =
// 25,599,710,720; the tied embedding 262,208·5376 = 1,409,630,208; the final norm 5,376 → 27,009,346,304.
// Windows of 1,024 on all but every sixth layer: 62 − 10 = 52.
TEST(HfFamilies, Gemma3TakesTransformersDefaults) {
    const ModelSpec m = model_from_hf_config(json::parse(kGemma3_27B), "m");
    EXPECT_EQ(model_params_total(m), 27'009'346'304);
    EXPECT_EQ(m.mlp, MlpKind::geglu);
    EXPECT_TRUE(m.sandwich_norms);
    EXPECT_TRUE(m.qk_norm);
    EXPECT_TRUE(m.tied_embeddings);
    EXPECT_EQ(m.vocab, 262'208);
    EXPECT_EQ(m.window_kind, WindowKind::sliding);
    EXPECT_EQ(m.sliding_window, 1024);
    EXPECT_EQ(m.window_layers, 52);
    // layer_types, where a config has it, decides instead; chunks are Llama 4's alone.
    json typed = json::parse(kGemma3_27B);
    typed["text_config"]["layer_types"] = json::array();
    for (int i = 0; i < 62; ++i) typed["text_config"]["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
    EXPECT_EQ(model_from_hf_config(typed, "m").window_layers, 31);
    typed["text_config"]["layer_types"][0] = "chunked_attention";
    EXPECT_TRUE(contains(error_of(typed), "m.text_config.layer_types")) << error_of(typed);
}

// Gemma 2 27B (46 layers, h 4608, 32 heads of 128, 16 kv heads, f 36864, V 256,000, tied by default):
// per layer 2·4608·4096 + 2·4608·2048 = 56,623,104, MLP 3·4608·36864 = 509,607,936, four norms 18,432 →
// 566,249,472 × 46 = 26,047,475,712; embedding 1,179,648,000; final norm 4,608 → 27,227,128,320, Google's
// 27.2 B. Windows on the even layers: 23. Gemma 7B: no sandwich norms, 8,537,680,896 (Google's 8.54 B).
TEST(HfFamilies, Gemma2AndGemma) {
    const ModelSpec g2 = model_from_hf_config(
        json::parse(R"({"architectures": ["Gemma2ForCausalLM"], "head_dim": 128, "hidden_size": 4608,
          "intermediate_size": 36864, "num_attention_heads": 32, "num_hidden_layers": 46, "num_key_value_heads": 16,
          "sliding_window": 4096, "vocab_size": 256000})"),
        "m");
    EXPECT_EQ(model_params_total(g2), 27'227'128'320);
    EXPECT_EQ(g2.window_layers, 23);
    EXPECT_TRUE(g2.sandwich_norms);
    EXPECT_FALSE(g2.qk_norm);
    const ModelSpec g1 = model_from_hf_config(
        json::parse(R"({"architectures": ["GemmaForCausalLM"], "hidden_size": 3072, "intermediate_size": 24576,
          "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 16, "vocab_size": 256000})"),
        "m");
    EXPECT_EQ(model_params_total(g1), 8'537'680'896);
    EXPECT_FALSE(g1.sandwich_norms);
    EXPECT_EQ(g1.head_dim, 256);
}

// Qwen1.5-MoE-A2.7B: 60 experts of 1,408, top 4, a shared expert of 5,632 = 4 × 1,408, biased q/k/v;
// 14.3 B in all. A shared width that is no multiple of the experts' is refused by name.
TEST(HfFamilies, Qwen2MoeSharedExpertInExpertWidths) {
    json j = json::parse(R"({"architectures": ["Qwen2MoeForCausalLM"], "hidden_size": 2048, "intermediate_size": 5632,
      "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
      "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 24, "vocab_size": 151936})");
    const ModelSpec m = model_from_hf_config(j, "m");
    EXPECT_EQ(m.moe->shared_experts, 4);
    EXPECT_TRUE(m.qkv_bias);
    EXPECT_NEAR(static_cast<double>(model_params_total(m)) / 1e9, 14.32, 0.01);
    j["shared_expert_intermediate_size"] = 5000;
    EXPECT_TRUE(contains(error_of(j), "m.shared_expert_intermediate_size")) << error_of(j);
}

// transformers' MoE layer rules: Qwen's layer i is MoE when (i + 1) % decoder_sparse_step == 0 (and it is
// not in mlp_only_layers): step 2 gives layers 1, 3, 5, ...; after two dense layers, 3, 5, ... DeepSeek's
// when i >= first_k_dense_replace and i % moe_layer_freq == 0: k 3, freq 2 gives 4, 6, 8, ...
TEST(HfFamilies, MoeLayerStepsFollowTransformers) {
    json q = json::parse(R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
      "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2, "num_attention_heads": 4,
      "num_key_value_heads": 2, "num_hidden_layers": 8, "vocab_size": 100, "decoder_sparse_step": 2})");
    auto moe_at = [](const ModelSpec& m) {
        std::string s;
        for (int64_t i = 0; i < m.layers; ++i) s += is_moe_layer(m, i) ? '1' : '0';
        return s;
    };
    EXPECT_EQ(moe_at(model_from_hf_config(q, "m")), "01010101");
    q["mlp_only_layers"] = {0, 1};
    EXPECT_EQ(moe_at(model_from_hf_config(q, "m")), "00010101");
    q["decoder_sparse_step"] = 1;
    EXPECT_EQ(moe_at(model_from_hf_config(q, "m")), "00111111");
    json d = json::parse(R"({"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
      "moe_intermediate_size": 32, "n_routed_experts": 4, "num_experts_per_tok": 2, "num_attention_heads": 4,
      "num_hidden_layers": 10, "vocab_size": 100, "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8,
      "v_head_dim": 8, "first_k_dense_replace": 3, "moe_layer_freq": 2})");
    EXPECT_EQ(moe_at(model_from_hf_config(d, "m")), "0000101010");
    d["moe_layer_freq"] = 1;
    EXPECT_EQ(moe_at(model_from_hf_config(d, "m")), "0001111111");
    // Steps and indices out of range are refused by their keys before any arithmetic on them.
    d["moe_layer_freq"] = 9'223'372'036'854'775'807;
    EXPECT_TRUE(contains(error_of(d), "m.moe_layer_freq: expected an integer in [1, 10]")) << error_of(d);
    d["moe_layer_freq"] = 1;
    d["first_k_dense_replace"] = 9'223'372'036'854'775'807;
    EXPECT_TRUE(contains(error_of(d), "m.first_k_dense_replace")) << error_of(d);
    q["decoder_sparse_step"] = -9'223'372'036'854'775'807;
    EXPECT_TRUE(contains(error_of(q), "m.decoder_sparse_step")) << error_of(q);
    q["decoder_sparse_step"] = 1;
    q["mlp_only_layers"] = {0, 1, 2, 3, 4, 5, 6, 7};
    EXPECT_TRUE(contains(error_of(q), "m.mlp_only_layers")) << error_of(q);
    json scout = json::parse(kScout);
    scout["text_config"]["moe_layers"] = {-9'223'372'036'854'775'807, 9'223'372'036'854'775'807};
    EXPECT_TRUE(contains(error_of(scout), "m.text_config.moe_layers: expected layer indices in [0, 48)")) << error_of(scout);
    scout["text_config"]["num_hidden_layers"] = 0;
    EXPECT_TRUE(contains(error_of(scout), "m.text_config.num_hidden_layers")) << error_of(scout);
}

// Phi-4 (Phi3ForCausalLM): Llama's shape; 14.66 B. A Gemma model has no Megatron-LM export (no gated GELU
// among its arguments), and sandwich norms and chunks none anywhere.
TEST(HfFamilies, Phi3ReadsAsLlama) {
    const ModelSpec m = model_from_hf_config(
        json::parse(R"({"architectures": ["Phi3ForCausalLM"], "hidden_size": 5120, "intermediate_size": 17920,
          "num_attention_heads": 40, "num_key_value_heads": 10, "num_hidden_layers": 40, "vocab_size": 100352,
          "sliding_window": null})"),
        "m");
    EXPECT_EQ(m.mlp, MlpKind::swiglu);
    EXPECT_EQ(m.window_layers, 0);
    EXPECT_NEAR(static_cast<double>(model_params_total(m)) / 1e9, 14.66, 0.01);
}

// The Llama 4 and Gemma 3 presets are their configs' text models, field for field apart from the name.
TEST(HfFamilies, PresetsMatchTheirConfigs) {
    json maverick = json::parse(kScout);
    maverick["text_config"]["num_local_experts"] = 128;
    maverick["text_config"]["interleave_moe_layer_step"] = 2;
    for (auto [config, preset] : {std::pair{json::parse(kScout), "llama4-scout"}, {maverick, "llama4-maverick"},
                                  {json::parse(kGemma3_27B), "gemma3-27b"}}) {
        json from_config = to_json(model_from_hf_config(config, "m")), built_in = to_json(preset_model(preset));
        from_config.erase("name");
        built_in.erase("name");
        EXPECT_EQ(from_config, built_in) << preset;
    }
}

// A config.json read from a file takes its folder's name; a multimodal one's still says it is the text model.
TEST(HfFamilies, AFileKeepsTheTextModelInItsName) {
    const auto dir = std::filesystem::temp_directory_path() / "shardplan_hf_test" / "Llama-4-Scout-17B-16E";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << kScout;
    EXPECT_EQ(model_from_file((dir / "config.json").string(), "m").name, "Llama-4-Scout-17B-16E (text model)");
    std::filesystem::remove_all(dir.parent_path());
}
