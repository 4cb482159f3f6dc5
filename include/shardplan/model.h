/// ModelSpec: the architecture of a decoder-only transformer, dense or MoE, with GQA/MQA or MLA
/// attention. A plain value, validated once by validate_model(); every count below is a pure
/// function of it. Symbols follow docs/notation.md: L layers, h hidden, f ffn_hidden, a heads,
/// g kv_heads, d_h head_dim, V vocab, E experts, k top_k, f_e expert ffn.
///
///   ModelSpec m = preset_model("llama3-8b");
///   model_params_total(m);                 // 8,030,261,248
///   layer_params(m, /*moe=*/false).attn;    // q, k, v, o matrices of one layer
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "shardplan/enums.h"

namespace shardplan {

struct MlaSpec {
    int64_t q_lora_rank = 0;  // 0 = queries projected directly from h (no low-rank q)
    int64_t kv_lora_rank = 0;
    int64_t qk_nope_head_dim = 0;
    int64_t qk_rope_head_dim = 0;
    int64_t v_head_dim = 0;
};

struct MoeSpec {
    int64_t experts = 0;            // E routed experts per MoE layer
    int64_t top_k = 0;              // k experts each token is routed to
    int64_t shared_experts = 0;     // always-on experts, each of expert_ffn_hidden
    int64_t expert_ffn_hidden = 0;  // f_e
    int64_t dense_layers = 0;       // leading layers with a dense MLP of ffn_hidden
    int64_t layer_freq = 1;         // after the dense ones, layer i is MoE when (i - dense_layers) % freq == 0
    /// Group-limited (node-limited) routing: the experts form router_groups groups and a token's k
    /// experts come from its group_topk best (DeepSeek-V3: 4 of 8, one group per node in training,
    /// report §2.1.2; HF n_group / topk_group, Megatron --moe-router-num-groups / -group-topk). 1 / 0: none.
    int64_t router_groups = 1;
    int64_t group_topk = 0;
};

struct ModelSpec {
    std::string name = "custom";
    int64_t layers = 0;      // L
    int64_t hidden = 0;      // h
    int64_t ffn_hidden = 0;  // f (dense MLP intermediate size)
    int64_t heads = 0;       // a
    int64_t kv_heads = 0;    // g (g == a: MHA, g == 1: MQA)
    int64_t head_dim = 0;    // d_h
    int64_t vocab = 0;       // V
    MlpKind mlp = MlpKind::swiglu;
    NormKind norm = NormKind::rmsnorm;
    AttentionKind attention = AttentionKind::mha;
    bool tied_embeddings = false;
    bool linear_bias = false;  // biases on every linear layer (GPT-2/3 style)
    bool qkv_bias = false;     // biases on q, k, v only (Qwen2, gpt-oss)
    bool qk_norm = false;      // per-head RMSNorm on q and k (Qwen3)
    bool attention_sinks = false;  // one learned softmax logit per head and layer (gpt-oss)
    int64_t sliding_window = 0;    // w: keys a query sees at most in a windowed layer (0: every layer full causal)
    int64_t window_layers = 0;     // how many of the layers are windowed (gpt-oss: every second; Mistral 7B v0.1: all)
    WindowKind window_kind = WindowKind::sliding;  // chunked: blocks of sliding_window tokens (Llama 4)
    bool sandwich_norms = false;   // a norm after attention and after the MLP too, four a layer (Gemma 2 and 3)
    std::optional<MlaSpec> mla;
    std::optional<MoeSpec> moe;
};

/// Parameters of one transformer layer, split by how parallelism shards them.
struct LayerParams {
    int64_t attn = 0;        // attention matrices (+ their biases): sharded by tp
    int64_t mlp = 0;         // dense MLP, or the shared experts of a MoE layer: sharded by tp
    int64_t router = 0;      // MoE gate (E x h): replicated across tp
    int64_t experts = 0;     // all routed experts of the layer: sharded by ep x etp
    int64_t replicated = 0;  // norms (and row-parallel biases): replicated across tp
    int64_t total() const { return attn + mlp + router + experts + replicated; }
};

LayerParams layer_params(const ModelSpec& m, bool moe_layer);
/// A gated MLP (SwiGLU, GeGLU): three matrices, the gate's activation times the up projection.
inline bool gated_mlp(const ModelSpec& m) { return m.mlp == MlpKind::swiglu || m.mlp == MlpKind::geglu; }
/// Parameters of one routed expert (its MLP of expert_ffn_hidden).
int64_t expert_params(const ModelSpec& m);
bool is_moe_layer(const ModelSpec& m, int64_t layer_index);
/// Number of MoE layers among layers [first, last).
int64_t moe_layers_in(const ModelSpec& m, int64_t first, int64_t last);
int64_t embedding_params(const ModelSpec& m);  // V x h (input embedding)
int64_t head_params(const ModelSpec& m);       // V x h if untied, else 0; plus the final norm

int64_t model_params_total(const ModelSpec& m);
/// Parameters a token's matrix products use. Dense: every parameter (the usual convention). MoE: every
/// layer's non-expert parameters, its top-k routed experts and the LM head, but not the input embedding,
/// a table lookup (OpenAI's gpt-oss model card: 5.13 B of 116.83 B; docs/model.md §1).
int64_t model_params_active(const ModelSpec& m);

/// Query width a * d_h (MLA: a * (nope + rope)), value width, key width per kv group.
int64_t q_width(const ModelSpec& m);
int64_t k_width(const ModelSpec& m);  // total K columns: g * d_h (MLA: a * (nope + rope))
int64_t v_width(const ModelSpec& m);  // total V columns: g * d_h (MLA: a * v_head_dim)
/// Width of the attention output, a · d_v: the scores × V product runs over every query head (grouped-
/// query attention shares V between heads, not the product). Attention FLOPs use q_width + this.
int64_t attn_out_width(const ModelSpec& m);

/// Throws ConfigError naming the field ("model.heads") on any inconsistent or non-positive value.
void validate_model(const ModelSpec& m, const std::string& path = "model");

}  // namespace shardplan
