// Hugging Face config.json import. Key names follow transformers' configuration_<family>.py classes.
#include "shardplan/hf.h"

#include <algorithm>

#include <fmt/format.h>

#include "shardplan/error.h"
#include "shardplan/io.h"

namespace shardplan {

namespace {

enum class Family { llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss };

struct Known {
    const char* architecture;
    const char* model_type;
    Family family;
};

constexpr Known kKnown[] = {
    {"LlamaForCausalLM", "llama", Family::llama},
    {"MistralForCausalLM", "mistral", Family::mistral},
    {"MixtralForCausalLM", "mixtral", Family::mixtral},
    {"Qwen2ForCausalLM", "qwen2", Family::qwen2},
    {"Qwen3ForCausalLM", "qwen3", Family::qwen3},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Family::qwen3_moe},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::deepseek_v3},
    {"GptOssForCausalLM", "gpt_oss", Family::gpt_oss},
};

class Hf {
public:
    Hf(const nlohmann::json& j, std::string field) : j_(j), field_(std::move(field)) {}
    bool has(const char* k) const { return j_.contains(k) && !j_.at(k).is_null(); }
    int64_t integer(const char* k) const {
        if (!has(k)) throw ConfigError(field_ + "." + k, "a value: this Hugging Face config lacks it");
        return value(k);
    }
    int64_t integer(const char* k, int64_t fallback) const { return has(k) ? value(k) : fallback; }
    bool boolean(const char* k, bool fallback) const {
        if (!has(k)) return fallback;
        if (!j_.at(k).is_boolean()) throw ConfigError(field_ + "." + k, "true or false");
        return j_.at(k).get<bool>();
    }

private:
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
    std::string s;
    for (const Known& k : kKnown) s += (s.empty() ? "" : ", ") + std::string(k.architecture);
    return s;
}

bool looks_like_hf_config(const nlohmann::json& j) {
    return j.is_object() && (j.contains("architectures") || j.contains("model_type"));
}

ModelSpec model_from_hf_config(const nlohmann::json& j, const std::string& field) {
    if (!j.is_object()) throw ConfigError(field, "a Hugging Face config object");
    const Known* known = nullptr;
    std::string seen;
    if (j.contains("architectures") && j["architectures"].is_array())
        for (const auto& a : j["architectures"])
            if (a.is_string()) {
                seen = a.get<std::string>();
                for (const Known& k : kKnown)
                    if (seen == k.architecture) known = &k;
            }
    if (!known && j.contains("model_type") && j["model_type"].is_string()) {
        if (seen.empty()) seen = j["model_type"].get<std::string>();
        for (const Known& k : kKnown)
            if (j["model_type"].get<std::string>() == k.model_type) known = &k;
    }
    if (!known)
        throw ConfigError(field + ".architectures",
                          fmt::format("one of {}, got \"{}\"", hf_supported_architectures(), seen.empty() ? "none" : seen));
    const Hf h(j, field);
    ModelSpec m;
    m.name = known->model_type;
    if (j.contains("_name_or_path") && j["_name_or_path"].is_string() && !j["_name_or_path"].get<std::string>().empty())
        m.name = j["_name_or_path"].get<std::string>();
    m.layers = h.integer("num_hidden_layers");
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
    switch (known->family) {
        case Family::llama:
        case Family::mistral: break;
        case Family::qwen2: m.qkv_bias = true; break;  // Qwen2 projects q, k, v with bias
        case Family::qwen3: m.qk_norm = true; break;
        case Family::mixtral:
            m.moe = MoeSpec{h.integer("num_local_experts"), h.integer("num_experts_per_tok"), 0, m.ffn_hidden, 0, 1};
            break;
        case Family::qwen3_moe: {
            m.qk_norm = true;
            int64_t dense = 0;
            if (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array()) {
                // Only a leading run of dense layers maps onto shardplan's MoE pattern.
                for (const auto& x : j["mlp_only_layers"])
                    if (!x.is_number_integer() || x.get<int64_t>() != dense)
                        throw ConfigError(field + ".mlp_only_layers", "dense layers forming a leading run 0, 1, 2, ...");
                    else
                        ++dense;
            }
            m.moe = MoeSpec{h.integer("num_experts"), h.integer("num_experts_per_tok"), 0,
                            h.integer("moe_intermediate_size"), dense, h.integer("decoder_sparse_step", 1)};
            break;
        }
        case Family::deepseek_v3: {
            m.attention = AttentionKind::mla;
            m.mla = MlaSpec{h.integer("q_lora_rank", 0), h.integer("kv_lora_rank"), h.integer("qk_nope_head_dim"),
                            h.integer("qk_rope_head_dim"), h.integer("v_head_dim")};
            m.head_dim = m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim;
            m.moe = MoeSpec{h.integer("n_routed_experts"), h.integer("num_experts_per_tok"),
                            h.integer("n_shared_experts", 0), h.integer("moe_intermediate_size"),
                            h.integer("first_k_dense_replace", 0), h.integer("moe_layer_freq", 1)};
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
    }
    // Sliding-window attention: transformers' layer_types where the config has it, else each family's older
    // keys (Mistral's sliding_window on every layer; Qwen2/3's use_sliding_window from max_window_layers on;
    // gpt-oss alternating, from the first layer).
    const int64_t window = h.integer("sliding_window", 0);
    if (j.contains("layer_types") && !j["layer_types"].is_null()) {
        const json& types = j["layer_types"];
        if (!types.is_array() || static_cast<int64_t>(types.size()) != m.layers)
            throw ConfigError(field + ".layer_types", fmt::format("an array of {} layer types (num_hidden_layers)", m.layers));
        int64_t windowed = 0;
        for (const json& t : types) {
            if (t == "sliding_attention") ++windowed;
            else if (t != "full_attention")
                throw ConfigError(field + ".layer_types", "\"full_attention\" or \"sliding_attention\" per layer, got " + describe_json(t));
        }
        if (windowed > 0) {
            if (window <= 0)
                throw ConfigError(field + ".sliding_window", "a positive integer where layer_types has sliding_attention");
            m.sliding_window = window;
            m.window_layers = windowed;
        }
    } else if (window > 0) {
        switch (known->family) {
            case Family::mistral:
            case Family::mixtral:
                m.sliding_window = window;
                m.window_layers = m.layers;
                break;
            case Family::qwen2:
            case Family::qwen3:
            case Family::qwen3_moe:
                if (h.boolean("use_sliding_window", false)) {
                    m.window_layers = std::max<int64_t>(0, m.layers - h.integer("max_window_layers", m.layers));
                    m.sliding_window = m.window_layers > 0 ? window : 0;
                }
                break;
            case Family::gpt_oss:
                m.sliding_window = window;
                m.window_layers = (m.layers + 1) / 2;
                break;
            default: break;
        }
    }
    validate_model(m, field);
    return m;
}

}  // namespace shardplan
