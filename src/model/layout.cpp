#include "shardplan/layout.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "shardplan/hardware.h"
#include "shardplan/model.h"
#include "shardplan/ranges.h"

namespace shardplan {

int64_t effective_etp(const Layout& l) { return l.etp > 0 ? l.etp : l.tp; }

int64_t expert_dp(const Layout& l) {
    const int64_t denom = effective_etp(l) * l.ep;
    return denom > 0 ? (l.tp * l.cp * l.dp) / denom : 0;
}

bool zero_shards_dense(const Layout& l) { return l.dp * l.cp > 1; }

bool zero_shards_experts(const Layout& l) { return expert_dp(l) > 1; }

int64_t ranks(const Layout& l) { return l.tp * l.cp * l.pp * l.dp; }

int64_t global_batch(const Layout& l) { return l.global_batch > 0 ? l.global_batch : l.micro_batch * l.dp; }

int64_t micro_batches(const Layout& l) {
    const int64_t per = l.micro_batch * l.dp;
    return per > 0 ? global_batch(l) / per : 0;
}

std::string to_string(const Layout& l) {
    std::string s = fmt::format("TP{}·CP{}·PP{}·DP{}·EP{}", l.tp, l.cp, l.pp, l.dp, l.ep);
    if (l.etp > 0 && l.etp != l.tp) s += fmt::format("·ETP{}", l.etp);
    if (l.vpp > 1) s += fmt::format("·VPP{}", l.vpp);
    return s;
}

std::string order_string(const Layout& l) {
    std::string s;
    for (Axis a : l.order) {
        if (!s.empty()) s += "-";
        s += enum_name(a);
    }
    return s;
}

int64_t rank_chunks(const Layout& l) {
    if (l.schedule == Schedule::interleaved) return l.vpp;
    return l.schedule == Schedule::dualpipe ? 2 : 1;
}

bool recomputes(const Layout& l, RecomputeModule module) {
    if (l.recompute != Recompute::selective) return false;
    const uint32_t set = l.recompute_modules ? l.recompute_modules : module_bit(RecomputeModule::core_attn);
    return (set & module_bit(module)) != 0;
}

namespace {
/// The year from 2017 to 2040 that `f` names as a number of its own ("Megatron-LM (2022)"; not "r0.2022" or
/// "20221"), or 0 when none.
int named_year(const std::string& f) {
    auto digit = [&](size_t i) { return i < f.size() && std::isdigit(static_cast<unsigned char>(f[i])) != 0; };
    for (size_t i = 0; i + 4 <= f.size(); ++i) {
        if (i > 0 && (digit(i - 1) || f[i - 1] == '.')) continue;
        if (digit(i + 4) || !digit(i) || !digit(i + 1) || !digit(i + 2) || !digit(i + 3)) continue;
        int year = 0;
        for (size_t k = i; k < i + 4; ++k) year = 10 * year + (f[k] - '0');
        if (year >= 2017 && year <= 2040) return year;
    }
    return 0;
}
/// The NeMo container a lower-case framework name gives as "(YY.MM[.patch] nemo container)", as YYMM
/// (Megatron-Bridge's performance tables: "Megatron-Bridge / Megatron-Core (26.06 NeMo Container)" →
/// 2606), or 0 when it names none.
int nemo_container(const std::string& f) {
    const size_t at = f.find(" nemo container");
    if (at == std::string::npos) return 0;
    const size_t open = f.rfind('(', at);
    if (open == std::string::npos) return 0;
    int yy = 0, mm = 0, read = 0;
    if (std::sscanf(f.c_str() + open + 1, "%2d.%2d%n", &yy, &mm, &read) != 2 || read != 5) return 0;
    return mm >= 1 && mm <= 12 ? yy * 100 + mm : 0;
}
bool names_year_up_to(const std::string& f, int last) {
    const int year = named_year(f);
    return year != 0 && year <= last;
}
}  // namespace

FrameworkDefaults framework_defaults(const std::string& framework, const std::string& generation, Precision precision,
                                     bool moe) {
    const std::string f = ascii_lower(framework);
    FrameworkDefaults d;
    const bool nanotron = f.find("nanotron") != std::string::npos;
    const std::string family = framework_family(framework);
    const bool deepspeed = f.find("deepspeed") != std::string::npos;
    const bool torchtitan = f.find("torchtitan") != std::string::npos;
    // Megatron's model code: Megatron-LM, NeMo, Megatron-Bridge, and Megatron-DeepSpeed (whose family is
    // DeepSpeed's, its engine's).
    const bool megatron_code = family == "megatron" || (deepspeed && f.find("megatron") != std::string::npos);
    if (family == "megatron" || family == "jax") d.attention = AttentionKernel::fused;
    // The unfused core (scores by baddbmm, Megatron's fused scale-mask-softmax, dropout, bmm) is what
    // Megatron-DeepSpeed runs unless told (its --use-flash-attn-v1/-v2/-triton are store_true flags,
    // megatron/arguments.py), and all Megatron-LM had before FlashAttention reached it in 2023
    // (--use-flash-attn): Korthikanti et al. 2022 and BLOOM stored the scores.
    if (megatron_code && (deepspeed || names_year_up_to(f, 2022))) d.attention = AttentionKernel::unfused;
    // Who adds each micro-batch's 16-bit gradients to fp32 buffers in a pass of its own: nanotron's
    // FP32GradientAccumulator (optim/gradient_accumulator.py), torchtitan through PyTorch's AccumulateGrad
    // and FSDP2, llm-foundry through AccumulateGrad on FSDP's shards, DeepSpeed's BF16 optimizer (below).
    // Megatron fuses the addition into the weight-gradient GEMM (--gradient-accumulation-fusion).
    // llm-foundry's throughput sweep (scripts/train/benchmarking/submit_benchmarks.py, the source of
    // MosaicML's tables) runs `composer train/train.py` on PyTorch 1.13 (its default image) or 2.0.1 (the
    // image sweep.sh passes): MPT's modules as eager ops, no torch.compile, its attention the one fused kernel.
    const bool foundry = f.find("llm-foundry") != std::string::npos || f.find("composer") != std::string::npos;
    if (nanotron || torchtitan || foundry) {
        d.kernels = Kernels::eager;
        d.grad_accumulation = GradAccumulation::eager;
    }
    // torchtitan's run_train.sh launches with PYTORCH_ALLOC_CONF="expandable_segments:True".
    if (torchtitan) d.allocator = Allocator::expandable;
    // The loss: torchtitan's cross_entropy_loss is F.cross_entropy on pred.float() (models' loss.py);
    // nanotron's sharded_cross_entropy works on an fp32 copy in place (tensor_parallel/functional.py).
    if (torchtitan) d.cross_entropy = CrossEntropy::upcast;
    if (nanotron) d.cross_entropy = CrossEntropy::sharded;
    if (nanotron) {
        d.stage_split = StageSplit::cost;      // nanotron/models/base.py build_model
        d.grad_buckets = GradBuckets::copies;  // torch DistributedDataParallel, gradient_as_bucket_view off
        // What the Ultra-Scale Playbook's pipelined runs measured (docs/validation.md, "nanotron's pipeline
        // engine"): where the pipeline leaves the node, each layer at least tp × an eager layer's launch
        // cost a micro-batch (paced_layer_s, compute.cpp).
        d.pipeline_pacing = PipelinePacing::nanotron;
    }
    // DeepSpeed's BF16 optimizer (runtime/bf16_optimizer.py) runs update_hp_grads after every backward,
    // its fp32 gradients a flat buffer of the whole stage; the bf16 ones are set to None only when the
    // next backward begins, so both stay allocated.
    if (deepspeed && precision == Precision::bf16) {
        d.grad_accumulation = GradAccumulation::eager;
        d.grad_buckets = GradBuckets::low_precision;
    }
    // NeMo's recipes add MegatronCommOverlapCallback(tp_comm_overlap=True) with a userbuffers config
    // per model and GPU; Megatron-Bridge's performance configs set comm_overlap likewise. Their MoE
    // configs' moe_a2a_overlap (overlap_moe_expert_parallel_comm) defaults off and is set for H100
    // (scripts/performance/configs: DeepSeek-V3 and Qwen3-235B on H100), not for B200/GB200 but in the
    // MXFP8 recipe from the 26.06 container (below).
    const bool bridge = f.find("megatron-bridge") != std::string::npos;
    const bool recipe = bridge || f.find("nemo") != std::string::npos;  // NeMo's or Megatron-Bridge's recipes
    // Megatron-Bridge's performance configs turn it off for NVFP4 (`tp_comm_overlap = False if precision ==
    // "nvfp4"` in its Llama 3, Llama 3.1 405B and GPT-OSS configs on every GPU).
    d.tp_comm_overlap = recipe && !(bridge && precision == Precision::nvfp4);
    d.ep_comm_overlap = bridge && generation != "blackwell";
    // DP overlap is opt-in in Megatron-LM's arguments (--overlap-grad-reduce, --overlap-param-gather;
    // megatron/training/arguments.py, store_true) and in DeepSpeed below ZeRO-3 (overlap_comm, whose
    // default is `stage == 3`: runtime/zero/config.py); NeMo's and Megatron-Bridge's recipes and the
    // Megatron-Core runs published with their flags (README, MoE model zoo) set both.
    // NeMo's and Megatron-Bridge's FP8 and MXFP8 presets (bf16_with_fp8_delayed_scaling_mixed,
    // bf16_with_fp8_current_scaling_mixed, bf16_with_mxfp8_mixed in megatron/bridge/training/
    // mixed_precision.py, NeMo 2.0's likewise) set fp8_param_gather, which keeps the weights as
    // Transformer Engine's 8-bit tensors (fp8_param follows it); the NVFP4 and blockwise ones do not.
    d.fp8_params = recipe && (precision == Precision::fp8 || precision == Precision::mxfp8);
    // PyTorch FSDP keeps the sharded parameters in the dtype the model was built in, fp32, and casts them
    // to MixedPrecisionPolicy's param_dtype (bf16) for each all-gather; the optimizer steps on those fp32
    // shards and their fp32 gradient shards (FSDP2's FSDPParam; torchtitan builds its model in fp32 with
    // mixed_precision_param bf16; llm-foundry's FSDP1 flat parameters likewise).
    d.fp32_shards = family == "fsdp";
    const bool names_megatron_lm = f.find("megatron-lm") != std::string::npos && !recipe;
    d.dp_comm_overlap = !(names_megatron_lm || deepspeed);
    // DeepEP is DeepSeek's own (HAI-LLM). Everything else dispatches with NCCL's all-to-all unless told, as
    // Megatron's alltoall does. Megatron-Bridge's configs name HybridEP for some models and GPUs (its
    // Blackwell DeepSeek-V3 and Qwen3 ones), but taken as its Blackwell default the held-out
    // Megatron-Bridge p90 rose from 41 to 59 % and the in-sample B200 runs moved further over
    // (docs/validation.md, "The MoE dispatcher").
    if (f.find("hai-llm") != std::string::npos) d.moe_dispatcher = Dispatcher::deepep;
    // Megatron-Core's experts with --moe-grouped-gemm are Transformer Engine's GroupedLinear, which issues
    // one cuBLAS GEMM per expert over four streams (nvte_multi_stream_cublas_gemm); DeepSpeed-MoE's Experts
    // loop over their local experts (moe/experts.py); torchtitan's grouped_mm and DeepSeek's DeepGEMM are
    // one launch for all of a rank's experts.
    if (family == "megatron" || deepspeed) d.expert_gemms = ExpertGemms::per_expert;
    // From the 26.06 container Megatron-Bridge runs its MXFP8 MoE benchmarks on Blackwell with one set of
    // settings (its perf recipes' _enable_hybridep_full_iteration_mxfp8 for Qwen3 and DeepSeek-V3, the
    // full-iteration MXFP8 overrides for GPT-OSS; issue #2885, "enable improved Group Linear module for
    // MoE", enabled for 26.06 by #3983): the whole step as one CUDA graph (cuda_graph_impl
    // "full_iteration"), the experts as Transformer Engine's fused grouped MLP (one grouped GEMM with
    // SwiGLU and the MXFP8 quantization, NVTE_CUTEDSL_FUSED_GROUPED_MLP), HybridEP dispatch, and
    // overlap_moe_expert_parallel_comm with delay_wgrad_compute. Dense recipes and the BF16/FP8-CS MoE
    // ones keep Transformer Engine's per-module graphs or none, which are not priced (enums.h).
    if (bridge && moe && generation == "blackwell" && precision == Precision::mxfp8 && nemo_container(f) >= 2606) {
        d.cuda_graphs = CudaGraphs::full;
        d.expert_gemms = ExpertGemms::grouped;
        d.moe_dispatcher = Dispatcher::hybridep;
        d.ep_comm_overlap = true;
    }
    // Gradients in fp32: torchtitan's mixed_precision_reduce (float32, whatever the precision); with bf16
    // compute, DeepSpeed's BF16 optimizer and Megatron-LM's --accumulate-allreduce-grads-in-fp32 (set for
    // bf16 unless --grad-reduce-in-bf16). NeMo's and Megatron-Bridge's performance recipes reduce in bf16.
    const bool megatron_lm = megatron_code && !recipe;
    if (torchtitan || ((megatron_lm || deepspeed) && precision != Precision::fp16))
        d.grad_dtype = GradDtype::fp32;
    // ZeRO-3 by DeepSpeed's per-tensor path (stage3.py through v0.3.x; DeepSpeed #1174, PR #1188). Megatron-LM
    // had no ZeRO-3 of its own (its distributed optimizer, ZeRO-1, came in 2022): a ZeRO-3 run under a
    // Megatron-LM of 2021 ran DeepSpeed's, as SC21's comparison with ZeRO-3 did.
    if ((deepspeed || megatron_lm) && names_year_up_to(f, 2021)) d.zero3_comm = Zero3Comm::per_tensor;
    // The pipeline's boundary exchange. DeepSpeed's engine (Megatron-DeepSpeed's too) sends synchronously
    // (runtime/pipe/p2p.py: `send` asserts async_op is False) and partitions the first activation and its
    // gradient over the model-parallel ranks (pipe_partitioned and grad_partitioned, on by default:
    // "When TP>1, we partition the first activations/gradients across TP ranks to save communication
    // volume", runtime/pipe/engine.py). Megatron-LM through 2022 waited on every request and then on
    // torch.cuda.synchronize() (p2p_communication.py _communicate) and scattered the boundary tensor
    // over TP (--scatter-gather-tensors-in-pipeline, on by default). Megatron-Core's 1F1B waits on its
    // requests (_communicate's wait_on_reqs), its interleaved schedule overlaps them
    // (--overlap-p2p-communication); its SP shards the tensor, and the scatter option is unused there.
    if (deepspeed || (megatron_code && names_year_up_to(f, 2022))) {
        d.pipeline_sends = PipelineSends::blocking;
        d.pipeline_scatter_gather = true;
    } else if (family == "megatron") {
        d.pipeline_sends = PipelineSends::blocking_1f1b;
    }
    return d;
}

void apply_framework_defaults(const FrameworkDefaults& fw, Layout& l) {
    l.kernels = fw.kernels;
    l.attention_kernel = fw.attention;
    l.stage_split = fw.stage_split;
    l.grad_buckets = fw.grad_buckets;
    l.grad_accumulation = fw.grad_accumulation;
    l.cross_entropy = fw.cross_entropy;
    l.allocator = fw.allocator;
    l.tp_comm_overlap = fw.tp_comm_overlap;
    l.ep_comm_overlap = fw.ep_comm_overlap;
    l.dp_comm_overlap = fw.dp_comm_overlap;
    l.fp8_params = fw.fp8_params;
    l.fp32_shards = fw.fp32_shards;
    l.grad_dtype = fw.grad_dtype;
    l.moe_dispatcher = fw.moe_dispatcher;
    l.expert_gemms = fw.expert_gemms;
    l.zero3_comm = fw.zero3_comm;
    l.cuda_graphs = fw.cuda_graphs;
    l.pipeline_pacing = fw.pipeline_pacing;
    l.pipeline_sends = fw.pipeline_sends;
    l.pipeline_scatter_gather = fw.pipeline_scatter_gather;
}

double moe_load_factor(const Layout& l) {
    if (l.moe_capacity_factor > 0) return l.moe_capacity_factor;
    return std::min(l.moe_imbalance, static_cast<double>(l.ep));  // one rank can hold at most all ep ranks' share
}

double routed_assignments(const Layout& l, int64_t top_k, double tokens) {
    return tokens * static_cast<double>(top_k) * static_cast<double>(effective_etp(l)) / static_cast<double>(l.tp) *
           moe_load_factor(l);
}

bool fsdp_per_micro_batch(const Layout& l) { return l.zero >= 3 && l.pp == 1; }

bool reduces_grads_per_micro_batch(const Layout& l) { return l.zero == 2 || fsdp_per_micro_batch(l); }

bool overlaps_tp(const Layout& l) { return l.tp > 1 && l.tp_comm_overlap && l.sequence_parallel; }

bool overlaps_dp(const Layout& l) { return l.dp_comm_overlap || l.zero >= 3; }

bool keeps_fp8_params(const Layout& l) {
    return l.fp8_params && (l.precision == Precision::fp8 || l.precision == Precision::mxfp8);
}

bool blocks_pipeline_sends(const Layout& l) {
    if (l.pp <= 1) return false;
    if (l.pipeline_sends == PipelineSends::blocking) return true;
    return l.pipeline_sends == PipelineSends::blocking_1f1b &&
           (l.schedule == Schedule::one_f_one_b || l.schedule == Schedule::gpipe);
}

bool scatters_pipeline_sends(const Layout& l) {
    return l.pipeline_scatter_gather && l.tp > 1 && !l.sequence_parallel;
}

bool overlaps_ep(const Layout& l) {
    if (l.ep <= 1) return false;
    if (l.schedule == Schedule::dualpipe) return true;
    return l.ep_comm_overlap && micro_batches(l) >= 2 && (l.pp == 1 || (l.schedule == Schedule::interleaved && l.vpp > 1));
}

std::optional<std::string> tp_overlap_refusal(const Layout& l) {
    if (!l.tp_comm_overlap || l.tp <= 1 || l.sequence_parallel) return std::nullopt;
    return std::string("only with sequence_parallel true (it overlaps SP's all-gathers and reduce-scatters)");
}

std::optional<std::string> ep_overlap_refusal(const Layout& l) {
    if (!l.ep_comm_overlap || l.ep <= 1 || l.pp <= 1 || l.schedule == Schedule::dualpipe) return std::nullopt;
    if (l.schedule == Schedule::interleaved && l.vpp > 1) return std::nullopt;
    return std::string("only with the interleaved schedule (vpp > 1) when pp > 1: Megatron's "
                       "--overlap-moe-expert-parallel-comm pairs micro-batches across virtual stages");
}

void clear_unrunnable_overlaps(Layout& l) {
    if (tp_overlap_refusal(l)) l.tp_comm_overlap = false;
    if (ep_overlap_refusal(l)) l.ep_comm_overlap = false;
}

uint32_t op_level_selective_modules() {
    return module_bit(RecomputeModule::layernorm) | module_bit(RecomputeModule::mlp_act) |
           module_bit(RecomputeModule::moe_act) | module_bit(RecomputeModule::every_second_gemm);
}

std::optional<RecomputeDefault> framework_recompute(const std::string& framework, Precision precision) {
    if (ascii_lower(framework).find("paxml") == std::string::npos) return std::nullopt;
    if (is_fp8(precision) || precision == Precision::nvfp4) return RecomputeDefault{Recompute::full, 0};
    return RecomputeDefault{Recompute::selective, module_bit(RecomputeModule::core_attn) |
                                                      module_bit(RecomputeModule::layernorm) |
                                                      module_bit(RecomputeModule::mlp_act)};
}

std::string recompute_modules_string(const Layout& l) {
    std::string out;
    for (const auto& [m, name] : EnumNames<RecomputeModule>::table)
        if (recomputes(l, m)) {
            if (!out.empty()) out += ',';
            out.append(name);
        }
    return out;
}

std::string recompute_setting_string(const Layout& l) {
    return l.recompute == Recompute::selective ? fmt::format("selective ({})", recompute_modules_string(l))
                                               : std::string(enum_name(l.recompute));
}

std::optional<std::array<Axis, 5>> parse_order(const std::string& s) {
    std::array<Axis, 5> out{};
    size_t n = 0, pos = 0;
    bool seen[5] = {false, false, false, false, false};
    while (pos <= s.size()) {
        const size_t dash = s.find('-', pos);
        const std::string tok = s.substr(pos, dash == std::string::npos ? std::string::npos : dash - pos);
        auto a = parse_enum<Axis>(tok);
        if (!a || *a == Axis::etp || *a == Axis::edp || n >= 5) return std::nullopt;
        const int idx = static_cast<int>(*a);
        if (seen[idx]) return std::nullopt;
        seen[idx] = true;
        out[n++] = *a;
        if (dash == std::string::npos) break;
        pos = dash + 1;
    }
    if (n == 4 && !seen[static_cast<int>(Axis::ep)]) {
        // "tp-cp-pp-dp": ep goes just outside cp, where Megatron's orders (tp-cp-ep-dp-pp,
        // tp-cp-ep-pp-dp) put it; with ep = 1 its place changes nothing.
        std::array<Axis, 5> with_ep{};
        size_t j = 0;
        for (size_t i = 0; i < 4; ++i) {
            with_ep[j++] = out[i];
            if (out[i] == Axis::cp) with_ep[j++] = Axis::ep;
        }
        return with_ep;
    }
    if (n != 5) return std::nullopt;
    return out;
}

namespace {
std::optional<LayoutProblem> problem(const char* code, const char* field, std::string expected) {
    return LayoutProblem{code, field, std::move(expected)};
}

/// Each degree positive and bounded before anything multiplies them, and their product the GPU count.
std::optional<LayoutProblem> check_degrees(const ClusterSpec& c, const Layout& l) {
    struct Degree { const char* field; int64_t v; };
    for (Degree d : {Degree{"layout.tp", l.tp}, {"layout.cp", l.cp}, {"layout.pp", l.pp}, {"layout.dp", l.dp},
                     {"layout.ep", l.ep}, {"layout.vpp", l.vpp}, {"layout.micro_batch", l.micro_batch},
                     {"layout.seq_len", l.seq_len}})
        if (d.v <= 0) return problem("non_positive", d.field, fmt::format("a positive integer, got {}", d.v));
    if (l.etp < 0) return problem("non_positive", "layout.etp", fmt::format("a positive integer or null, got {}", l.etp));
    if (l.global_batch < 0)
        return problem("non_positive", "layout.global_batch", fmt::format("a positive integer, got {}", l.global_batch));
    if (l.zero < 0 || l.zero > 3) return problem("zero_stage", "layout.zero", fmt::format("0, 1, 2 or 3, got {}", l.zero));
    // Degrees are bounded before they are multiplied, so the product below cannot overflow.
    for (Degree d : {Degree{"layout.tp", l.tp}, {"layout.cp", l.cp}, {"layout.pp", l.pp}, {"layout.dp", l.dp},
                     {"layout.ep", l.ep}, {"layout.etp", l.etp}, {"layout.vpp", l.vpp},
                     {"layout.micro_batch", l.micro_batch}})
        if (d.v > 100'000'000) return problem("too_large", d.field, fmt::format("at most 10^8, got {}", d.v));
    if (l.seq_len > 1'000'000'000)
        return problem("too_large", "layout.seq_len", fmt::format("at most 10^9 tokens, got {}", l.seq_len));
    // Multiplied in double first: four degrees of up to 10^8 overflow int64.
    const double world = double(l.tp) * double(l.cp) * double(l.pp) * double(l.dp);
    if (world != double(c.gpus))
        return problem("degrees_product", "layout.dp",
                       fmt::format("tp·cp·pp·dp = gpus ({}), got {}·{}·{}·{} = {:.0f}", c.gpus, l.tp, l.cp, l.pp, l.dp, world));
    return std::nullopt;
}

/// Each split of the model even: heads, kv heads and the FFN over tp, the sequence over cp (and tp
/// with sequence parallelism), experts over ep and etp.
std::optional<LayoutProblem> check_splits(const ModelSpec& m, const Layout& l) {
    if (m.heads % l.tp != 0)
        return problem("tp_divides_heads", "layout.tp", fmt::format("a divisor of heads ({}), got {}", m.heads, l.tp));
    if (m.attention == AttentionKind::mha && m.kv_heads % l.tp != 0 && l.tp % m.kv_heads != 0)
        return problem("tp_divides_kv_heads", "layout.tp",
                       fmt::format("a divisor or multiple of kv_heads ({}), got {}", m.kv_heads, l.tp));
    if (l.seq_len % l.cp != 0)
        return problem("cp_divides_seq", "layout.cp", fmt::format("a divisor of seq_len ({}), got {}", l.seq_len, l.cp));
    if (l.cp > 1 && (l.seq_len / l.cp) % 2 != 0)
        return problem("cp_divides_seq", "layout.cp",
                       fmt::format("seq_len / cp even (causal load balancing splits each chunk in two), got {}/{}",
                                   l.seq_len, l.cp));
    if (l.sequence_parallel && l.tp > 1 && (l.seq_len / l.cp) % l.tp != 0)
        return problem("sp_divides_seq", "layout.sequence_parallel",
                       fmt::format("seq_len / cp divisible by tp for sequence parallelism, got {}/{} and tp {}",
                                   l.seq_len, l.cp, l.tp));
    const int64_t etp = effective_etp(l);
    // NaN fails every comparison, so each range is written to fail it.
    if (!(l.moe_imbalance >= 1.0 && l.moe_imbalance <= 1000.0))
        return problem("moe_imbalance", "layout.moe_imbalance",
                       fmt::format("the busiest EP rank's tokens over the mean, 1 to 1000, got {}", l.moe_imbalance));
    if (!(l.moe_capacity_factor == 0.0 || (l.moe_capacity_factor >= 0.01 && l.moe_capacity_factor <= 100.0)))
        return problem("moe_capacity_factor", "layout.moe_capacity_factor",
                       fmt::format("0 (dropless) or a capacity factor from 0.01 to 100, got {}", l.moe_capacity_factor));
    if (!m.moe) {
        if (l.ep != 1) return problem("ep_dense", "layout.ep", fmt::format("1 for a dense model, got {}", l.ep));
        if (l.etp > 0 && l.etp != l.tp)
            return problem("etp_dense", "layout.etp",
                           fmt::format("null or tp for a dense model (it has no experts to split), got {}", l.etp));
        if (l.moe_capacity_factor != 0.0)
            return problem("moe_dense", "layout.moe_capacity_factor",
                           fmt::format("0 for a dense model (no experts to drop tokens at), got {}", l.moe_capacity_factor));
    } else {
        if (m.moe->experts % l.ep != 0)
            return problem("ep_divides_experts", "layout.ep",
                           fmt::format("a divisor of experts ({}), got {}", m.moe->experts, l.ep));
        if ((l.tp * l.cp * l.dp) % (etp * l.ep) != 0)
            return problem("expert_grid", "layout.ep",
                           fmt::format("etp·ep ({}·{}) dividing tp·cp·dp ({})", etp, l.ep, l.tp * l.cp * l.dp));
        if (m.moe->expert_ffn_hidden % etp != 0)
            return problem("etp_divides_ffn", "layout.etp",
                           fmt::format("a divisor of expert_ffn_hidden ({}), got {}", m.moe->expert_ffn_hidden, etp));
    }
    if (m.ffn_hidden % l.tp != 0)
        return problem("tp_divides_ffn", "layout.tp", fmt::format("a divisor of ffn_hidden ({}), got {}", m.ffn_hidden, l.tp));
    return std::nullopt;
}

/// The pipeline: layers for every chunk, the schedule's needs on vpp and on the number of micro-batches.
std::optional<LayoutProblem> check_pipeline(const ModelSpec& m, const Layout& l) {
    // The embedding and the loss may each take a pipeline slot of their own (Megatron's
    // account_for_embedding/loss_in_pipeline_split): 126 layers fill 16 × 8 = 128 chunks. nanotron's split
    // by cost has no such bound: build_model (nanotron/models/base.py) hands its pipeline blocks to the
    // ranks in turn by cumulative cost and leaves the ranks past the last one empty (the Ultra-Scale
    // Playbook ran its 28-layer model on PP 32).
    if (l.stage_split != StageSplit::cost && l.pp * l.vpp > m.layers + 2)
        return problem("pp_exceeds_layers", "layout.pp",
                       fmt::format("pp·vpp at most layers + 2 ({}), got {}·{}", m.layers + 2, l.pp, l.vpp));
    if (l.vpp > 1 && l.schedule != Schedule::interleaved)
        return problem("vpp_needs_interleaved", "layout.vpp",
                       fmt::format("1 unless schedule is interleaved, got {} with {}", l.vpp, enum_name(l.schedule)));
    if (l.schedule == Schedule::interleaved && l.vpp < 2)
        return problem("interleaved_needs_vpp", "layout.vpp", "at least 2 for the interleaved schedule");
    if (l.schedule == Schedule::dualpipe && l.pp % 2 != 0)
        return problem("dualpipe_even_pp", "layout.pp", fmt::format("an even pp for DualPipe, got {}", l.pp));
    // nanotron's split by compute cost gives each rank one chunk; nanotron has neither schedule.
    if (l.stage_split == StageSplit::cost && (l.schedule == Schedule::interleaved || l.schedule == Schedule::dualpipe))
        return problem("cost_split_one_chunk", "layout.stage_split",
                       fmt::format("even with the {} schedule (the cost split, nanotron's, gives each rank one chunk)",
                                   enum_name(l.schedule)));
    if (double(l.micro_batch) * double(l.dp) > 1e15)
        return problem("too_large", "layout.micro_batch", "micro_batch·dp at most 10^15");
    const int64_t gb = global_batch(l);
    if (gb % (l.micro_batch * l.dp) != 0)
        return problem("batch_divides", "layout.global_batch",
                       fmt::format("a multiple of micro_batch·dp ({}·{} = {}), got {}", l.micro_batch, l.dp,
                                   l.micro_batch * l.dp, gb));
    const int64_t m_mb = gb / (l.micro_batch * l.dp);
    if (l.pp > 1) {
        int64_t need = 1;
        const char* why = "";
        switch (l.schedule) {
            case Schedule::interleaved: need = l.pp; why = "interleaved 1F1B needs m ≥ pp"; break;
            case Schedule::zb: need = l.pp; why = "ZB-H1 needs m ≥ pp"; break;
            case Schedule::dualpipe: need = 2 * l.pp; why = "DualPipe needs m ≥ 2·pp"; break;
            default: break;
        }
        if (m_mb < need)
            return problem("too_few_micro_batches", "layout.global_batch",
                           fmt::format("at least {} micro-batches ({}), got {} = {}/({}·{})", need, why, m_mb, gb,
                                       l.micro_batch, l.dp));
        // Megatron's interleaved order runs micro-batches through the chunks in groups of pp; with a
        // partial last group the ranks' orders wait on each other (the simulation deadlocks), and every
        // published interleaved run in ../shared/validation has m a multiple of pp.
        if (l.schedule == Schedule::interleaved && m_mb % l.pp != 0)
            return problem("interleaved_groups", "layout.global_batch",
                           fmt::format("a number of micro-batches that is a multiple of pp ({}) for interleaved 1F1B "
                                       "(Megatron's groups of pp), got {} = {}/({}·{})",
                                       l.pp, m_mb, gb, l.micro_batch, l.dp));
        if (l.schedule == Schedule::dualpipe && m_mb % 2 != 0)
            return problem("dualpipe_even_micro_batches", "layout.global_batch",
                           fmt::format("an even number of micro-batches for DualPipe (half enter at each end), got {} = "
                                       "{}/({}·{})", m_mb, gb, l.micro_batch, l.dp));
    }
    return std::nullopt;
}

}  // namespace

std::optional<LayoutProblem> check_layout(const ModelSpec& m, const ClusterSpec& c, const Layout& l) {
    if (auto bad = check_degrees(c, l)) return bad;
    if (auto bad = check_splits(m, l)) return bad;
    if (auto bad = check_pipeline(m, l)) return bad;
    if (auto why = c.gpu.precision_problem(l.precision)) return problem("precision_unsupported", "layout.precision", *why);
    return std::nullopt;
}

}  // namespace shardplan
