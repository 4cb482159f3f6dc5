/// Layout: how one training step is cut across GPUs (tp, cp, pp, dp, ep, etp, vpp), how ranks are
/// ordered onto the machine, and the training settings that go with it (batch, sequence, ZeRO stage,
/// recomputation, precision, pipeline schedule). The third input value type, next to ModelSpec and
/// ClusterSpec.
///
/// Rank order (docs/model.md §6): `order` lists the dense axes innermost first; the default
/// tp-cp-ep-dp-pp puts TP on adjacent ranks (inside one NVLink domain) and PP outermost, as Megatron-LM
/// does. Expert layers re-cut the tp·cp·dp ranks of a stage into etp × ep × edp, etp innermost.
///
///   Layout l; l.tp = 8; l.pp = 16; l.dp = 128; l.global_batch = 2048; l.seq_len = 8192;
///   to_string(l);                     // "TP8·CP1·PP16·DP128·EP1"
///   micro_batches(l);                 // 2048 / (1 · 128) = 16
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "shardplan/enums.h"

namespace shardplan {

struct ModelSpec;
struct ClusterSpec;

struct Layout {
    int64_t tp = 1;   // tensor parallel: splits every weight matrix (and, with SP, the sequence outside them)
    int64_t cp = 1;   // context parallel: splits the sequence; K/V travel around a ring
    int64_t pp = 1;   // pipeline parallel: consecutive layers on consecutive stages
    int64_t dp = 1;   // data parallel: replicas (tp·cp·pp·dp = GPUs)
    int64_t ep = 1;   // expert parallel: experts spread over ep ranks, carved out of tp·cp·dp
    int64_t etp = 0;  // expert tensor parallel; 0 = same as tp
    int64_t vpp = 1;  // model chunks per pipeline rank (interleaved schedule)
    int64_t micro_batch = 1;   // sequences per micro-batch (b)
    int64_t global_batch = 0;  // sequences per step (B); 0 = micro_batch · dp (one micro-batch each)
    int64_t seq_len = 4096;    // tokens per sequence (s)
    int zero = 1;              // 0 none, 1 optimizer state, 2 + gradients, 3 + parameters (FSDP)
    Recompute recompute = Recompute::none;
    /// With recompute full: which layers are checkpointed, and N (Megatron's --recompute-num-layers).
    RecomputeMethod recompute_method = RecomputeMethod::uniform;
    int64_t recompute_layers = 1;
    /// With recompute selective: a bit per RecomputeModule; 0 means Megatron's default, core_attn.
    uint32_t recompute_modules = 0;
    AttentionKernel attention_kernel = AttentionKernel::flash;  // framework_defaults("")
    Kernels kernels = Kernels::fused;  // fused (Megatron-Core/TE) or eager PyTorch ops (torchtitan, nanotron)
    StageSplit stage_split = StageSplit::even;           // even (Megatron) or by compute cost (nanotron)
    GradBuckets grad_buckets = GradBuckets::views;       // DDP's bucket copies (nanotron), DeepSpeed's bf16 gradients
    GradAccumulation grad_accumulation = GradAccumulation::fused;  // eager: a pass adding each micro-batch's gradients
    CrossEntropy cross_entropy = CrossEntropy::fused;     // the loss's logit copies: nanotron sharded, torchtitan upcast
    Allocator allocator = Allocator::classic;             // expandable segments: torchtitan's launch script
    bool dropout = false;  // dropout masks kept for the backward (modern recipes turn dropout off)
    bool sequence_parallel = true;  // Megatron SP: shard norm/dropout activations along the sequence over tp
    /// Under sequence parallelism, a column-parallel GEMM's backward gathers its input again from the
    /// sequence shard it kept (Megatron always; nanotron's tp_recompute_allgather, its default since
    /// PR #208). Off, it keeps the gathered full-sequence input from the forward: tp times the bytes, for
    /// the QKV, first-MLP and LM-head GEMMs (nanotron with tp_recompute_allgather false, and before #208).
    bool tp_recompute_allgather = true;
    /// TP's all-gathers and reduce-scatters run in chunks under the GEMMs beside them (Megatron's
    /// --tp-comm-overlap with Transformer Engine userbuffers, torchtitan's async TP). Only with sequence
    /// parallelism, whose collectives these are; off, TP traffic is exposed in full.
    bool tp_comm_overlap = false;
    /// Each MoE layer's dispatch and combine all-to-alls run under another micro-batch's computation
    /// (Megatron's --overlap-moe-expert-parallel-comm, which pairs one micro-batch's forward with
    /// another's backward as DualPipe does). Takes effect with ep > 1, two micro-batches or more and,
    /// when pp > 1, the interleaved schedule; DualPipe overlaps this way by itself.
    bool ep_comm_overlap = false;
    /// DP's gradient reduction runs in buckets under the last micro-batch's backward and ZeRO-1/2's
    /// parameter all-gather under the next step's first forward (Megatron's --overlap-grad-reduce and
    /// --overlap-param-gather, PyTorch DDP's buckets, DeepSpeed's overlap_comm). Off, both run after
    /// the backward, exposed. ZeRO-3/FSDP gathers each unit ahead of its use whatever this says.
    bool dp_comm_overlap = true;
    /// The GEMM weights are kept as their 8-bit copies alone, with no 16-bit copy beside them (Megatron's
    /// --fp8-param-gather, Transformer Engine's fp8_model_init; NeMo's and Megatron-Bridge's FP8 and MXFP8
    /// recipes set it): 2 bytes a held GEMM parameter fewer, and per-tensor FP8 gathers the updated
    /// parameters in 8 bits. Takes effect with precision fp8 or mxfp8.
    bool fp8_params = false;
    /// Under ZeRO-3 each parameter's shard is the fp32 parameter itself, the optimizer's master, gathered
    /// in 16 bits for each use, its gradient shard in the same fp32 (PyTorch FSDP's mixed precision, as
    /// torchtitan and llm-foundry run it): 4 + 4 + 8 bytes a parameter sharded. False: a 16-bit shard
    /// beside an fp32 master (DeepSpeed's ZeRO-3): 2 + 2 or 4 + 12. Takes effect with zero 3.
    bool fp32_shards = false;
    /// How MoE tokens are dispatched to and combined from the experts' GPUs (enums.h): NCCL all-to-all
    /// or the flex dispatcher's DeepEP / HybridEP kernels, which deduplicate per GPU and per domain.
    Dispatcher moe_dispatcher = Dispatcher::alltoall;
    /// How a rank's routed experts run their GEMMs (enums.h): in one grouped launch, or one launch per
    /// expert (Transformer Engine), whose launches the host issues one by one.
    ExpertGemms expert_gemms = ExpertGemms::grouped;
    /// How ZeRO-3 moves parameters and gradients (enums.h): a unit at a time at the links' rate, or
    /// DeepSpeed 2021's per-tensor collectives at their own. Takes effect with zero 3.
    Zero3Comm zero3_comm = Zero3Comm::bucketed;
    /// CUDA graphs (enums.h): none, or the whole step captured and replayed, which takes the host's
    /// launch cost off every layer.
    CudaGraphs cuda_graphs = CudaGraphs::none;
    /// What paces a pipeline stage's layers besides their kernels (enums.h): the kernels, or as nanotron's
    /// pipeline engine measured, at least tp × an eager layer's launch cost a layer and micro-batch where
    /// the pipeline crosses scale-up domains.
    PipelinePacing pipeline_pacing = PipelinePacing::kernels;
    /// Whether a pipeline rank waits for its boundary sends (enums.h): overlapped, blocking, or blocking
    /// under 1F1B only (Megatron-Core). Blocking sends add each micro-batch's to the step.
    PipelineSends pipeline_sends = PipelineSends::overlapped;
    /// Without sequence parallelism, each TP rank sends 1/tp of the boundary tensor, which the receiving
    /// TP group all-gathers over its own links (Megatron-LM's --scatter-gather-tensors-in-pipeline, on by
    /// default from 2021 until Megatron-Core, whose SP shards the tensor anyway; DeepSpeed's
    /// pipe_partitioned, on by default). Off, every TP rank sends the whole tensor. Takes effect with
    /// tp > 1 and sequence_parallel off.
    bool pipeline_scatter_gather = false;
    /// Dropless routing's load imbalance: the routed tokens of the busiest EP rank over the mean, 1
    /// (balanced: Megatron's performance configs force it, moe_router_force_load_balancing) or more; ep
    /// at most takes effect (every token on one rank). Every rank waits for the busiest in the
    /// all-to-alls, so its expert GEMMs, permutations, dispatch and combine and expert activations set
    /// the pace and the memory peak.
    double moe_imbalance = 1.0;
    /// Token dropping with padding (Megatron's --moe-expert-capacity-factor with
    /// --moe-pad-expert-input-to-capacity, as its token-drop recipes run it): every expert takes exactly
    /// capacity_factor × its mean share of the tokens, those beyond dropped, the rest padded; it replaces
    /// moe_imbalance. 0: dropless.
    double moe_capacity_factor = 0.0;
    Precision precision = Precision::bf16;
    Schedule schedule = Schedule::one_f_one_b;
    GradDtype grad_dtype = GradDtype::bf16;
    std::array<Axis, 5> order{Axis::tp, Axis::cp, Axis::ep, Axis::dp, Axis::pp};  // innermost first
    std::string framework;  // free text carried from a case ("Megatron-Core"), informational
};

int64_t effective_etp(const Layout& l);
/// Model chunks one pipeline rank holds: vpp under the interleaved schedule, 2 under DualPipe, else 1.
int64_t rank_chunks(const Layout& l);
/// Whether TP traffic runs under the GEMMs: tp > 1, tp_comm_overlap and sequence parallelism.
bool overlaps_tp(const Layout& l);
/// Whether DP traffic can run under compute: dp_comm_overlap, or ZeRO-3 (whose gathers prefetch).
bool overlaps_dp(const Layout& l);
/// Whether the GEMM weights are held as their 8-bit copies alone: fp8_params with precision fp8 or mxfp8.
bool keeps_fp8_params(const Layout& l);
/// Whether each pipeline rank waits for its boundary sends under the layout's schedule: pipeline_sends
/// blocking, or blocking_1f1b with the 1F1B or GPipe schedule; never at pp 1.
bool blocks_pipeline_sends(const Layout& l);
/// Whether the boundary tensor crosses the link split over the TP ranks by pipeline_scatter_gather (tp > 1
/// without sequence parallelism); with SP it is a sequence shard anyway.
bool scatters_pipeline_sends(const Layout& l);
/// Whether FSDP gathers the parameters and reduce-scatters the gradients one unit (a transformer block)
/// at a time for every micro-batch: ZeRO-3 without PP (under PP it gathers each stage once per step).
bool fsdp_per_micro_batch(const Layout& l);
/// Whether each micro-batch's gradients are reduce-scattered as its backward produces them, so that only
/// their shards are accumulated: ZeRO-2 (DeepSpeed's engine reduces "during non gradient accumulation
/// boundaries as well"; FSDP's SHARD_GRAD_OP outside no_sync) and FSDP without PP.
bool reduces_grads_per_micro_batch(const Layout& l);
/// Whether the MoE all-to-alls run under another micro-batch's computation: DualPipe, or
/// ep_comm_overlap with ep > 1, two micro-batches or more, and the interleaved schedule when pp > 1
/// (Megatron's prerequisites for --overlap-moe-expert-parallel-comm).
bool overlaps_ep(const Layout& l);
/// The busiest EP rank's routed tokens over the mean that expert GEMMs, dispatch, combine and expert
/// activations are sized by: moe_capacity_factor where set (padded to it), else moe_imbalance.
double moe_load_factor(const Layout& l);
/// Token-expert assignments on the busiest EP rank for `tokens` tokens of a micro-batch (docs/model.md
/// §3.3): tokens·top_k·etp/tp, times moe_load_factor. Its expert GEMMs and activations are sized by it.
double routed_assignments(const Layout& l, int64_t top_k, double tokens);
/// Why tp_comm_overlap asked for cannot run (Megatron refuses it): tp > 1 without sequence
/// parallelism. nullopt when it can, or when it is off.
std::optional<std::string> tp_overlap_refusal(const Layout& l);
/// Why ep_comm_overlap asked for cannot run (Megatron refuses it): pp > 1 without the interleaved
/// schedule. nullopt when it can, or when it is off.
std::optional<std::string> ep_overlap_refusal(const Layout& l);
/// Turns off an overlap the layout cannot run (a framework's default, or one the search's variant of a
/// layout no longer allows), so the layout says what runs and can be sent back as it stands.
void clear_unrunnable_overlaps(Layout& l);
/// Whether selective recomputation replays `module` (recompute selective; no modules named = core_attn).
bool recomputes(const Layout& l, RecomputeModule module);
inline uint32_t module_bit(RecomputeModule m) { return 1u << static_cast<unsigned>(m); }
/// What torchtitan's op-level selective checkpointing (`selective_ac_option = "op"`) replays: it keeps the
/// outputs of its save list (matmuls, attention, reduce-scatters) except every second matmul's, and
/// recomputes the rest: the norms, the activation functions and the K, output and up projections. The
/// default of "selective" for FSDP-family frameworks (case files, import, export).
uint32_t op_level_selective_modules();
/// How a framework implements what the layout leaves open, from its name as a case states it
/// (docs/model.md §2): eager kernels for torchtitan and nanotron (PyTorch modules op by op), fused
/// otherwise (Megatron-Core, NeMo, and llm-foundry with its fused cross-entropy); nanotron also splits
/// stages by compute cost and reduces gradients through PyTorch DDP's bucket copies. NeMo's and
/// Megatron-Bridge's performance recipes turn TP communication overlap on (with sequence parallelism), but
/// for Megatron-Bridge's NVFP4 ones;
/// Megatron-Bridge's MoE recipes on Hopper also overlap the expert all-to-alls
/// (overlap_moe_expert_parallel_comm from their moe_a2a_overlap, which defaults off and is set for the
/// H100 DeepSeek-V3 and Qwen3-235B configs, not for the Blackwell ones).
/// Attention: Transformer Engine's fused (cuDNN) attention for Megatron-Core, NeMo, Megatron-Bridge and the
/// JAX frameworks (Transformer Engine prefers it on Hopper and later); FlashAttention-2 everywhere else —
/// torchtitan's SDPA, llm-foundry, nanotron, DeepSpeed and Megatron-DeepSpeed, DeepSeek's HAI-LLM (an
/// improved FlashAttention-2, DeepSeek-V2 report §3.1.3) — and when no framework is named.
/// Gradients are reduced and accumulated in fp32 where the framework does so by default: torchtitan
/// (`training.mixed_precision_reduce = "float32"`; FSDP2 then accumulates unsharded gradients in that
/// dtype between micro-batches), DeepSpeed and Megatron-DeepSpeed with bf16 (the BF16 optimizer
/// accumulates in fp32), Megatron-LM and Megatron-Core's own training loop with bf16 or fp8
/// (`--accumulate-allreduce-grads-in-fp32` unless `--grad-reduce-in-bf16`). In the 16-bit dtype for fp16
/// runs, for NeMo's and Megatron-Bridge's performance recipes (they set grad_reduce_in_fp32 off) and elsewhere.
/// Gradient accumulation is eager where backward writes 16-bit gradients that the framework then adds to
/// fp32 buffers: nanotron, torchtitan, and DeepSpeed or Megatron-DeepSpeed with bf16, whose BF16 optimizer
/// also keeps those bf16 gradients between micro-batches (grad_buckets low_precision); fused elsewhere
/// (Megatron's --gradient-accumulation-fusion, on by default).
/// The loss is nanotron's sharded cross-entropy and torchtitan's upcast F.cross_entropy; fused elsewhere.
/// MoE tokens go by DeepEP under DeepSeek's HAI-LLM, by NCCL's all-to-all elsewhere. A rank's experts run
/// one GEMM launch each under the Megatron family (Transformer Engine's GroupedLinear) and DeepSpeed (its
/// Experts' loop), one grouped launch elsewhere.
/// ZeRO-3 runs DeepSpeed's per-tensor collectives where the framework names DeepSpeed, or Megatron-LM
/// (which had no ZeRO-3 of its own: such runs were DeepSpeed's, as SC21's comparison was), with a year up
/// to 2021; FSDP's and later DeepSpeed's bucketed ones otherwise.
/// DP traffic overlaps the backward and forward (dp_comm_overlap) except where the framework's own
/// default leaves it after the backward: a run named Megatron-LM (its --overlap-grad-reduce and
/// --overlap-param-gather are opt-in flags, off unless passed; before them its default DDP,
/// --DDP-impl local, all-reduced after the backward) and DeepSpeed or Megatron-DeepSpeed (zero_optimization.overlap_comm
/// defaults off below stage 3; the pipeline engine reduces after the last micro-batch). Megatron-Core
/// named as such, NeMo and Megatron-Bridge (their recipes set both flags), PyTorch DDP and FSDP
/// (nanotron, torchtitan, llm-foundry) and the JAX frameworks overlap.
/// nanotron's layers, where its pipeline crosses nodes, take at least tp × an eager layer's launch cost
/// (pipeline_pacing nanotron).
/// FP8 and MXFP8 weights are kept in 8 bits alone (fp8_params) under NeMo's and Megatron-Bridge's recipes,
/// whose FP8 presets set fp8_param_gather (megatron/bridge/training/mixed_precision.py); not for NVFP4.
/// Under ZeRO-3 the FSDP frameworks (torchtitan, llm-foundry, a name with FSDP) keep fp32 shards that are
/// the master themselves (fp32_shards).
/// Everything else: an even split, the framework's own gradient buffer, TP traffic exposed.
struct FrameworkDefaults {
    Kernels kernels = Kernels::fused;
    AttentionKernel attention = AttentionKernel::flash;
    StageSplit stage_split = StageSplit::even;
    GradBuckets grad_buckets = GradBuckets::views;
    GradAccumulation grad_accumulation = GradAccumulation::fused;
    CrossEntropy cross_entropy = CrossEntropy::fused;
    Allocator allocator = Allocator::classic;
    bool tp_comm_overlap = false;
    bool ep_comm_overlap = false;
    bool dp_comm_overlap = true;
    bool fp8_params = false;
    bool fp32_shards = false;
    GradDtype grad_dtype = GradDtype::bf16;
    Dispatcher moe_dispatcher = Dispatcher::alltoall;
    ExpertGemms expert_gemms = ExpertGemms::grouped;
    Zero3Comm zero3_comm = Zero3Comm::bucketed;
    CudaGraphs cuda_graphs = CudaGraphs::none;
    PipelinePacing pipeline_pacing = PipelinePacing::kernels;
    PipelineSends pipeline_sends = PipelineSends::overlapped;
    bool pipeline_scatter_gather = false;
};
/// `generation`: the GPU's (GpuSpec::generation), where a recipe differs by GPU; "" when not known.
/// `precision`: the layout's, where a default differs with it (the gradient dtype). `moe`: whether the
/// model routes to experts, where a recipe differs for MoE models.
FrameworkDefaults framework_defaults(const std::string& framework, const std::string& generation = "",
                                     Precision precision = Precision::bf16, bool moe = false);
/// Sets every field of `l` that `fw` has a default for (what naming a framework brings; what is given
/// beside it is applied after).
void apply_framework_defaults(const FrameworkDefaults& fw, Layout& l);
/// The activation checkpointing a framework's own recipes run, for a run that does not state its own (a
/// case's `[assumed]` layout.recompute: plan_case, validate.h). PaxML's GPU configurations
/// (paxml/contrib/gpu/scripts_gpu/configs.py, the GPT recipes NVIDIA's DGX Cloud tables ran) checkpoint
/// each layer with `SAVE_DOT_WITH_NO_BATCH_DIM` — the projections' outputs kept; the attention core (its
/// products carry batch dimensions), the norms and the activation function replayed — and with
/// `SAVE_NOTHING`, full recomputation, under FP8 (GPT5BSynthetic.task). Other frameworks: none known,
/// nullopt (their cases keep what they assume).
struct RecomputeDefault {
    Recompute recompute = Recompute::none;
    uint32_t modules = 0;  // with selective: module_bit()s
};
std::optional<RecomputeDefault> framework_recompute(const std::string& framework, Precision precision);
/// "core_attn,mlp": the modules a selective layout replays, in Megatron's order.
std::string recompute_modules_string(const Layout& l);
/// "none", "selective (core_attn,mlp)" or "full": the recomputation and, when selective, what it replays.
std::string recompute_setting_string(const Layout& l);
/// Expert-data-parallel degree: the tp·cp·dp ranks of one stage, regrouped as etp × ep × edp.
int64_t expert_dp(const Layout& l);
/// Whether ZeRO has something to shard: the dense parameters over dp·cp, the routed experts over their
/// expert-data-parallel group. With neither group above one rank every ZeRO stage plans as stage 0.
bool zero_shards_dense(const Layout& l);
bool zero_shards_experts(const Layout& l);
int64_t micro_batches(const Layout& l);
/// GPUs the layout occupies: tp·cp·pp·dp (ep and etp regroup these ranks, they add none).
int64_t ranks(const Layout& l);
int64_t global_batch(const Layout& l);
/// "TP8·CP1·PP16·DP128·EP1" (+ "·ETP4" / "·VPP2" when set): used in logs, test names and the UI.
std::string to_string(const Layout& l);
/// "tp-cp-ep-dp-pp"
std::string order_string(const Layout& l);
/// Parses "tp-cp-ep-dp-pp" (a permutation of the five axes, ep optional). nullopt if malformed.
std::optional<std::array<Axis, 5>> parse_order(const std::string& s);

/// A reason a layout cannot run (as opposed to an input that cannot be read): names the field,
/// what was expected, and a short machine-readable code that search counts rejections by.
struct LayoutProblem {
    std::string code;      // "tp_divides_heads", "degrees_product", "too_few_micro_batches", ...
    std::string field;     // "layout.tp"
    std::string expected;  // "a divisor of heads (128), got 72"
};

/// Every rule a layout must satisfy to run this model on this cluster. nullopt when it can.
/// Memory is not checked here: a layout that does not fit is a plan with fits = false.
std::optional<LayoutProblem> check_layout(const ModelSpec& m, const ClusterSpec& c, const Layout& l);

}  // namespace shardplan
