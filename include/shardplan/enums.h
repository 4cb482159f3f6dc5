/// Every closed set of choices in shardplan is an enum class with one name table. The same table
/// parses JSON and CLI input, prints reports and feeds the web page, so a name is spelled once.
///
///   auto p = parse_enum<Precision>("fp8");   // std::optional<Precision>
///   enum_name(Recompute::selective);          // "selective"
///   enum_choices<Schedule>();                 // "gpipe, 1f1b, interleaved, zb, dualpipe"
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace shardplan {

enum class Precision { bf16, fp16, fp8, mxfp8, nvfp4 };
enum class Recompute { none, selective, full };
enum class Schedule { gpipe, one_f_one_b, interleaved, zb, dualpipe };
/// swiglu and geglu are gated (three matrices: gate, up, down; SiLU or tanh-GELU on the gate, Gemma);
/// gelu and relu2 plain (two).
enum class MlpKind { swiglu, geglu, gelu, relu2 };
enum class AttentionKind { mha, mla };
enum class NormKind { rmsnorm, layernorm };
/// What a windowed layer's queries see: sliding, the last w keys (Mistral, Gemma 2/3, gpt-oss); chunked,
/// the keys of their own block of w tokens, causal inside it (Llama 4's attention_chunk_size).
enum class WindowKind { sliding, chunked };
enum class GradDtype { bf16, fp32 };
/// The attention core's kernel, by Megatron's --attention-backend names. flash: FlashAttention-2 (the
/// flash-attn package, PyTorch SDPA's flash backend, Triton kernels); fused: a fused attention written for
/// Hopper and later (cuDNN fused attention through Transformer Engine, FlashAttention-3), about 1.6 ×
/// FlashAttention-2's speed there (Efficiency::attn_fused). Both keep only their output and log-sum-exp;
/// unfused (2022-era Megatron, BLOOM) runs its two products as batched GEMMs over the whole s × s square
/// and stores the softmax of the scores (and its dropout mask and output when dropout is on).
enum class AttentionKernel { flash, fused, unfused };
/// How MoE tokens reach their experts' GPUs and come back. alltoall: NCCL all-to-all of the permuted
/// tokens (Megatron's --moe-token-dispatcher-type alltoall), one copy per (token, expert), at a share of
/// the tier's bandwidth (Efficiency::a2a); deepep / hybridep: Megatron's flex dispatcher with DeepEP or
/// HybridEP kernels, which send a token once to each GPU that holds any of its experts and, across
/// scale-up domains, once to each domain over the NIC, forwarded over NVLink there; they reach the
/// links' achieved bandwidth (DeepEP's published figures). docs/model.md §5.
enum class Dispatcher { alltoall, deepep, hybridep };
/// How a rank's routed experts run their GEMMs. grouped: one launch for all of them (torch's
/// grouped_mm under torchtitan, DeepSeek's DeepGEMM, CUTLASS grouped GEMM), their tiles sharing the
/// SMs' waves; per_expert: one GEMM launch per expert (Transformer Engine's GroupedLinear, which
/// Megatron's --moe-grouped-gemm uses, issues one cuBLAS GEMM per expert round-robin over four streams),
/// each launch the host's to issue and four sharing the waves at a time. docs/model.md §4.
enum class ExpertGemms { grouped, per_expert };
/// How ZeRO-3's gathers and reduce-scatters run. bucketed: a unit's (a block's) parameters in one
/// collective, prefetched, at what the links carry (PyTorch FSDP, DeepSpeed since mid-2021); per_tensor:
/// DeepSpeed's ZeRO-3 through v0.3.x (2021), each parameter by a collective of its own that synchronises
/// the device, at most kPerTensorZero3_Bps a GPU whatever the links (comm.h). docs/model.md §5.2.
enum class Zero3Comm { bucketed, per_tensor };
/// Which of the step's kernels the host launches as CUDA graphs. none: each kernel one by one (the
/// host's launch cost, docs/model.md §4); full: the whole forward and backward captured once and
/// replayed (Megatron's --cuda-graph-impl local --cuda-graph-scope full_iteration, its
/// FullCudaGraphWrapper), so no layer waits on the host. Transformer Engine's per-module graphs
/// (--cuda-graph-impl transformer_engine, scopes attn / mlp / moe_router / ...) are not priced: which
/// share of a layer's launches a scope removes is not published.
enum class CudaGraphs { none, full };
/// What paces a pipeline stage's layers besides their kernels. kernels: the kernels and the host's launches
/// as docs/model.md §4 prices them. nanotron: where the pipeline's groups leave the scale-up domain, each
/// layer of a micro-batch, forward and backward, takes at least tp × an eager layer's launch cost
/// (layer_overhead_s), as nanotron's pipeline engine ran in the Ultra-Scale Playbook's benchmarks (about
/// 3 ms per TP rank a layer and micro-batch, whatever the model's width or the micro-batch; none at pp 1
/// or with the pipeline inside one node; the cause is not in the code read). docs/model.md §4.
enum class PipelinePacing { kernels, nanotron };
/// Whether a pipeline rank waits for its boundary sends. overlapped: a send runs while the rank computes
/// its next pass, and the step sees the sends only in the fill and the drain (torchtitan's pipelining
/// schedules; Megatron-Core's interleaved schedule with --overlap-p2p-communication). blocking: after each
/// pass the rank waits until its send (and the receive paired with it) is done, so every micro-batch's
/// sends stand on the critical path: DeepSpeed's pipeline engine (runtime/pipe/p2p.py: `send` refuses
/// async_op) and Megatron-LM through 2022 (p2p_communication.py: batch_isend_irecv, each request waited
/// on, then torch.cuda.synchronize()). blocking_1f1b: blocking under 1F1B and GPipe, overlapped when
/// interleaved, as Megatron-Core runs it (its non-interleaved schedule's send_forward_recv_backward waits on
/// its requests; the interleaved one overlaps them). docs/model.md §7.
enum class PipelineSends { overlapped, blocking, blocking_1f1b };
/// How the framework runs the pointwise work around the GEMMs: fused kernels (Megatron-Core and Transformer
/// Engine: SwiGLU in one kernel, vocab-parallel cross-entropy in place) or eager PyTorch ops, one autograd
/// node each (torchtitan's and nanotron's Llama: the activation's output kept beside its inputs; the loss
/// through an fp32 copy of the logits; llm-foundry's MPT). docs/model.md §2.2.
enum class Kernels { fused, eager };
/// How layers are split over pipeline stages: even (Megatron-LM: middle stages take ceil(L/pp), the two
/// ends share the rest) or cost (nanotron: stages take the model's blocks in order until their cumulative
/// compute cost, a layer's weights and the LM head's V·h, passes their share, keeping the block that
/// crosses it; early stages get more layers, the last ones the LM head and the loss alone).
enum class StageSplit { even, cost };
/// Which layers full recomputation checkpoints (Megatron's --recompute-method with --recompute-num-layers
/// N): uniform groups a rank's layers N at a time and keeps each group's input, replaying a whole group
/// in the backward (N = 1: every layer's input); block recomputes only the first N layers of each chunk
/// of a rank and keeps every activation of the rest.
enum class RecomputeMethod { uniform, block };
/// What a GPU holds beside its main gradients: views (nothing: the framework's own contiguous gradient
/// buffer, Megatron's DDP, DeepSpeed's ZeRO-2/3, FSDP), copies (PyTorch DistributedDataParallel with
/// gradient_as_bucket_view off, as nanotron runs it: at dp > 1 its buckets hold a second copy of the
/// gradients in the weights' dtype) or low_precision (DeepSpeed's BF16 optimizer, ZeRO-0/1: each
/// parameter's bf16 gradient stays allocated beside the fp32 buffer it was added to, until the next
/// backward clears it, whatever the dp).
enum class GradBuckets { views, copies, low_precision };
/// How gradients are accumulated over a step's micro-batches: fused (the weight-gradient GEMM adds into
/// the fp32 main gradient itself: Megatron's --gradient-accumulation-fusion, on by default) or eager
/// (backward writes each parameter's gradient in the weights' dtype, and the framework then adds it to
/// its fp32 buffer, a pass over every parameter each micro-batch: nanotron's FP32GradientAccumulator,
/// PyTorch's AccumulateGrad under torchtitan and llm-foundry, DeepSpeed's BF16 optimizer `update_hp_grads`).
enum class GradAccumulation { fused, eager };
/// How the loss turns the LM head's bf16 logits into a cross-entropy, by what it holds per logit at its
/// peak: fused (Megatron's vocab-parallel cross-entropy, a fused or compiled loss: the fp32 copy it keeps
/// beside the bf16 logits it came from, 2 + 4 bytes), sharded (nanotron's sharded_cross_entropy: the bf16
/// logits, an fp32 copy and the fp32 shifted logits it turns into its softmax in place, 2 + 4 + 4, its
/// backward in place) or upcast (`F.cross_entropy(logits.float())`, torchtitan's loss: 2 + 4 + 4 forward,
/// and in log-softmax's backward its saved fp32 output beside the incoming and the outgoing fp32
/// gradients, 4 + 4 + 4, the bf16 logits deleted before the backward).
enum class CrossEntropy { fused, sharded, upcast };
/// PyTorch's CUDA caching allocator: classic (fixed segments; freed blocks are cached and fragment) or
/// expandable (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, as torchtitan's launch script sets:
/// segments grow in place, so the cache holds almost nothing beyond what is allocated).
enum class Allocator { classic, expandable };
/// The moment a stage's allocated memory peaks: a layer's backward after the warm-up (every micro-batch
/// in flight and the gradients of one block's activations), the loss of a micro-batch (bf16 and fp32
/// logits at once, on the stage with the LM head), or the optimizer step (no activations left, but the
/// fp32 copies of 16-bit gradients an fp32-master optimizer makes of what it owns).
enum class PeakMoment { backward, loss, optimizer };
/// What selective recomputation replays in the backward: Megatron's --recompute-modules names, and two
/// that torchtitan's op-level selective checkpointing replays and Megatron has no module for: mlp_act
/// (the activation function of dense MLPs and shared experts) and every_second_gemm (K, the output and a
/// gated MLP's up projection, the second, fourth and sixth matmul of a dense layer, with the residual
/// they rebuild).
enum class RecomputeModule { core_attn, layernorm, mlp, moe_act, moe, shared_experts, mla_up_proj, mlp_act, every_second_gemm };
/// The five parallel axes, plus the expert-tensor and expert-data groups MoE layers use.
enum class Axis { tp, cp, pp, dp, ep, etp, edp };
/// Tier a group's traffic travels on: inside one scale-up (NVLink/xGMI) domain or across the NICs.
enum class Tier { scale_up, scale_out };

template <typename E>
struct EnumNames;  // specialised below: static constexpr std::array<std::pair<E, std::string_view>, N> table

template <> struct EnumNames<Precision> {
    static constexpr std::array<std::pair<Precision, std::string_view>, 5> table{{
        {Precision::bf16, "bf16"}, {Precision::fp16, "fp16"}, {Precision::fp8, "fp8"},
        {Precision::mxfp8, "mxfp8"}, {Precision::nvfp4, "nvfp4"}}};
};
template <> struct EnumNames<Recompute> {
    static constexpr std::array<std::pair<Recompute, std::string_view>, 3> table{{
        {Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};
};
template <> struct EnumNames<Schedule> {
    static constexpr std::array<std::pair<Schedule, std::string_view>, 5> table{{
        {Schedule::gpipe, "gpipe"}, {Schedule::one_f_one_b, "1f1b"}, {Schedule::interleaved, "interleaved"},
        {Schedule::zb, "zb"}, {Schedule::dualpipe, "dualpipe"}}};
};
template <> struct EnumNames<MlpKind> {
    static constexpr std::array<std::pair<MlpKind, std::string_view>, 4> table{{
        {MlpKind::swiglu, "swiglu"}, {MlpKind::geglu, "geglu"}, {MlpKind::gelu, "gelu"}, {MlpKind::relu2, "relu2"}}};
};
template <> struct EnumNames<AttentionKind> {
    static constexpr std::array<std::pair<AttentionKind, std::string_view>, 2> table{{
        {AttentionKind::mha, "mha"}, {AttentionKind::mla, "mla"}}};
};
template <> struct EnumNames<NormKind> {
    static constexpr std::array<std::pair<NormKind, std::string_view>, 2> table{{
        {NormKind::rmsnorm, "rmsnorm"}, {NormKind::layernorm, "layernorm"}}};
};
template <> struct EnumNames<WindowKind> {
    static constexpr std::array<std::pair<WindowKind, std::string_view>, 2> table{{
        {WindowKind::sliding, "sliding"}, {WindowKind::chunked, "chunked"}}};
};
template <> struct EnumNames<GradDtype> {
    static constexpr std::array<std::pair<GradDtype, std::string_view>, 2> table{{
        {GradDtype::bf16, "bf16"}, {GradDtype::fp32, "fp32"}}};
};
template <> struct EnumNames<Kernels> {
    static constexpr std::array<std::pair<Kernels, std::string_view>, 2> table{{
        {Kernels::fused, "fused"}, {Kernels::eager, "eager"}}};
};
template <> struct EnumNames<StageSplit> {
    static constexpr std::array<std::pair<StageSplit, std::string_view>, 2> table{{
        {StageSplit::even, "even"}, {StageSplit::cost, "cost"}}};
};
template <> struct EnumNames<RecomputeMethod> {
    static constexpr std::array<std::pair<RecomputeMethod, std::string_view>, 2> table{{
        {RecomputeMethod::uniform, "uniform"}, {RecomputeMethod::block, "block"}}};
};
template <> struct EnumNames<GradBuckets> {
    static constexpr std::array<std::pair<GradBuckets, std::string_view>, 3> table{{
        {GradBuckets::views, "views"}, {GradBuckets::copies, "copies"}, {GradBuckets::low_precision, "low_precision"}}};
};
template <> struct EnumNames<CrossEntropy> {
    static constexpr std::array<std::pair<CrossEntropy, std::string_view>, 3> table{{
        {CrossEntropy::fused, "fused"}, {CrossEntropy::sharded, "sharded"}, {CrossEntropy::upcast, "upcast"}}};
};
template <> struct EnumNames<GradAccumulation> {
    static constexpr std::array<std::pair<GradAccumulation, std::string_view>, 2> table{{
        {GradAccumulation::fused, "fused"}, {GradAccumulation::eager, "eager"}}};
};
template <> struct EnumNames<Allocator> {
    static constexpr std::array<std::pair<Allocator, std::string_view>, 2> table{{
        {Allocator::classic, "classic"}, {Allocator::expandable, "expandable"}}};
};

template <> struct EnumNames<AttentionKernel> {
    static constexpr std::array<std::pair<AttentionKernel, std::string_view>, 3> table{{
        {AttentionKernel::flash, "flash"}, {AttentionKernel::fused, "fused"}, {AttentionKernel::unfused, "unfused"}}};
};
template <> struct EnumNames<Dispatcher> {
    static constexpr std::array<std::pair<Dispatcher, std::string_view>, 3> table{{
        {Dispatcher::alltoall, "alltoall"}, {Dispatcher::deepep, "deepep"}, {Dispatcher::hybridep, "hybridep"}}};
};
template <> struct EnumNames<ExpertGemms> {
    static constexpr std::array<std::pair<ExpertGemms, std::string_view>, 2> table{{
        {ExpertGemms::grouped, "grouped"}, {ExpertGemms::per_expert, "per_expert"}}};
};
template <> struct EnumNames<Zero3Comm> {
    static constexpr std::array<std::pair<Zero3Comm, std::string_view>, 2> table{{
        {Zero3Comm::bucketed, "bucketed"}, {Zero3Comm::per_tensor, "per_tensor"}}};
};
template <> struct EnumNames<CudaGraphs> {
    static constexpr std::array<std::pair<CudaGraphs, std::string_view>, 2> table{{
        {CudaGraphs::none, "none"}, {CudaGraphs::full, "full"}}};
};
template <> struct EnumNames<PipelinePacing> {
    static constexpr std::array<std::pair<PipelinePacing, std::string_view>, 2> table{{
        {PipelinePacing::kernels, "kernels"}, {PipelinePacing::nanotron, "nanotron"}}};
};
template <> struct EnumNames<PipelineSends> {
    static constexpr std::array<std::pair<PipelineSends, std::string_view>, 3> table{{
        {PipelineSends::overlapped, "overlapped"}, {PipelineSends::blocking, "blocking"},
        {PipelineSends::blocking_1f1b, "blocking_1f1b"}}};
};
template <> struct EnumNames<RecomputeModule> {
    static constexpr std::array<std::pair<RecomputeModule, std::string_view>, 9> table{{
        {RecomputeModule::core_attn, "core_attn"}, {RecomputeModule::layernorm, "layernorm"},
        {RecomputeModule::mlp, "mlp"}, {RecomputeModule::moe_act, "moe_act"}, {RecomputeModule::moe, "moe"},
        {RecomputeModule::shared_experts, "shared_experts"}, {RecomputeModule::mla_up_proj, "mla_up_proj"},
        {RecomputeModule::mlp_act, "mlp_act"}, {RecomputeModule::every_second_gemm, "every_second_gemm"}}};
};
template <> struct EnumNames<Axis> {
    static constexpr std::array<std::pair<Axis, std::string_view>, 7> table{{
        {Axis::tp, "tp"}, {Axis::cp, "cp"}, {Axis::pp, "pp"}, {Axis::dp, "dp"}, {Axis::ep, "ep"},
        {Axis::etp, "etp"}, {Axis::edp, "edp"}}};
};
template <> struct EnumNames<PeakMoment> {
    static constexpr std::array<std::pair<PeakMoment, std::string_view>, 3> table{{
        {PeakMoment::backward, "backward"}, {PeakMoment::loss, "loss"}, {PeakMoment::optimizer, "optimizer"}}};
};
template <> struct EnumNames<Tier> {
    static constexpr std::array<std::pair<Tier, std::string_view>, 2> table{{
        {Tier::scale_up, "scale_up"}, {Tier::scale_out, "scale_out"}}};
};

/// Names as people and sources spell them (framework names, presets, notes, HTTP headers) are matched
/// in ASCII lower case.
inline std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

template <typename E>
constexpr std::string_view enum_name(E value) {
    for (const auto& [v, n] : EnumNames<E>::table)
        if (v == value) return n;
    return "?";
}

template <typename E>
std::optional<E> parse_enum(std::string_view name) {
    for (const auto& [v, n] : EnumNames<E>::table)
        if (n == name) return v;
    return std::nullopt;
}

/// "a, b, c": used in error messages ("one of bf16, fp16, ...").
template <typename E>
std::string enum_choices() {
    std::string out;
    for (const auto& [v, n] : EnumNames<E>::table) {
        if (!out.empty()) out += ", ";
        out += n;
    }
    return out;
}

/// Bytes per element of a GEMM operand in this precision (nvfp4: 4 bits + one e4m3 scale per 16).
double gemm_operand_bytes(Precision p);
/// Whether the precision's GEMMs run on the 8-bit or 4-bit tensor-core path.
bool is_fp8(Precision p);

}  // namespace shardplan
