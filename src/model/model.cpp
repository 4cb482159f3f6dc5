// Parameter counts of a decoder-only transformer. Matrices are counted as in the Hugging Face
// implementations of each family (docs/model.md §1): no bias unless the family has one.
#include "shardplan/model.h"

#include <fmt/format.h>

#include "shardplan/error.h"

namespace shardplan {

namespace {

int64_t norm_params(const ModelSpec& m) { return m.norm == NormKind::layernorm ? 2 * m.hidden : m.hidden; }

// Gated MLPs (SwiGLU) have three h x f matrices (gate, up, down); plain ones (GeLU, ReLU²) two.
int64_t mlp_matrices(const ModelSpec& m, int64_t ffn) {
    const int64_t n = gated_mlp(m) ? 3 : 2;
    int64_t p = n * m.hidden * ffn;
    if (m.linear_bias) p += (n - 1) * ffn + m.hidden;
    return p;
}

int64_t attention_matrices(const ModelSpec& m) {
    const int64_t h = m.hidden;
    if (m.attention == AttentionKind::mla && m.mla) {
        const MlaSpec& x = *m.mla;
        const int64_t a = m.heads;
        const int64_t qk = x.qk_nope_head_dim + x.qk_rope_head_dim;
        int64_t q = x.q_lora_rank > 0 ? h * x.q_lora_rank + x.q_lora_rank + x.q_lora_rank * a * qk : h * a * qk;
        int64_t kv = h * (x.kv_lora_rank + x.qk_rope_head_dim) + x.kv_lora_rank +
                     x.kv_lora_rank * a * (x.qk_nope_head_dim + x.v_head_dim);
        int64_t o = a * x.v_head_dim * h;
        return q + kv + o + (m.linear_bias ? h : 0);
    }
    const int64_t qd = m.heads * m.head_dim, kvd = m.kv_heads * m.head_dim;
    int64_t p = h * qd + 2 * h * kvd + qd * h;
    if (m.qkv_bias || m.linear_bias) p += qd + 2 * kvd;
    if (m.linear_bias) p += h;
    if (m.qk_norm) p += 2 * m.head_dim;
    if (m.attention_sinks) p += m.heads;
    return p;
}

}  // namespace

int64_t expert_params(const ModelSpec& m) { return m.moe ? mlp_matrices(m, m.moe->expert_ffn_hidden) : 0; }

bool is_moe_layer(const ModelSpec& m, int64_t i) {
    if (!m.moe || i < m.moe->dense_layers) return false;
    return (i - m.moe->dense_layers) % m.moe->layer_freq == 0;
}

int64_t moe_layers_in(const ModelSpec& m, int64_t first, int64_t last) {
    if (!m.moe || last <= first) return 0;
    // Count i in [max(first, d), last) with (i - d) % freq == 0, in closed form.
    const int64_t d = m.moe->dense_layers, f = m.moe->layer_freq;
    auto upto = [&](int64_t end) -> int64_t { return end <= d ? 0 : (end - d + f - 1) / f; };  // i in [d, end)
    return upto(last) - upto(first);
}

LayerParams layer_params(const ModelSpec& m, bool moe_layer) {
    LayerParams p;
    p.attn = attention_matrices(m);
    p.replicated = (m.sandwich_norms ? 4 : 2) * norm_params(m);
    if (moe_layer && m.moe) {
        p.mlp = m.moe->shared_experts > 0 ? mlp_matrices(m, m.moe->shared_experts * m.moe->expert_ffn_hidden) : 0;
        p.router = m.moe->experts * (m.hidden + (m.linear_bias ? 1 : 0));
        p.experts = m.moe->experts * expert_params(m);
    } else {
        p.mlp = mlp_matrices(m, m.ffn_hidden);
    }
    return p;
}

int64_t embedding_params(const ModelSpec& m) { return m.vocab * m.hidden; }
int64_t head_params(const ModelSpec& m) { return (m.tied_embeddings ? 0 : m.vocab * m.hidden) + norm_params(m); }

int64_t model_params_total(const ModelSpec& m) {
    const int64_t n_moe = moe_layers_in(m, 0, m.layers);
    const int64_t n_dense = m.layers - n_moe;
    int64_t total = n_dense * layer_params(m, false).total() + embedding_params(m) + head_params(m);
    if (n_moe > 0) total += n_moe * layer_params(m, true).total();
    return total;
}

int64_t model_params_active(const ModelSpec& m) {
    if (!m.moe) return model_params_total(m);
    const int64_t n_moe = moe_layers_in(m, 0, m.layers);
    const LayerParams moe = layer_params(m, true);
    const int64_t moe_active = moe.total() - moe.experts + m.moe->top_k * expert_params(m);
    // The input embedding is a lookup; a tied one is still the LM head's matrix.
    return (m.layers - n_moe) * layer_params(m, false).total() + n_moe * moe_active +
           (m.tied_embeddings ? embedding_params(m) : 0) + head_params(m);
}

int64_t q_width(const ModelSpec& m) {
    if (m.attention == AttentionKind::mla && m.mla) return m.heads * (m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim);
    return m.heads * m.head_dim;
}
int64_t k_width(const ModelSpec& m) {
    if (m.attention == AttentionKind::mla && m.mla) return q_width(m);
    return m.kv_heads * m.head_dim;
}
int64_t v_width(const ModelSpec& m) {
    if (m.attention == AttentionKind::mla && m.mla) return m.heads * m.mla->v_head_dim;
    return m.kv_heads * m.head_dim;
}
int64_t attn_out_width(const ModelSpec& m) {
    if (m.attention == AttentionKind::mla && m.mla) return m.heads * m.mla->v_head_dim;
    return m.heads * m.head_dim;
}

namespace {
void require_positive(int64_t v, const std::string& field) {
    if (v <= 0) throw ConfigError(field, fmt::format("a positive integer, got {}", v));
}
void require_range(int64_t v, int64_t lo, int64_t hi, const std::string& field) {
    if (v < lo || v > hi) throw ConfigError(field, fmt::format("an integer in [{}, {}], got {}", lo, hi, v));
}
}  // namespace

void validate_model(const ModelSpec& m, const std::string& path) {
    // Bounds keep every product below 2^63: 10^13-parameter models are fine, 10^9-wide layers are not.
    constexpr int64_t kMaxDim = 10'000'000;
    require_range(m.layers, 1, 100'000, path + ".layers");
    require_range(m.hidden, 1, kMaxDim, path + ".hidden");
    require_range(m.ffn_hidden, 1, kMaxDim, path + ".ffn_hidden");
    require_range(m.heads, 1, 1'000'000, path + ".heads");
    require_range(m.kv_heads, 1, 1'000'000, path + ".kv_heads");
    require_range(m.head_dim, 1, 1'000'000, path + ".head_dim");
    require_range(m.vocab, 1, 100'000'000, path + ".vocab");
    if (m.heads % m.kv_heads != 0)
        throw ConfigError(path + ".kv_heads", fmt::format("a divisor of heads ({}), got {}", m.heads, m.kv_heads));
    require_range(m.sliding_window, 0, 1'000'000'000, path + ".sliding_window");
    require_range(m.window_layers, 0, m.layers, path + ".window_layers");
    if (m.window_layers > 0 && m.sliding_window == 0)
        throw ConfigError(path + ".window_layers", fmt::format("0 without a sliding_window, got {}", m.window_layers));
    if (m.window_kind == WindowKind::chunked && m.sliding_window == 0)
        throw ConfigError(path + ".window_kind", "\"sliding\" without a sliding_window (the chunk's length)");
    if (m.attention == AttentionKind::mla) {
        if (!m.mla) throw ConfigError(path + ".mla", "an object with the MLA ranks when attention is \"mla\"");
        const MlaSpec& x = *m.mla;
        if (x.q_lora_rank < 0) throw ConfigError(path + ".mla.q_lora_rank", "a non-negative integer or null");
        require_range(x.kv_lora_rank, 1, kMaxDim, path + ".mla.kv_lora_rank");
        require_range(x.qk_nope_head_dim, 1, 1'000'000, path + ".mla.qk_nope_head_dim");
        require_range(x.qk_rope_head_dim, 0, 1'000'000, path + ".mla.qk_rope_head_dim");
        require_range(x.v_head_dim, 1, 1'000'000, path + ".mla.v_head_dim");
    }
    if (m.moe) {
        const MoeSpec& e = *m.moe;
        require_range(e.experts, 1, 100'000'000, path + ".moe.experts");
        require_range(e.top_k, 1, e.experts, path + ".moe.top_k");
        require_range(e.shared_experts, 0, 1'000'000, path + ".moe.shared_experts");
        require_range(e.expert_ffn_hidden, 1, kMaxDim, path + ".moe.expert_ffn_hidden");
        require_range(e.dense_layers, 0, m.layers - 1, path + ".moe.dense_layers");
        require_range(e.layer_freq, 1, m.layers, path + ".moe.layer_freq");
        require_range(e.router_groups, 1, e.experts, path + ".moe.router_groups");
        if (e.experts % e.router_groups != 0)
            throw ConfigError(path + ".moe.router_groups", fmt::format("a divisor of experts ({}), got {}", e.experts, e.router_groups));
        require_range(e.group_topk, 0, e.router_groups, path + ".moe.group_topk");
    }
    // 10^13 parameters and beyond compute in int64; reject only what would overflow it.
    const double h = static_cast<double>(m.hidden);
    double mla = 0;  // MLA up-projections: their products are not bounded by the widths above
    if (m.attention == AttentionKind::mla && m.mla) {
        const MlaSpec& x = *m.mla;
        const double a = static_cast<double>(m.heads);
        mla = double(x.q_lora_rank) * (h + a * double(x.qk_nope_head_dim + x.qk_rope_head_dim)) +
              double(x.kv_lora_rank) * a * double(x.qk_nope_head_dim + x.v_head_dim) +
              h * double(x.kv_lora_rank + x.qk_rope_head_dim) + a * double(x.v_head_dim) * h;
    }
    const double approx = static_cast<double>(m.layers) *
                              (4.0 * h * (double(m.heads) * double(m.head_dim) + double(m.kv_heads) * double(m.head_dim)) +
                               mla + 3.0 * h * double(m.ffn_hidden) +
                               (m.moe ? 3.0 * h * double(m.moe->expert_ffn_hidden) *
                                            (double(m.moe->experts) + double(m.moe->shared_experts)) +
                                            double(m.moe->experts) * h
                                      : 0.0)) +
                          2.0 * static_cast<double>(m.vocab) * h;
    if (approx > 1e17) throw ConfigError(path, fmt::format("at most 10^17 parameters, got about {:.3g}", approx));
    require_positive(m.layers, path + ".layers");
}

}  // namespace shardplan
