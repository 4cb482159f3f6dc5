// Per-layer FLOPs and roofline time on one GPU (docs/model.md §3-4). Formulas: Megatron-LM
// num_floating_point_operations (Narayanan et al. 2021, App.) generalised to GQA/MLA/MoE; PaLM App. B
// for model vs hardware FLOPs; GEMM efficiency curve fitted on published runs (docs/validation.md).
#include "shardplan/compute.h"

#include <algorithm>
#include <cmath>

#include "shardplan/hardware.h"
#include "shardplan/layout.h"
#include "shardplan/memory.h"
#include "shardplan/model.h"
#include "shardplan/topology.h"

namespace shardplan {

namespace {

constexpr double kAttnBwdFactor = 2.9;  // flash-attention backward: 2.5 × its forward FLOPs at 0.87 of its speed
constexpr double kUnfusedAttnBwdFactor = 2.0;  // the unfused core's: 4 GEMMs (dV, dP, dQ, dK) of its forward's 2 shapes
constexpr double kElemBytes = 2.0;      // bf16 activations
// A low-precision GEMM's input cast by a kernel of its own (Transformer Engine's Linear and GroupedLinear,
// torchao's Float8Linear): 2 bytes read and 1 written an element, in kElemBytes units. Its transposed copy
// for the weight gradient and the backward's casts of the output gradients are in the backward's 2 ×.
constexpr double kCastElems = 1.5;
bool quantizes(Precision p) { return is_fp8(p) || p == Precision::nvfp4; }

struct Gemms {
    double flops = 0;  // forward FLOPs
    double time_s = 0;
    double unaligned_s = 0;       // the part of time_s whose GEMMs' operand rows are not whole vectors
    double unaligned_width = 0;   // the first such N or K met, and the elements a vector holds in its precision
    double unaligned_multiple = 0;
    Gemms since(const Gemms& before) const { return {flops - before.flops, time_s - before.time_s}; }
    void add(const Gemms& o) {
        flops += o.flops;
        time_s += o.time_s;
        unaligned_s += o.unaligned_s;
        if (unaligned_width == 0) {
            unaligned_width = o.unaligned_width;
            unaligned_multiple = o.unaligned_multiple;
        }
    }
};

constexpr double kTile = 128.0;  // output tile edge of the large bf16/fp8 GEMM kernels (cuBLAS, CUTLASS)

// Elements of this precision in one 16-byte vector, as Tensor Core kernels load them (gemm_aligned): 8 in
// 16-bit, 16 in fp8, 32 in fp4.
double vector_elems(Precision p) { return is_fp8(p) ? 16.0 : p == Precision::nvfp4 ? 32.0 : 8.0; }
bool whole_vectors(Precision p, double d) { return std::fmod(d, vector_elems(p)) == 0.0; }

// Per-expert launches run side by side four at a time: Transformer Engine's GroupedLinear issues one
// cuBLAS GEMM per expert round-robin over its num_streams = 4 compute streams
// (nvte_multi_stream_cublas_gemm; transformer_engine/common/include/transformer_engine/gemm.h).
constexpr double kConcurrentGemms = 4.0;
// A layer's kernels, forward and backward, that the host time Efficiency::layer_overhead_s issues (its
// source: some 50 ops forward and twice that in autograd's backward, constants.cpp): one launch's share.
constexpr double kLayerKernels = 150.0;

// `count` GEMMs of one shape (a rank's experts) sharing the SMs' waves `together` at a time; `scale` < 1
// for GEMMs that run below a dense GEMM of the same shape (grouped expert GEMMs).
void add_gemm(Gemms& g, const ClusterSpec& c, Precision p, double M, double N, double K, double count = 1,
              double scale = 1.0, double together = 1.0) {
    if (M <= 0 || N <= 0 || K <= 0 || count <= 0) return;
    const double flops = 2.0 * M * N * K * count;
    g.flops += flops;
    const double eta = gemm_efficiency(c.gpu.eff, p, M, N, K, c.gpu.sms, std::min(count, together));
    const double t = flops / (c.gpu.peak_flops(p) * eta * scale);
    g.time_s += t;
    if (!gemm_aligned(p, N, K)) {
        g.unaligned_s += t;
        if (g.unaligned_width == 0) {
            g.unaligned_width = whole_vectors(p, N) ? K : N;
            g.unaligned_multiple = vector_elems(p);
        }
    }
}

// A GEMM whose N the framework pads to whole 16-byte vectors (the output layer's vocabulary: Megatron pads
// it to a multiple of 128·tp, --make-vocab-size-divisible-by) or that is too narrow for the check to mean
// anything (the router's few experts, a GEMV-like product): timed at the padded width, its FLOPs the model's.
void add_padded_gemm(Gemms& g, const ClusterSpec& c, Precision p, double M, double N, double K) {
    if (M <= 0 || N <= 0 || K <= 0) return;
    Gemms padded;
    add_gemm(padded, c, p, M, std::ceil(N / vector_elems(p)) * vector_elems(p), K);
    padded.flops = 2.0 * M * N * K;
    g.add(padded);
}

double mlp_width(const ModelSpec& m, double ffn) { return gated_mlp(m) ? 2.0 * ffn : ffn; }

}  // namespace

bool gemm_aligned(Precision p, double N, double K) {
    // Tensor Core kernels load their operands in 16-byte vectors along each operand's contiguous dimension:
    // K for the activations, N (or K, transposed) for the weights; the backward's two GEMMs have the same
    // two (cuBLAS documentation, "Tensor Core Usage"; CUTLASS's tensor-op kernels need 128-bit aligned
    // accesses). The token dimension M is never a leading dimension.
    return whole_vectors(p, N) && whole_vectors(p, K);
}

double gemm_efficiency(const Efficiency& e, Precision p, double M, double N, double K, int64_t sms, double groups) {
    double eta = e.gemm_16;
    if (is_fp8(p)) eta = e.gemm_8;
    if (p == Precision::nvfp4) eta = e.gemm_4;
    // An operand row that is not whole 16-byte vectors leaves the Tensor Cores' kernels: the GEMM runs at
    // the GPU's rate off them (docs/model.md §4).
    if (!gemm_aligned(p, N, K)) eta *= e.gemm_unaligned;
    const double d = std::min({M, N, K});
    // The time per FLOP is the tiles' compute, 1/u (partly empty tiles and last wave), plus the short side's
    // overhead, d_half/d (a GEMM with a short side reads its operands for little arithmetic): with u = 1
    // the roll-off d/(d + d_half). Their product counted the short side twice where tiles are partly
    // filled, and made a GEMM with more rows there faster: a MoE rank with 1.5 × the tokens ran its experts
    // in less time (docs/model.md §4).
    return std::max(1e-3, eta / (e.gemm_half_dim / d + 1.0 / tile_utilization(M, N, sms, groups)));
}

double tile_utilization(double M, double N, int64_t sms, double groups) {
    if (sms <= 0 || M <= 0 || N <= 0) return 1.0;
    // NVIDIA, "Matrix Multiplication Background User's Guide": the output is computed in tiles, a wave
    // of tiles per SM at a time; the last tile of each dimension and the last wave run partly empty.
    // `groups` GEMMs running together fill the waves together.
    const double g = std::max(1.0, groups);
    const double tiles = g * std::ceil(M / kTile) * std::ceil(N / kTile);
    const double waves = std::ceil(tiles / static_cast<double>(sms));
    return (g * M * N) / (waves * static_cast<double>(sms) * kTile * kTile);
}

// An attention kernel's speed by head dimension, relative to its speed at 128 (where `attn` is fitted):
// FlashAttention-3 paper (Shah et al. 2024) Fig. 5, H100 BF16 forward with the causal mask, 16k keys:
// FlashAttention-2 299, 335 and 298 TFLOP/s at head dimension 64, 128 and 256; cuDNN (Transformer Engine's
// fused attention) 388, 539 and 509. Between those, linear in log2 of the dimension; outside, the nearest.
double attention_head_dim_factor(AttentionKernel kernel, double head_dim) {
    const bool fused = kernel == AttentionKernel::fused;
    const double at64 = fused ? 388.0 / 539.0 : 299.0 / 335.0;
    const double at256 = fused ? 509.0 / 539.0 : 298.0 / 335.0;
    const double x = std::clamp(std::log2(std::max(head_dim, 1.0)), 6.0, 8.0);
    return x <= 7.0 ? at64 + (1.0 - at64) * (x - 6.0) : 1.0 + (at256 - 1.0) * (x - 7.0);
}

namespace {

// Flash attention's forward time for `flops` of its causal products at `keys` keys per row:
// FlashAttention-2's efficiency on H100 (attn), times its share of peak on this GPU over H100's (attn_gpu);
// a fused Hopper-native kernel (cuDNN, FlashAttention-3) runs attn_fused × faster; its speed by head
// dimension (the average of both products': MLA's query-key and value dimensions differ) as measured on
// H100 and taken for Blackwell's kernels of the same libraries, none being measured elsewhere (the A100
// runs at head dimension 64 and long sequences, MosaicML's, show no such loss).
double flash_core_s(const ModelSpec& m, const ClusterSpec& c, AttentionKernel kernel, double flops, double keys) {
    const double fused = kernel == AttentionKernel::fused ? c.gpu.eff.attn_fused : 1.0;
    const double head_dim = static_cast<double>(q_width(m) + attn_out_width(m)) / (2.0 * static_cast<double>(m.heads));
    const bool measured = c.gpu.generation == "hopper" || c.gpu.generation == "blackwell";
    const double f_d = measured ? attention_head_dim_factor(kernel, head_dim) : 1.0;
    const double eta = std::clamp(c.gpu.eff.attn * c.gpu.eff.attn_gpu * fused * f_d * keys / (keys + c.gpu.eff.attn_half_seq),
                                  1e-3, 0.95);
    return flops / (c.gpu.peak_16_flops * eta);
}

// What a windowed layer's causal products cover, as the sequence a full causal layer of the same work
// would have. Sliding: a row i sees min(i, w) keys, w − w(w − 1)/(2s) on average, against (s + 1)/2 ≈ s/2
// with no window; so 2w − w(w − 1)/s. Chunked: the s tokens fall in q = ⌊s/w⌋ blocks of w and one of
// r = s − q·w, each causal inside itself, so about (q·w² + r²)/(2s) keys a row; the span (q·w² + r²)/s, w
// where w divides s. Either is s where the window holds the whole sequence (or there is none).
double windowed_span(const ModelSpec& m, double s) {
    const double w = static_cast<double>(m.sliding_window);
    if (m.sliding_window <= 0 || w >= s) return s;
    if (m.window_kind == WindowKind::chunked) {
        const double q = std::floor(s / w), r = s - q * w;
        return (q * w * w + r * r) / s;
    }
    return 2.0 * w - w * (w - 1.0) / s;
}

// The share of the layers that attend to a window, L_w/L.
double window_share(const ModelSpec& m) { return static_cast<double>(m.window_layers) / static_cast<double>(m.layers); }

// The span of the model's mean layer: (L − L_w)·s + L_w·s_w over L (docs/model.md §3).
double mean_span(const ModelSpec& m, double s) {
    return (1.0 - window_share(m)) * s + window_share(m) * windowed_span(m, s);
}

// The unfused core's two products (Megatron's baddbmm for Q·Kᵀ, bmm for the probabilities times V): cuBLAS
// batched GEMMs, one per head of the micro-batch, over the whole s × s square — the causal mask is applied
// to the scores after the first, so no block is skipped (flash skips the masked half). Priced as GEMMs of
// their shapes, the `heads` filling the SMs' waves together; forward time.
Gemms unfused_core(const ModelSpec& m, const ClusterSpec& c, double heads, double queries, double keys) {
    Gemms core;
    const double d_qk = static_cast<double>(q_width(m)) / static_cast<double>(m.heads);
    const double d_v = static_cast<double>(attn_out_width(m)) / static_cast<double>(m.heads);
    add_gemm(core, c, Precision::bf16, queries, keys, d_qk, heads, 1.0, heads);
    add_gemm(core, c, Precision::bf16, queries, d_v, keys, heads, 1.0, heads);
    return core;
}

/// One layer's forward work as it accumulates: GEMMs, element-wise traffic, and what selective
/// recomputation replays of them in the backward, module by module (RecomputeModule).
struct LayerParts {
    const ModelSpec& m;
    const ClusterSpec& c;
    const Layout& l;
    double T, h, tp, sp;
    Gemms g, replay;
    double act_elems = 0;     // element-wise traffic, elements read + written (activation functions included)
    double replay_elems = 0;
    double expert_launches = 0;  // experts whose GEMMs the host launches one by one (ExpertGemms::per_expert)
    /// The GEMMs `add` makes; replayed too when `module` is recomputed.
    template <typename F>
    void module_gemms(bool replayed, F add) {
        const Gemms before = g;
        add();
        if (replayed) replay.add(g.since(before));
    }
    /// Element-wise traffic of `elems` elements read + written; replayed too when its module is recomputed.
    void elementwise(double elems, bool replayed) {
        act_elems += elems;
        if (replayed) replay_elems += elems;
    }
};

/// Attention projections (GEMMs), Megatron's column/row-parallel split over tp, and the rotary embedding.
void attention_projections(LayerParts& x) {
    const ModelSpec& m = x.m;
    const ClusterSpec& c = x.c;
    const Precision p = x.l.precision;
    const double T = x.T, h = x.h, tp = x.tp;
    const double qw = static_cast<double>(q_width(m)), kw = static_cast<double>(k_width(m)),
                 vw = static_cast<double>(v_width(m));
    if (m.attention == AttentionKind::mla && m.mla) {
        const MlaSpec& a = *m.mla;
        const double heads = static_cast<double>(m.heads);
        const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
        const double qin = a.q_lora_rank > 0 ? static_cast<double>(a.q_lora_rank) : h;
        const bool up = recomputes(x.l, RecomputeModule::mla_up_proj);
        if (a.q_lora_rank > 0) add_gemm(x.g, c, p, T, qin, h);  // down-projections are replicated across tp
        x.module_gemms(up, [&] { add_gemm(x.g, c, p, T, heads * qk / tp, qin); });
        add_gemm(x.g, c, p, T, static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim), h);
        x.module_gemms(up, [&] {
            add_gemm(x.g, c, p, T, heads * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim) / tp,
                     static_cast<double>(a.kv_lora_rank));
        });
        add_gemm(x.g, c, p, T, h, vw / tp);
        if (quantizes(p))  // the up-projections' latent inputs; the down-projections share the layer's input's cast
            x.elementwise(kCastElems * T * ((a.q_lora_rank > 0 ? qin : 0.0) + static_cast<double>(a.kv_lora_rank)), up);
    } else {
        const double kv_local = std::max(kw / tp, static_cast<double>(m.head_dim));  // kv heads replicate when g < tp
        add_gemm(x.g, c, p, T, qw / tp + 2.0 * kv_local, h);
        add_gemm(x.g, c, p, T, h, qw / tp);
        if (recomputes(x.l, RecomputeModule::every_second_gemm)) {  // K and the output projection again (memory.cpp)
            add_gemm(x.replay, c, p, T, kv_local, h);
            add_gemm(x.replay, c, p, T, h, qw / tp);
        }
    }
    x.act_elems += 2.0 * T * (qw + kw) / tp;  // rotary embedding on q and k (read + write)
}

/// One MLP's two GEMMs (gated: gate and up in the first) on `tokens`, and its activation function; `count`
/// experts' of them sharing the SMs' waves `together` at a time.
void mlp_gemms(LayerParts& x, double tokens, double ffn_local, double in_local, double count, double scale,
               bool replay_all, bool replay_act, double together = 1.0) {
    const Precision p = x.l.precision;
    x.module_gemms(replay_all, [&] {
        add_gemm(x.g, x.c, p, tokens, mlp_width(x.m, ffn_local), in_local, count, scale, together);
        add_gemm(x.g, x.c, p, tokens, in_local, ffn_local, count, scale, together);
    });
    x.elementwise(tokens * count * ffn_local * (gated_mlp(x.m) ? 3.0 : 2.0), replay_all || replay_act);
    if (quantizes(p))  // each GEMM's input cast to its 8- or 4-bit copy: x for the first, the activation for the second
        x.elementwise(kCastElems * tokens * count * (in_local + ffn_local), replay_all);
}

/// A pass of a layer whose kernels take `gpu_s` on the GPU and `host_s` to issue (docs/model.md §4): the
/// host's launches run ahead of the GPU, so only part of their time shows. All of it when the GPU's work
/// is short (it waits on each launch: vTrain's smallest A100 layers never beat 3.6 ms per layer and
/// micro-batch, recompute included); a share host/(host + gpu) of it as the work grows and the launch
/// queue fills, vanishing on large layers. A floor (the longer of the two) and a plain sum were tried
/// and fit worse (docs/validation.md, "The host's launch cost").
double with_host_s(double gpu_s, double host_s) {
    return host_s > 0 ? gpu_s + host_s * host_s / (host_s + gpu_s) : gpu_s;
}

/// The MLP: dense, or router + shared experts + routed experts of a MoE layer.
void mlp_block(LayerParts& x, bool moe_layer) {
    const ModelSpec& m = x.m;
    const Layout& l = x.l;
    const double T = x.T, h = x.h, tp = x.tp;
    if (!(moe_layer && m.moe)) {
        mlp_gemms(x, T, static_cast<double>(m.ffn_hidden) / tp, h, 1, 1.0, recomputes(l, RecomputeModule::mlp),
                  recomputes(l, RecomputeModule::mlp_act));
        if (gated_mlp(m) && recomputes(l, RecomputeModule::every_second_gemm) && !recomputes(l, RecomputeModule::mlp))
            add_gemm(x.replay, x.c, l.precision, T, static_cast<double>(m.ffn_hidden) / tp, h);  // up, again
        return;
    }
    const MoeSpec& e = *m.moe;
    const double etp = static_cast<double>(effective_etp(l));
    const double fe = static_cast<double>(e.expert_ffn_hidden);
    const bool rc_moe = recomputes(l, RecomputeModule::moe);
    x.module_gemms(rc_moe, [&] {  // router, fp32/bf16
        add_padded_gemm(x.g, x.c, Precision::bf16, T / x.sp, static_cast<double>(e.experts), h);
    });
    if (e.shared_experts > 0)
        mlp_gemms(x, T, fe * static_cast<double>(e.shared_experts) / tp, h, 1, 1.0,
                  rc_moe || recomputes(l, RecomputeModule::shared_experts), recomputes(l, RecomputeModule::mlp_act));
    // Token-expert assignments on the busiest rank, which the others wait for, spread over E/ep experts.
    const double assign = routed_assignments(l, e.top_k, T);
    const double local_experts = static_cast<double>(e.experts / l.ep);
    const bool per_expert = l.expert_gemms == ExpertGemms::per_expert;
    mlp_gemms(x, assign / local_experts, fe / etp, h, local_experts, x.c.gpu.eff.moe, rc_moe,
              recomputes(l, RecomputeModule::moe_act), per_expert ? kConcurrentGemms : local_experts);
    // Launched one by one, each expert's GEMMs are the host's to issue: two forward, four backward.
    if (per_expert) x.expert_launches = local_experts;
    x.elementwise(4.0 * assign * h, rc_moe);  // permute and un-permute tokens around the experts
}

}  // namespace

LayerWork layer_work(const ModelSpec& m, const ClusterSpec& c, const Layout& l, bool moe_layer) {
    const double tp = static_cast<double>(l.tp);
    LayerParts x{m, c, l, static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len) / static_cast<double>(l.cp),
                 static_cast<double>(m.hidden), tp, (l.sequence_parallel && l.tp > 1) ? tp : 1.0, {}, {}};  // sp: norms on T/sp
    const double T = x.T, h = x.h, sp = x.sp;
    const Precision p = l.precision;
    attention_projections(x);

    // Attention core: its causal FLOPs fwd = b·s²·a·(d_qk + d_v)/(tp·cp), both products over all a query
    // heads (GQA shares K and V, not the work); run by flash (scores never stored) or unfused (below).
    const double s = static_cast<double>(l.seq_len);
    const double b = static_cast<double>(l.micro_batch);
    const double qo_width = static_cast<double>(q_width(m) + attn_out_width(m));  // a·(d_qk + d_v)
    // Windowed layers (sliding_window) do the work of a causal layer over windowed_span keys; each layer takes
    // the model's average of the two kinds. Flash skips the blocks outside the window; the unfused core
    // computes the whole square and masks it, so its time does not fall.
    const double win_share = window_share(m);
    const double s_win = windowed_span(m, s);
    const double per_key = b * s * qo_width / (tp * static_cast<double>(l.cp));
    const double attn_flops = per_key * mean_span(m, s);
    const bool unfused = l.attention_kernel == AttentionKernel::unfused;
    const double heads = b * static_cast<double>(m.heads) / tp, queries = s / static_cast<double>(l.cp);
    const Gemms core_gemms = unfused ? unfused_core(m, c, heads, queries, s) : Gemms{};
    const double attn_fwd_s =
        unfused ? core_gemms.time_s
                : (1.0 - win_share) * flash_core_s(m, c, l.attention_kernel, per_key * s, s) +
                      (win_share > 0 ? win_share * flash_core_s(m, c, l.attention_kernel, per_key * s_win, s_win) : 0.0);
    if (unfused) {
        // Between its two products the b·a·s² scores pass through HBM: the softmax reads and writes them, dropout
        // reads and writes them and writes its 1-byte mask (FlashAttention, Dao et al. 2022 §2.2: standard
        // attention's Θ(N²) HBM accesses, where flash keeps them on chip).
        const double scores = heads * queries * s;
        const double passes = 2.0 + (l.dropout ? 2.5 : 0.0);  // elements read + written per score
        x.elementwise(scores * passes, recomputes(l, RecomputeModule::core_attn));
    }

    mlp_block(x, moe_layer);
    // Two norms (read + write) and two residual adds (2 reads + 1 write) on T/sp tokens; sandwich norms
    // (Gemma 2/3) add one after attention and one after the MLP.
    x.act_elems += T / sp * h * ((m.sandwich_norms ? 4 : 2) * 2 + 2 * 3);
    if (recomputes(l, RecomputeModule::layernorm)) x.replay_elems += T / sp * h * 2 * 2;
    if (quantizes(p))  // the QKV projection's input and the output projection's (the MLPs' in mlp_gemms)
        x.act_elems += kCastElems * T * (h + static_cast<double>(attn_out_width(m)) / tp);

    const double hbm = c.gpu.hbm_Bps * c.gpu.eff.hbm;
    const double elem_s = x.act_elems * kElemBytes / hbm;
    const Gemms& g = x.g;

    // The layer's parameters on this GPU, for the gradient accumulation pass.
    const StageParams held = layer_params_on_gpu(layer_params(m, moe_layer), l);

    // The kernels a pass launches: an eager layer's kLayerKernels (a third of them forward), fused kernels
    // fused_host_share of those, and each per-expert GEMM (two forward, four backward). Issued by the host,
    // each takes an eager layer's share of its launch time (fused kernels are fewer launches, not cheaper
    // ones) and the pass shows part of it (with_host_s); replayed as one CUDA graph (layout.cuda_graphs
    // full) the host issues none, and each kernel node starts graph_node_gap after the one before. The
    // eager form lets kernels the host queued ahead start with no gap at all, so on a GPU-bound pass the
    // nodes' gaps would make the graph the slower; a replay never adds to what the same kernels take
    // queued by the host, so the graph takes the shorter of the two (docs/validation.md, "The host's
    // launch cost": the gap as a floor for queued kernels too read worse held out).
    const double layer_kernels = kLayerKernels * (l.kernels == Kernels::fused ? c.gpu.eff.fused_host_share : 1.0);
    const double fwd_kernels = layer_kernels / 3.0 + 2.0 * x.expert_launches;
    const double bwd_kernels = 2.0 * layer_kernels / 3.0 + 4.0 * x.expert_launches;
    const double launch_s = c.gpu.eff.layer_overhead_s / kLayerKernels;
    auto pass_s = [&](double gpu_s, double kernels) {
        const double eager_s = with_host_s(gpu_s, kernels * launch_s);
        return l.cuda_graphs == CudaGraphs::full ? std::min(gpu_s + kernels * c.gpu.eff.graph_node_gap_s, eager_s)
                                                 : eager_s;
    };

    LayerWork w;
    const double fwd_gpu_s = g.time_s + attn_fwd_s + elem_s;
    // Where something besides the kernels paces a pipelined layer (pipeline_pacing), a third of its floor
    // holds the forward and two thirds the backward, as the launches split; the GPU idles in the rest.
    const double paced_s = paced_layer_s(c, l);
    w.fwd_s = std::max(pass_s(fwd_gpu_s, fwd_kernels), paced_s / 3.0);
    // The attention core's and the GEMMs' shares of the forward's wall time: where the host's launches set
    // the pace the GPU idles between kernels, and a communication stream runs in those gaps as well.
    const double stretch = fwd_gpu_s > 0 ? w.fwd_s / fwd_gpu_s : 1.0;
    w.attn_fwd_s = attn_fwd_s * stretch;
    w.gemm_fwd_s = g.time_s * stretch;
    w.unaligned_fwd_s = (g.unaligned_s + core_gemms.unaligned_s) * stretch;
    const Gemms& first = g.unaligned_width > 0 ? g : core_gemms;
    w.unaligned_width = first.unaligned_width;
    w.unaligned_multiple = first.unaligned_multiple;
    // Backward: input- and weight-gradient GEMMs (2 × forward), attention backward, element-wise × 2, and
    // the gradients' accumulation where it is a pass of its own.
    w.grad_accum_s = grad_accum_s(accumulated_params(held.dense, static_cast<double>(l.dp * l.cp), l) +
                                      accumulated_params(held.expert, static_cast<double>(expert_dp(l)), l),
                                  c, l);
    w.wgrad_s = g.time_s + w.grad_accum_s;
    const double attn_bwd = unfused ? kUnfusedAttnBwdFactor : kAttnBwdFactor;
    const double bwd_gpu_s = 2.0 * g.time_s + attn_bwd * attn_fwd_s + 2.0 * elem_s;
    const double bwd_pass_s = std::max(pass_s(bwd_gpu_s, bwd_kernels), 2.0 * paced_s / 3.0);
    w.bwd_s = bwd_pass_s + w.grad_accum_s;
    // The attention core's share of the backward's wall time, its kernel's own backward (CP's ring hides
    // under it as under the forward's).
    w.attn_bwd_s = attn_bwd * attn_fwd_s * (bwd_gpu_s > 0 ? bwd_pass_s / bwd_gpu_s : 1.0);
    w.model_flops = 3.0 * (g.flops + attn_flops);
    switch (l.recompute) {
        case Recompute::full:
            w.recompute_s = w.fwd_s;
            w.recompute_flops = g.flops + attn_flops;
            break;
        case Recompute::selective: {  // the modules it replays (memory.cpp drops what they produce)
            const bool core = recomputes(l, RecomputeModule::core_attn);
            w.recompute_s = (core ? attn_fwd_s : 0.0) + x.replay.time_s + x.replay_elems * kElemBytes / hbm;
            w.recompute_flops = (core ? attn_flops : 0.0) + x.replay.flops;
            break;
        }
        case Recompute::none: break;
    }
    return w;
}

LayerWork head_work(const ModelSpec& m, const ClusterSpec& c, const Layout& l) {
    const double tp = static_cast<double>(l.tp);
    const double T = static_cast<double>(l.micro_batch) * static_cast<double>(l.seq_len) / static_cast<double>(l.cp);
    const double h = static_cast<double>(m.hidden), V = static_cast<double>(m.vocab);
    Gemms g;
    add_padded_gemm(g, c, Precision::bf16, T, V / tp, h);  // the output layer stays in bf16 under fp8 recipes
    // Softmax cross-entropy over fp32 logits: write, read for max/sum, write the gradient.
    const double ce_s = 3.0 * T * V / tp * 4.0 / (c.gpu.hbm_Bps * c.gpu.eff.hbm);
    // The output layer's gradients (and at PP 1 an untied input embedding's, on the same GPU) accumulate
    // like a layer's; under PP the first stage's embedding pass is left out.
    const double head_params = V * h / tp * (l.pp == 1 && !m.tied_embeddings ? 2.0 : 1.0);
    LayerWork w;
    w.grad_accum_s = grad_accum_s(accumulated_params(head_params, static_cast<double>(l.dp * l.cp), l), c, l);
    w.fwd_s = g.time_s + ce_s;
    w.wgrad_s = g.time_s + w.grad_accum_s;
    w.bwd_s = 2.0 * g.time_s + ce_s + w.grad_accum_s;
    w.model_flops = 3.0 * g.flops;
    return w;
}

double model_flops_per_token(const ModelSpec& m, int64_t seq_len) {
    const int64_t n_moe = moe_layers_in(m, 0, m.layers);
    const int64_t n_dense = m.layers - n_moe;
    auto matmul = [&](bool moe) {
        const LayerParams p = layer_params(m, moe);
        double n = static_cast<double>(p.attn + p.mlp + p.router);
        if (moe && m.moe) n += static_cast<double>(m.moe->top_k * expert_params(m));
        return n;
    };
    double params = static_cast<double>(n_dense) * matmul(false) + static_cast<double>(n_moe) * matmul(true) +
                    static_cast<double>(m.vocab * m.hidden);
    const double attn = static_cast<double>(m.layers) * mean_span(m, static_cast<double>(seq_len)) *
                        static_cast<double>(q_width(m) + attn_out_width(m));  // causal: s·a·(d_qk + d_v) per token fwd
    return 6.0 * params + 3.0 * attn;
}

double paced_layer_s(const ClusterSpec& c, const Layout& l) {
    // nanotron's pipeline engine as the Ultra-Scale Playbook measured it (docs/validation.md, "nanotron's
    // pipeline engine"): where the pipeline's sends leave the scale-up domain, a layer and micro-batch
    // took about 3 ms per TP rank, forward and backward, on models of width 2,048 to 8,192 and
    // micro-batches of one to eight sequences; none at pp 1, none with the pipeline inside one node.
    if (l.pipeline_pacing != PipelinePacing::nanotron || l.pp <= 1) return 0.0;
    const int64_t world = ranks(l);
    if (domains_spanned(axis_stride(l, Axis::pp), l.pp, domain_occupancy(c, world), world) <= 1) return 0.0;
    return static_cast<double>(l.tp) * c.gpu.eff.layer_overhead_s;
}

double grad_accum_s(double params, const ClusterSpec& c, const Layout& l) {
    if (l.grad_accumulation != GradAccumulation::eager || params <= 0) return 0.0;
    const double buffer = l.grad_dtype == GradDtype::fp32 ? 4.0 : 2.0;
    return params * (kElemBytes + 2.0 * buffer) / (c.gpu.hbm_Bps * c.gpu.eff.hbm);
}

double accumulated_params(double held, double dp_shards, const Layout& l) {
    return reduces_grads_per_micro_batch(l) ? held / std::max(1.0, dp_shards) : held;
}

double optimizer_step_s(double params_owned, GradDtype g, const ClusterSpec& c) {
    // fp32 master, m, v: read + write (24 B); gradient read; bf16 copy written (2 B).
    const double bytes = params_owned * (24.0 + (g == GradDtype::fp32 ? 4.0 : 2.0) + 2.0);
    return bytes / (c.gpu.hbm_Bps * c.gpu.eff.hbm);
}

}  // namespace shardplan
