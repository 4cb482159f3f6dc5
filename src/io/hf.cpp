// Hugging Face config.json import. Key names follow transformers' configuration_<family>.py classes.
#include "shardplan/hf.h"

#include <algorithm>

#include <fmt/format.h>

#include "shardplan/error.h"
#include "shardplan/io.h"

namespace shardplan {

namespace {

enum class Family { llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, qwen2_moe, deepseek_v3, gpt_oss, phi3, gemma, gemma2, gemma3, llama4 };

struct Known {
    const char* architecture;
    const char* model_type;
    Family family;
    bool text_config = false;  // a multimodal model: its language model's config is the object text_config
};

constexpr Known kKnown[] = {
    {"LlamaForCausalLM", "llama", Family::llama},
    {"MistralForCausalLM", "mistral", Family::mistral},
    {"MixtralForCausalLM", "mixtral", Family::mixtral},
    {"Qwen2ForCausalLM", "qwen2", Family::qwen2},
    {"Qwen2MoeForCausalLM", "qwen2_moe", Family::qwen2_moe},
    {"Qwen3ForCausalLM", "qwen3", Family::qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Family::qwen3_moe},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::deepseek_v3},
    {"GptOssForCausalLM", "gpt_oss", Family::gpt_oss},
    {"Phi3ForCausalLM", "phi3", Family::phi3},
    {"GemmaForCausalLM", "gemma", Family::gemma},
    {"Gemma2ForCausalLM", "gemma2", Family::gemma2},
    {"Gemma3ForCausalLM", "gemma3_text", Family::gemma3},
    {"Gemma3ForConditionalGeneration", "gemma3", Family::gemma3, true},
    {"Llama4ForCausalLM", "llama4_text", Family::llama4},
    {"Llama4ForConditionalGeneration", "llama4", Family::llama4, true},
};

// What transformers' configuration class gives a key the config.json leaves out, for the families whose
// published configs rely on it (Gemma's tied embeddings and head_dim; Gemma 3's text_config, which
// omits vocab_size and the window; Llama 4's). From configuration_gemma.py, configuration_gemma2.py,
// configuration_gemma3.py (Gemma3TextConfig) and configuration_llama4.py (Llama4TextConfig).
json class_defaults(Family f) {
    switch (f) {
        case Family::gemma:
            return {{"vocab_size", 256000}, {"head_dim", 256}, {"tie_word_embeddings", true}};
        case Family::gemma2:
            return {{"vocab_size", 256000}, {"head_dim", 256}, {"tie_word_embeddings", true}, {"sliding_window", 4096}};
        case Family::gemma3:
            return {{"vocab_size", 262208}, {"hidden_size", 2304}, {"intermediate_size", 9216}, {"num_hidden_layers", 26},
                    {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256},
                    {"tie_word_embeddings", true}, {"sliding_window", 4096}, {"sliding_window_pattern", 6}};
        case Family::llama4:
            return {{"vocab_size", 202048}, {"hidden_size", 5120}, {"intermediate_size", 8192},
                    {"intermediate_size_mlp", 16384}, {"num_hidden_layers", 48}, {"num_attention_heads", 40},
                    {"num_key_value_heads", 8}, {"head_dim", 128}, {"num_local_experts", 16}, {"num_experts_per_tok", 1},
                    {"interleave_moe_layer_step", 1}, {"attention_chunk_size", 8192}, {"no_rope_layer_interval", 4}};
        default: return json::object();
    }
}

class Hf {
public:
    Hf(const nlohmann::json& j, std::string field) : j_(j), field_(std::move(field)) {}
    bool has(const char* k) const { return j_.contains(k) && !j_.at(k).is_null(); }
    int64_t integer(const char* k) const {
        if (!has(k)) throw ConfigError(field_ + "." + k, "a value: this Hugging Face config lacks it");
        return value(k);
    }
    int64_t integer(const char* k, int64_t fallback) const { return has(k) ? value(k) : fallback; }
    /// A layer count, step or index: within [lo, hi], named by its key where it is not.
    int64_t bounded(const char* k, int64_t lo, int64_t hi) const { return within(k, integer(k), lo, hi); }
    int64_t bounded(const char* k, int64_t fallback, int64_t lo, int64_t hi) const {
        return within(k, integer(k, fallback), lo, hi);
    }
    bool boolean(const char* k, bool fallback) const {
        if (!has(k)) return fallback;
        if (!j_.at(k).is_boolean()) throw ConfigError(field_ + "." + k, "true or false");
        return j_.at(k).get<bool>();
    }

private:
    int64_t within(const char* k, int64_t v, int64_t lo, int64_t hi) const {
        if (v < lo || v > hi) throw ConfigError(field_ + "." + k, fmt::format("an integer in [{}, {}], got {}", lo, hi, v));
        return v;
    }
    int64_t value(const char* k) const {
        const auto& v = j_.at(k);
        if (!v.is_number_integer()) throw ConfigError(field_ + "." + k, "an integer, got " + describe_json(v));
        return v.get<int64_t>();
    }
    const nlohmann::json& j_;
    std::string field_;
};

}  // namespace

std::string hf_supported_architectures() {
    // Grouped by suffix so the whole list fits an error line: "...ForCausalLM: Llama, ...; ...ForConditionalGeneration: ...".
    std::string s;
    for (const char* suffix : {"ForCausalLM", "ForConditionalGeneration"}) {
        std::string names;
        for (const Known& k : kKnown) {
            const std::string a = k.architecture;
            if (a.ends_with(suffix)) names += (names.empty() ? "" : ", ") + a.substr(0, a.size() - std::string(suffix).size());
        }
        s += fmt::format("{}...{}: {}", s.empty() ? "" : "; ", suffix, names);
    }
    return s;
}

bool looks_like_hf_config(const nlohmann::json& j) {
    return j.is_object() && (j.contains("architectures") || j.contains("model_type"));
}

namespace {

// The attention each layer runs: transformers' layer_types where the config has it ("full_attention",
// "sliding_attention", Llama 4's "chunked_attention"); the count of windowed layers and their kind.
struct Windows {
    int64_t layers = 0;
    WindowKind kind = WindowKind::sliding;
};

Windows windows_from_layer_types(const json& types, int64_t layers, const std::string& field) {
    if (!types.is_array() || static_cast<int64_t>(types.size()) != layers)
        throw ConfigError(field, fmt::format("an array of {} layer types (num_hidden_layers)", layers));
    Windows w;
    int64_t sliding = 0, chunked = 0;
    for (const json& t : types) {
        if (t == "sliding_attention") ++sliding;
        else if (t == "chunked_attention") ++chunked;
        else if (t != "full_attention")
            throw ConfigError(field, "\"full_attention\", \"sliding_attention\" or \"chunked_attention\" per layer, got " +
                                         describe_json(t));
    }
    if (sliding > 0 && chunked > 0) throw ConfigError(field, "sliding or chunked windows, not both");
    w.layers = sliding + chunked;
    w.kind = chunked > 0 ? WindowKind::chunked : WindowKind::sliding;
    return w;
}

}  // namespace

ModelSpec model_from_hf_config(const nlohmann::json& top, const std::string& top_field, const std::string& unnamed) {
    if (!top.is_object()) throw ConfigError(top_field, "a Hugging Face config object");
    const Known* known = nullptr;
    std::string seen;
    if (top.contains("architectures") && top["architectures"].is_array())
        for (const auto& a : top["architectures"])
            if (a.is_string()) {
                seen = a.get<std::string>();
                for (const Known& k : kKnown)
                    if (seen == k.architecture) known = &k;
            }
    if (!known && top.contains("model_type") && top["model_type"].is_string()) {
        if (seen.empty()) seen = top["model_type"].get<std::string>();
        for (const Known& k : kKnown)
            if (top["model_type"].get<std::string>() == k.model_type) known = &k;
    }
    if (!known)
        throw ConfigError(top_field + ".architectures",
                          fmt::format("a supported architecture, got \"{}\"; supported: {}", seen.empty() ? "none" : seen,
                                      hf_supported_architectures()));
    // A multimodal config (Gemma 3, Llama 4) holds its language model's as text_config: that model is
    // planned, its name says so, and the vision encoder is not counted.
    std::string field = top_field;
    const json* text = &top;
    if (known->text_config) {
        if (!top.contains("text_config") || !top["text_config"].is_object())
            throw ConfigError(top_field + ".text_config", "an object: the language model's config");
        text = &top["text_config"];
        field = top_field + ".text_config";
    }
    json j = class_defaults(known->family);
    for (const auto& [k, v] : text->items()) j[k] = v;
    const Family family = known->family;
    const Hf h(j, field);
    ModelSpec m;
    m.name = unnamed.empty() || top.contains("_name_or_path") ? known->model_type : unnamed;
    if (top.contains("_name_or_path") && top["_name_or_path"].is_string() && !top["_name_or_path"].get<std::string>().empty())
        m.name = top["_name_or_path"].get<std::string>();
    if (known->text_config) m.name += " (text model)";
    m.layers = h.bounded("num_hidden_layers", 1, 100'000);  // before the layer patterns below count with it
    m.hidden = h.integer("hidden_size");
    m.heads = h.integer("num_attention_heads");
    m.kv_heads = h.integer("num_key_value_heads", m.heads);
    m.head_dim = h.integer("head_dim", m.heads > 0 ? m.hidden / m.heads : 0);
    m.vocab = h.integer("vocab_size");
    m.ffn_hidden = h.integer("intermediate_size");
    m.tied_embeddings = h.boolean("tie_word_embeddings", false);
    m.mlp = MlpKind::swiglu;
    m.norm = NormKind::rmsnorm;
    m.qkv_bias = h.boolean("attention_bias", false);
    // MoE layer i by transformers' rules, as MoeSpec's pattern (dense_layers is the first MoE layer, then
    // every layer_freq-th): Qwen's (i + 1) % decoder_sparse_step == 0 outside mlp_only_layers (a leading run
    // here); DeepSeek's i >= first_k_dense_replace and i % moe_layer_freq == 0; Llama 4's below.
    auto qwen_moe = [&](int64_t ffn, int64_t shared_ffn) {
        int64_t dense = 0;
        if (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array()) {
            for (const auto& x : j["mlp_only_layers"])
                if (!x.is_number_integer() || x.get<int64_t>() != dense)
                    throw ConfigError(field + ".mlp_only_layers", "dense layers forming a leading run 0, 1, 2, ...");
                else
                    ++dense;
        }
        const int64_t step = h.bounded("decoder_sparse_step", 1, 1, m.layers);
        const int64_t first = (dense + step) / step * step - 1;  // the first i >= dense with (i + 1) % step == 0
        if (first >= m.layers)
            throw ConfigError(field + ".mlp_only_layers", fmt::format("dense layers that leave a MoE layer among the {}", m.layers));
        int64_t shared = 0;
        if (shared_ffn > 0) {
            if (shared_ffn % ffn != 0)
                throw ConfigError(field + ".shared_expert_intermediate_size",
                                  fmt::format("a multiple of moe_intermediate_size ({}), got {}", ffn, shared_ffn));
            shared = shared_ffn / ffn;
        }
        m.moe = MoeSpec{h.integer("num_experts"), h.integer("num_experts_per_tok"), shared, ffn, first, step};
    };
    switch (family) {
        case Family::llama:
        case Family::mistral:
        case Family::phi3: break;
        case Family::qwen2: m.qkv_bias = true; break;  // Qwen2 projects q, k, v with bias
        case Family::qwen3: m.qk_norm = true; break;
        case Family::mixtral:
            m.moe = MoeSpec{h.integer("num_local_experts"), h.integer("num_experts_per_tok"), 0, m.ffn_hidden, 0, 1};
            break;
        case Family::qwen2_moe:  // biased q, k, v; a shared expert of its own width (its sigmoid gate, h weights, not counted)
            m.qkv_bias = true;
            qwen_moe(h.integer("moe_intermediate_size"), h.integer("shared_expert_intermediate_size", 0));
            break;
        case Family::qwen3_moe:
            m.qk_norm = true;
            qwen_moe(h.integer("moe_intermediate_size"), 0);
            break;
        case Family::deepseek_v3: {
            m.attention = AttentionKind::mla;
            m.mla = MlaSpec{h.integer("q_lora_rank", 0), h.integer("kv_lora_rank"), h.integer("qk_nope_head_dim"),
                            h.integer("qk_rope_head_dim"), h.integer("v_head_dim")};
            m.head_dim = m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim;
            const int64_t k = h.bounded("first_k_dense_replace", 0, 0, m.layers - 1);
            const int64_t f = h.bounded("moe_layer_freq", 1, 1, m.layers);
            // MoeSpec's dense_layers is the first MoE layer, i >= k with i % f == 0; then every f-th.
            m.moe = MoeSpec{h.integer("n_routed_experts"), h.integer("num_experts_per_tok"),
                            h.integer("n_shared_experts", 0), h.integer("moe_intermediate_size"), (k + f - 1) / f * f, f};
            // Node-limited routing: the experts fall in n_group groups (one per node in training) and a
            // token uses the topk_group best of them.
            if (h.integer("n_group", 1) > 1) {
                m.moe->router_groups = h.integer("n_group");
                m.moe->group_topk = h.integer("topk_group");
            }
            break;
        }
        case Family::gpt_oss:  // biases on attention (attention_bias), experts and router; a sink per head
            m.linear_bias = h.boolean("attention_bias", true);
            m.qkv_bias = false;
            m.attention_sinks = true;
            m.moe = MoeSpec{h.integer("num_local_experts"), h.integer("num_experts_per_tok"), 0, m.ffn_hidden, 0, 1};
            break;
        case Family::gemma:  // gated tanh-GELU MLP (hidden_activation gelu_pytorch_tanh)
            m.mlp = MlpKind::geglu;
            break;
        case Family::gemma2:  // and a norm after attention and after the MLP
            m.mlp = MlpKind::geglu;
            m.sandwich_norms = true;
            break;
        case Family::gemma3:  // and per-head q/k norms
            m.mlp = MlpKind::geglu;
            m.sandwich_norms = true;
            m.qk_norm = true;
            break;
        case Family::llama4: {
            // Routed experts and one shared expert of intermediate_size; dense layers of intermediate_size_mlp;
            // MoE layers moe_layers, else every interleave_moe_layer_step-th from step − 1. Its q/k norms
            // are L2 norms without weights (use_qk_norm): no parameters.
            m.ffn_hidden = h.integer("intermediate_size_mlp");
            int64_t first = 0, freq = 1;
            if (j.contains("moe_layers") && !j["moe_layers"].is_null()) {
                const json& ml = j["moe_layers"];
                const std::string at = field + ".moe_layers";
                if (!ml.is_array() || ml.empty()) throw ConfigError(at, "a non-empty array of layer indices");
                for (const json& x : ml)
                    if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= m.layers)
                        throw ConfigError(at, fmt::format("layer indices in [0, {}), got {}", m.layers, describe_json(x)));
                first = ml[0].get<int64_t>();
                freq = ml.size() > 1 ? ml[1].get<int64_t>() - first : m.layers - first;
                bool even = freq >= 1;  // every index is in [0, layers), checked above
                for (size_t i = 0; even && i < ml.size(); ++i) even = ml[i].get<int64_t>() == first + static_cast<int64_t>(i) * freq;
                if (!even || ml.back().get<int64_t>() + freq < m.layers)
                    throw ConfigError(at, "evenly spaced layers to the last (i, i + f, i + 2f, ...), as shardplan places MoE layers");
            } else {
                const int64_t step = h.bounded("interleave_moe_layer_step", 1, 1, m.layers);
                first = step - 1;
                freq = step;
            }
            m.moe = MoeSpec{h.integer("num_local_experts"), h.integer("num_experts_per_tok"), 1,
                            h.integer("intermediate_size"), first, freq};
            break;
        }
    }
    // Windowed attention: transformers' layer_types where the config has it, else each family's older keys
    // (Mistral's and Phi-3's sliding_window on every layer; Qwen2/3's use_sliding_window from
    // max_window_layers on; gpt-oss alternating from the first layer; Gemma 2 on even layers and Gemma 3
    // on all but every sliding_window_pattern-th; Llama 4 chunks attention_chunk_size long on its RoPE
    // layers, all but every no_rope_layer_interval-th, or those no_rope_layers marks 1).
    const bool chunks = family == Family::llama4;
    const int64_t window = chunks ? h.integer("attention_chunk_size", 0) : h.integer("sliding_window", 0);
    Windows w;
    if (j.contains("layer_types") && !j["layer_types"].is_null()) {
        w = windows_from_layer_types(j["layer_types"], m.layers, field + ".layer_types");
    } else if (window > 0) {
        switch (family) {
            case Family::mistral:
            case Family::mixtral:
            case Family::phi3: w.layers = m.layers; break;
            case Family::qwen2:
            case Family::qwen3:
            case Family::qwen3_moe:
            case Family::qwen2_moe:
                if (h.boolean("use_sliding_window", false))
                    w.layers = std::max<int64_t>(0, m.layers - h.integer("max_window_layers", m.layers));
                break;
            case Family::gpt_oss:
            case Family::gemma2: w.layers = (m.layers + 1) / 2; break;
            case Family::gemma3: {
                const int64_t pattern = h.bounded("sliding_window_pattern", 6, 1, m.layers + 1);
                w.layers = m.layers - m.layers / pattern;
                break;
            }
            case Family::llama4: {
                w.kind = WindowKind::chunked;
                if (j.contains("no_rope_layers") && !j["no_rope_layers"].is_null() && !j["no_rope_layers"].empty()) {
                    const json& nr = j["no_rope_layers"];
                    if (!nr.is_array() || static_cast<int64_t>(nr.size()) < m.layers)
                        throw ConfigError(field + ".no_rope_layers", fmt::format("an array of at least {} 0s and 1s", m.layers));
                    for (int64_t i = 0; i < m.layers; ++i) {
                        if (nr[i] != 0 && nr[i] != 1)
                            throw ConfigError(field + ".no_rope_layers", "0 (NoPE, full attention) or 1 (RoPE, chunked), got " +
                                                                             describe_json(nr[i]));
                        w.layers += nr[i] == 1 ? 1 : 0;
                    }
                } else {
                    const int64_t interval = h.bounded("no_rope_layer_interval", 4, 1, m.layers + 1);
                    w.layers = m.layers - m.layers / interval;
                }
                break;
            }
            default: break;
        }
    }
    if (w.layers > 0) {
        if (window <= 0)
            throw ConfigError(field + (chunks ? ".attention_chunk_size" : ".sliding_window"),
                              "a positive integer where layer_types has windowed layers");
        if ((w.kind == WindowKind::chunked) != chunks)
            throw ConfigError(field + ".layer_types", chunks ? "chunked_attention or full_attention layers (Llama 4)"
                                                             : "sliding_attention or full_attention layers");
        m.sliding_window = window;
        m.window_layers = w.layers;
        m.window_kind = w.kind;
    }
    validate_model(m, top_field);
    return m;
}

}  // namespace shardplan
