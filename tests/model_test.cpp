// Parameter counts against the published totals of each family.
#include <gtest/gtest.h>

#include "shardplan/error.h"
#include "shardplan/io.h"
#include "shardplan/model.h"
#include "shardplan/presets.h"

using namespace shardplan;

TEST(Model, Llama3_8B_MatchesPublishedCount) {
    // Per layer: q 4096·4096 + k,v 2·4096·1024 + o 4096·4096 = 41,943,040; SwiGLU 3·4096·14336 = 176,160,768;
    // two RMSNorms 8,192 → 218,112,000 × 32 = 6,979,584,000. Embedding + untied head 2·128256·4096 =
    // 1,050,673,152; final norm 4,096. Total 8,030,261,248.
    EXPECT_EQ(model_params_total(preset_model("llama3-8b")), 8'030'261'248);
}

TEST(Model, Llama3_405B_MatchesPublishedCount) {
    EXPECT_EQ(model_params_total(preset_model("llama3-405b")), 405'853'388'800);
}

TEST(Model, Mixtral8x7B_TotalAndActive) {
    // Per layer: attention 41,943,040 + 8 experts · 176,160,768 + router 8·4096 + norms 8,192 = 1,451,270,144;
    // × 32 + embeddings 2·32000·4096 + final norm = 46,702,792,704.
    const ModelSpec m = preset_model("mixtral-8x7b");
    EXPECT_EQ(model_params_total(m), 46'702'792'704);
    // Active: 2 of 8 experts → 46,702,792,704 − 32·6·176,160,768 = 12,879,925,248, less the input embedding
    // (a lookup) 32000·4096 = 131,072,000 → 12,748,853,248 (Mistral's "12.9B" counts the embedding).
    EXPECT_EQ(model_params_active(m), 12'748'853'248);
}

TEST(Model, PublishedTotalsWithinHalfAPercent) {
    struct Row { const char* name; double billions; };
    for (Row r : {Row{"llama3-70b", 70.55}, {"deepseek-v3", 671.0}, {"qwen3-235b-a22b", 235.1}, {"qwen3-30b-a3b", 30.5},
                  {"gpt-oss-120b", 116.8}, {"nemotron4-340b", 341.0}, {"mixtral-8x22b", 140.6}, {"gpt3-175b", 174.6}}) {
        const double got = double(model_params_total(preset_model(r.name))) / 1e9;
        EXPECT_NEAR(got, r.billions, r.billions * 0.005) << r.name;
    }
    // Active parameters without the input embedding: DeepSeek-V3 "37B activated" (37.55 B with its 0.93 B
    // embedding), Qwen3-235B-A22B "22B" (22.19 B with 0.62 B).
    EXPECT_NEAR(double(model_params_active(preset_model("deepseek-v3"))) / 1e9, 36.6, 0.1);
    EXPECT_NEAR(double(model_params_active(preset_model("qwen3-235b-a22b"))) / 1e9, 21.6, 0.1);
}

TEST(Model, GptOssCountsMatchTheModelCard) {
    // OpenAI gpt-oss model card: 116.83 B total, 5.13 B active. Per layer: attention 2880·(4096 + 2·512) +
    // 4096·2880 = 26,542,080, biases 4096 + 2·512 + 2880 = 8,000, 64 sink logits → 26,550,144; 128 experts
    // of gate/up 2880·5760 + 5760 and down 2880·2880 + 2880 = 24,891,840 each;
    // router 128·(2880 + 1) = 368,768; norms 5,760. × 36, + embedding and head 2·201088·2880 + final norm.
    const ModelSpec m = preset_model("gpt-oss-120b");
    EXPECT_EQ(model_params_total(m), 116'829'156'672);
    // Active: attention, 4 experts and the router per layer, the LM head and the norms; not the input embedding.
    EXPECT_EQ(model_params_active(m), 5'132'849'472);
}

TEST(Model, MoeLayerPatternCountsInClosedForm) {
    ModelSpec m = preset_model("deepseek-v3");  // 3 dense, then 58 MoE layers
    EXPECT_EQ(moe_layers_in(m, 0, 61), 58);
    EXPECT_EQ(moe_layers_in(m, 0, 3), 0);
    EXPECT_EQ(moe_layers_in(m, 2, 5), 2);
    m.moe->layer_freq = 2;  // layers 3, 5, 7, ... are MoE
    int64_t count = 0;
    for (int64_t i = 10; i < 40; ++i) count += is_moe_layer(m, i);
    EXPECT_EQ(moe_layers_in(m, 10, 40), count);
}

namespace {
// What validate_model says of `m`: "" when it accepts it.
std::string validation_error(const ModelSpec& m) {
    try {
        validate_model(m);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST(Model, ValidationNamesTheField) {
    ModelSpec m = preset_model("llama3-8b");
    m.kv_heads = 7;  // does not divide 32 heads
    EXPECT_NE(validation_error(m).find("model.kv_heads"), std::string::npos) << validation_error(m);
}

// A window needs a length, and windows at most every layer; JSON without window_layers windows them all.
TEST(Model, SlidingWindowFieldsAreChecked) {
    ModelSpec m = preset_model("llama3-8b");
    m.window_layers = 4;  // without a sliding_window
    EXPECT_NE(validation_error(m).find("model.window_layers"), std::string::npos) << validation_error(m);
    m.sliding_window = 4096;
    m.window_layers = m.layers + 1;
    EXPECT_THROW(validate_model(m), ConfigError);
    const ModelSpec all = model_from_json(json::parse(R"({"preset": "llama3-8b", "sliding_window": 4096})"), "model");
    EXPECT_EQ(all.window_layers, all.layers);
    const ModelSpec some =
        model_from_json(json::parse(R"({"preset": "llama3-8b", "sliding_window": 512, "window_layers": 8})"), "model");
    EXPECT_EQ(some.sliding_window, 512);
    EXPECT_EQ(some.window_layers, 8);
    EXPECT_EQ(to_json(some)["sliding_window"], 512);  // and written as read
    EXPECT_EQ(to_json(some)["window_layers"], 8);
    EXPECT_THROW(model_from_json(json::parse(R"({"preset": "llama3-8b", "sliding_window": -1})"), "model"), ConfigError);
}

// Chunked windows need their length; window_kind and sandwich_norms are read and written as given.
TEST(Model, WindowKindAndSandwichNormsRoundTrip) {
    ModelSpec m = preset_model("llama3-8b");
    m.window_kind = WindowKind::chunked;
    EXPECT_NE(validation_error(m).find("model.window_kind"), std::string::npos) << validation_error(m);
    const ModelSpec g = model_from_json(
        json::parse(R"({"preset": "llama3-8b", "sliding_window": 8192, "window_layers": 24, "window_kind": "chunked",
                       "sandwich_norms": true, "mlp": "geglu"})"),
        "model");
    EXPECT_EQ(g.window_kind, WindowKind::chunked);
    EXPECT_TRUE(g.sandwich_norms);
    EXPECT_EQ(g.mlp, MlpKind::geglu);
    const json back = to_json(g);
    EXPECT_EQ(back["window_kind"], "chunked");
    EXPECT_EQ(back["sandwich_norms"], true);
    EXPECT_EQ(back["mlp"], "geglu");
    // Sandwich norms add two RMSNorms of h a layer: 32 · 2 · 4096 = 262,144 parameters on Llama 3 8B; a
    // gated GELU MLP has SwiGLU's three matrices.
    EXPECT_EQ(model_params_total(g) - model_params_total(preset_model("llama3-8b")), 262'144);
    try {
        model_from_json(json::parse(R"({"preset": "llama3-8b", "window_kind": "striped"})"), "model");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("model.window_kind"), std::string::npos) << e.what();
    }
}
