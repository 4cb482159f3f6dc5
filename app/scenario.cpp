#include "scenario.h"

#include <unistd.h>

#include <filesystem>

#include <fmt/format.h>

#include "shardplan/error.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"

namespace shardplan::app {

void add_scenario_flags(CLI::App& cmd, ScenarioFlags& f, bool with_degrees, bool with_sizes) {
    cmd.add_option("--case", f.case_file, "A case JSON file (../shared/validation format), - for standard input; flags override its fields");
    cmd.add_option("--model", f.model, "Model preset name, model JSON file or Hugging Face config.json");
    cmd.add_option("--cluster", f.cluster, "Cluster preset name, cluster JSON file or calibrated profile");
    if (with_sizes) cmd.add_option("--gpus", f.gpus, "Number of GPUs");
    if (with_degrees) {
        cmd.add_option("--tp", f.tp, "Tensor-parallel degree");
        cmd.add_option("--cp", f.cp, "Context-parallel degree");
        cmd.add_option("--pp", f.pp, "Pipeline-parallel degree");
        cmd.add_option("--dp", f.dp, "Data-parallel degree (default: gpus / (tp·cp·pp))");
        cmd.add_option("--ep", f.ep, "Expert-parallel degree (MoE)");
        cmd.add_option("--etp", f.etp, "Expert tensor-parallel degree (default: tp)");
        cmd.add_option("--vpp", f.vpp, "Virtual pipeline chunks per rank (interleaved schedule)");
        cmd.add_option("--micro-batch", f.micro_batch, "Sequences per micro-batch");
        cmd.add_option("--zero", f.zero, "ZeRO stage 0-3 (1 = distributed optimizer, 3 = FSDP)");
        cmd.add_option("--recompute", f.recompute, "none | selective | full");
        cmd.add_option("--recompute-modules", f.recompute_modules,
                       "What selective recomputation replays, Megatron's names joined by ',' (default core_attn): "
                       "core_attn, layernorm, mlp, moe_act, moe, shared_experts, mla_up_proj, mlp_act, every_second_gemm");
        cmd.add_option("--recompute-method", f.recompute_method,
                       "With --recompute full: uniform (groups of --recompute-layers, each group's input kept) | block "
                       "(only the first --recompute-layers layers of each rank's chunk recomputed)");
        cmd.add_option("--recompute-layers", f.recompute_layers, "With --recompute full: Megatron's --recompute-num-layers (default 1)");
        cmd.add_option("--attention-kernel", f.attention_kernel, "flash (FlashAttention-2) | fused (cuDNN / FlashAttention-3) | unfused (stores the s×s softmax, as 2022-era Megatron); default: the framework's");
        cmd.add_option("--kernels", f.kernels, "fused | eager (PyTorch ops one by one, as torchtitan and nanotron run them)");
        cmd.add_option("--framework", f.framework,
                       "The framework that runs it (Megatron-LM, torchtitan, nanotron, ...): its defaults for --kernels, "
                       "--stage-split, --grad-buckets, --grad-accumulation, --cross-entropy, --allocator, --tp-comm-overlap, "
                       "--ep-comm-overlap, --dp-comm-overlap, --fp8-params, --fp32-shards, --moe-dispatcher, --expert-gemms, --zero3-comm and "
                       "--cuda-graphs");
        cmd.add_option("--stage-split", f.stage_split,
                       "even | cost (nanotron: stages take layers until their compute cost, LM head included, passes their share)");
        cmd.add_option("--grad-buckets", f.grad_buckets,
                       "views | copies (PyTorch DDP's buckets hold a second copy of the gradients, as nanotron runs it) | "
                       "low_precision (DeepSpeed's BF16 optimizer keeps each bf16 gradient beside its fp32 one)");
        cmd.add_option("--grad-accumulation", f.grad_accumulation,
                       "fused | eager (a pass adds each micro-batch's 16-bit gradients to fp32 buffers: nanotron, torchtitan, "
                       "DeepSpeed with bf16; fused: Megatron's --gradient-accumulation-fusion; default: the framework's)");
        cmd.add_option("--cross-entropy", f.cross_entropy,
                       "fused | sharded | upcast: the loss's copies of the logits (fused: Megatron's vocab-parallel "
                       "cross-entropy, 2 + 4 bytes a logit; sharded: nanotron's, 2 + 4 + 4; upcast: F.cross_entropy on an "
                       "fp32 copy, torchtitan's, 4 + 4 + 4 in its backward; default: the framework's)");
        cmd.add_option("--allocator", f.allocator,
                       "classic | expandable (PyTorch's expandable_segments, as torchtitan launches: the caching allocator "
                       "holds almost nothing beyond what is allocated; default: the framework's)");
        cmd.add_option("--dropout", f.dropout, "true | false (default false: dropout masks kept for the backward)");
        cmd.add_option("--tp-recompute-allgather", f.tp_recompute_allgather,
                       "true | false: under SP the backward gathers each column-parallel GEMM's input again (default "
                       "true: Megatron, nanotron); false keeps the gathered inputs, tp times the bytes (nanotron's option)");
        cmd.add_option("--tp-comm-overlap", f.tp_comm_overlap,
                       "true | false: TP's SP collectives run under the GEMMs beside them (Megatron --tp-comm-overlap; "
                       "default: on for NeMo/Megatron-Bridge but Megatron-Bridge's nvfp4, else off)");
        cmd.add_option("--ep-comm-overlap", f.ep_comm_overlap,
                       "true | false: MoE all-to-alls run under another micro-batch's computation (Megatron "
                       "--overlap-moe-expert-parallel-comm; needs vpp > 1 when pp > 1; default: on for Megatron-Bridge on Hopper, and in "
                       "its MXFP8 MoE recipe on Blackwell from 26.06)");
        cmd.add_option("--dp-comm-overlap", f.dp_comm_overlap,
                       "true | false: DP's gradient reduction runs under the last backward (ZeRO-2: under each "
                       "micro-batch's) and ZeRO-1/2's parameter gather under the first forward (Megatron "
                       "--overlap-grad-reduce --overlap-param-gather, DDP buckets, "
                       "DeepSpeed overlap_comm); false: both exposed after the backward (default: off for Megatron-LM and "
                       "DeepSpeed, else on; ZeRO-3 always prefetches)");
        cmd.add_option("--fp8-params", f.fp8_params,
                       "true | false: with fp8 or mxfp8, the GEMM weights kept as their 8-bit copies alone, no 16-bit copy "
                       "(Megatron --fp8-param-gather; default: on for NeMo/Megatron-Bridge FP8 and MXFP8 recipes, else off)");
        cmd.add_option("--fp32-shards", f.fp32_shards,
                       "true | false: under ZeRO-3 each shard is the fp32 parameter itself, the optimizer's master, gathered in "
                       "16 bits (PyTorch FSDP: 4 + 4 + 8 bytes a parameter sharded); false: a 16-bit shard beside an fp32 master "
                       "(DeepSpeed ZeRO-3); default: on for torchtitan, llm-foundry and FSDP, else off");
        cmd.add_option("--moe-dispatcher", f.moe_dispatcher,
                       "alltoall | deepep | hybridep: how MoE tokens reach the experts' GPUs (NCCL all-to-all, or Megatron's flex "
                       "dispatcher with DeepEP / HybridEP, one copy per GPU and per domain reached; default alltoall, deepep for HAI-LLM, "
                       "hybridep in Megatron-Bridge's MXFP8 MoE recipe on Blackwell from 26.06)");
        cmd.add_option("--expert-gemms", f.expert_gemms,
                       "grouped | per_expert: a rank's routed experts in one grouped GEMM launch, or one launch per expert "
                       "(Transformer Engine's GroupedLinear: the host issues each, four share the SMs at a time; default "
                       "per_expert for the Megatron family and DeepSpeed, grouped elsewhere and in Megatron-Bridge's MXFP8 MoE "
                       "recipe on Blackwell from 26.06)");
        cmd.add_option("--zero3-comm", f.zero3_comm,
                       "bucketed | per_tensor: ZeRO-3's gathers and reduce-scatters a unit at a time at the links' rate (FSDP, "
                       "DeepSpeed since mid-2021), or DeepSpeed 2021's collective per tensor at 21 GB/s a GPU at most; default "
                       "per_tensor when the framework names DeepSpeed or Megatron-LM with a year up to 2021");
        cmd.add_option("--cuda-graphs", f.cuda_graphs,
                       "none | full: the whole step captured as one CUDA graph and replayed, so no layer waits on the "
                       "host's launches (Megatron --cuda-graph-impl local --cuda-graph-scope full_iteration); default: full "
                       "for Megatron-Bridge's MXFP8 MoE recipes on Blackwell from its 26.06 container, else none");
        cmd.add_option("--pipeline-pacing", f.pipeline_pacing,
                       "kernels | nanotron: where the pipeline crosses nodes, each layer of a micro-batch takes at least "
                       "tp x an eager layer's launch cost (3 ms), as nanotron's pipeline engine measured in the Ultra-Scale "
                       "Playbook; default nanotron when the framework names nanotron, else kernels");
        cmd.add_option("--pipeline-sends", f.pipeline_sends,
                       "overlapped | blocking | blocking_1f1b: whether a pipeline rank waits for each boundary send before "
                       "its next pass (blocking: DeepSpeed's pipeline engine, Megatron-LM through 2022; blocking_1f1b: "
                       "Megatron-Core, overlapped when interleaved with --overlap-p2p-communication); default: the framework's, "
                       "else overlapped");
        cmd.add_option("--pipeline-scatter-gather", f.pipeline_scatter_gather,
                       "true | false: without SP each TP rank sends 1/tp of the boundary tensor and the receiving TP group "
                       "all-gathers it (Megatron-LM's --scatter-gather-tensors-in-pipeline through 2022, DeepSpeed's "
                       "pipe_partitioned); default: on for those, else off");
        cmd.add_option("--moe-imbalance", f.moe_imbalance,
                       "The busiest EP rank's routed tokens over the mean, 1 or more (default 1: balanced, as Megatron's "
                       "performance configs force it); its expert GEMMs, all-to-alls and expert activations set the pace");
        cmd.add_option("--moe-capacity-factor", f.moe_capacity_factor,
                       "Token dropping padded to capacity (Megatron --moe-expert-capacity-factor with "
                       "--moe-pad-expert-input-to-capacity): every expert takes this × its mean share; 0 = dropless (default)");
        cmd.add_option("--sequence-parallel", f.sequence_parallel, "true | false (default: on when tp > 1)");
        cmd.add_option("--schedule", f.schedule, "gpipe | 1f1b | interleaved | zb | dualpipe");
        cmd.add_option("--grad-dtype", f.grad_dtype, "bf16 | fp32: the dtype gradients are accumulated and reduced in (default: the framework's; fp32 for torchtitan, and for Megatron-LM and DeepSpeed unless fp16)");
        cmd.add_option("--order", f.order, "Rank order, innermost first (default tp-cp-ep-dp-pp)");
    }
    if (with_sizes) {
        cmd.add_option("--global-batch", f.global_batch, "Sequences per step (default: the case's; without one, one micro-batch per replica, micro-batch × dp)");
        cmd.add_option("--seq-len", f.seq_len, "Tokens per sequence (default 4096; the built-in scenario's 8192)");
    }
    cmd.add_option("--precision", f.precision, "bf16 | fp16 | fp8 | mxfp8 | nvfp4");
}

std::string global_batch_text(const Layout& l) {
    return l.global_batch > 0 ? "global batch " + std::to_string(l.global_batch)
                              : std::string("global batch unset: one micro-batch per replica");
}

Case resolve_base(const ScenarioFlags& f) {
    ScenarioFlags base;
    base.case_file = f.case_file;
    base.model = f.model;
    base.cluster = f.cluster;
    base.gpus = f.gpus;
    base.global_batch = f.global_batch;
    base.seq_len = f.seq_len;
    base.precision = f.precision;
    base.grad_dtype = f.grad_dtype;
    base.recompute_modules = f.recompute_modules;  // what "selective" replays, when the search tries it
    base.attention_kernel = f.attention_kernel;
    base.kernels = f.kernels;
    base.stage_split = f.stage_split;
    base.framework = f.framework;
    base.grad_buckets = f.grad_buckets;
    base.grad_accumulation = f.grad_accumulation;
    base.cross_entropy = f.cross_entropy;
    base.allocator = f.allocator;
    base.dropout = f.dropout;
    base.tp_recompute_allgather = f.tp_recompute_allgather;
    base.tp_comm_overlap = f.tp_comm_overlap;
    base.ep_comm_overlap = f.ep_comm_overlap;
    base.dp_comm_overlap = f.dp_comm_overlap;
    base.fp8_params = f.fp8_params;
    base.fp32_shards = f.fp32_shards;
    base.moe_dispatcher = f.moe_dispatcher;
    base.expert_gemms = f.expert_gemms;
    base.zero3_comm = f.zero3_comm;
    base.cuda_graphs = f.cuda_graphs;
    base.pipeline_pacing = f.pipeline_pacing;
    base.pipeline_sends = f.pipeline_sends;
    base.pipeline_scatter_gather = f.pipeline_scatter_gather;
    base.moe_imbalance = f.moe_imbalance;
    base.moe_capacity_factor = f.moe_capacity_factor;
    base.dp = 1;  // degrees are the search's to choose: keep resolve_scenario from deriving them
    Case c = resolve_scenario(base);
    c.layout.dp = 1;
    return c;
}

Case resolve_scenario(const ScenarioFlags& f) {
    // The case: a file, or the built-in default scenario (its layout only when nothing else is named).
    Case c;
    const bool from_defaults = f.case_file.empty() && f.model.empty() && f.cluster.empty();
    if (!f.case_file.empty()) {
        // "-": the case on standard input (`shardplan import ... | shardplan plan --case -`); files it
        // names are relative to the working directory.
        const FileAccess files{f.case_file == "-" ? std::string() : std::filesystem::path(f.case_file).parent_path().string()};
        const json j = read_json_file(f.case_file, "--case");
        // One case, not a file of them (validate reads those): named by the option, as its fields are by theirs.
        if (!j.is_object())
            throw ConfigError("--case", "one case, a JSON object with model, cluster and layout (a list of cases is "
                                        "validate's), got " + describe_json(j));
        check_case_keys(j, "a case");  // a field beside the case's ("gpus" out of the cluster) is not ignored
        c = case_from_json(j, "", &files);
    } else {
        const Scenario s = default_scenario();
        c.model = s.model;
        c.cluster = s.cluster;
        if (from_defaults) c.layout = s.layout;  // otherwise read below, for the model and GPU named
    }
    if (!f.model.empty()) c.model = model_from_arg(f.model, "--model");
    if (!f.cluster.empty()) {
        c.cluster = cluster_from_arg(f.cluster, "--cluster");
        if (!f.dp) c.layout.dp = 0;  // another machine: the case's dp is stale
    }
    // Naming a model or a cluster leaves the default scenario's layout behind: the layout starts as a
    // request body without one reads (io's reader, its framework defaults for this GPU and model), as it
    // does through the API, the Python module and the page.
    if (f.case_file.empty() && !from_defaults) {
        c.layout = layout_from_json(json::object(), "layout", c.cluster.gpu.generation, c.model.moe.has_value());
        c.layout.dp = 0;  // not stated: derived by apply_overrides
    }
    // The flags on top, by the library's one resolver (the API reads a search's pins with it too).
    return apply_overrides(std::move(c), f, Naming::flags);
}

ScenarioFlags for_framework(ScenarioFlags flags, Framework f) {
    flags.framework = framework_name(f);
    return flags;
}

std::string planned_as(const Case& c, Framework f) {
    const Plan p = evaluate(c.model, c.cluster, c.layout);
    const std::string name = framework_name(f);
    if (p.rejection) return fmt::format("# planned as {} runs it (--framework {})\n", name, name);
    return fmt::format("# planned as {} runs it (--framework {}): {:.0f} tokens/s per GPU, {:.1f} GB per GPU\n", name, name,
                       p.throughput.tokens_per_s_per_gpu, p.memory.total_bytes() / 1e9);
}

bool use_color(const std::string& mode) {
    if (mode == "always") return true;
    if (mode == "never") return false;
    if (mode != "auto") throw ConfigError("--color", "auto, always or never, got \"" + mode + "\"");
    return isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
}

SearchSpace search_space_from_flags(const ScenarioFlags& f) { return search_space(f, Naming::flags); }

int search_threads(int threads) {
    if (threads < 0 || threads > 256) throw ConfigError("--threads", "an integer in [0, 256]");
    return threads;
}

OutputFormat output_format(const std::string& format, bool json) {
    return json ? OutputFormat::as_json : enum_flag<OutputFormat>(format, "--format");
}

void add_format_flags(CLI::App& cmd, std::string& format, bool& json) {
    cmd.add_option("--format", format, "table | json | csv | markdown (default table)");
    cmd.add_flag("--json", json, "Short for --format json (docs/json.md)");
}

}  // namespace shardplan::app
