// Launch configurations read back into a case (include/shardplan/import.h, docs/export.md).
#include "shardplan/import.h"

#include <fmt/format.h>

#include "shardplan/error.h"
#include "shardplan/presets.h"
#include "shardplan/schedule.h"
#include "shardplan/toml.h"

#include "launch_values.h"

namespace shardplan {

namespace {

using launch::Values;
using launch::flatten;
using launch::megatron_values;
using launch::typed_word;

// ---- The model a configuration describes -----------------------------------------------------------------

ModelSpec megatron_model(const Values& v) {
    for (const char* need : {"--num-layers", "--hidden-size", "--num-attention-heads", "--vocab-size"})
        if (!v.has(need))
            throw ConfigError(v.field + " " + need,
                              "the model's size among the arguments, or the model named with --model (a preset, "
                              "model JSON or Hugging Face config.json)");
    json m = {{"name", "megatron-args"},
              {"layers", v.integer("--num-layers", 0)},
              {"hidden", v.integer("--hidden-size", 0)},
              {"heads", v.integer("--num-attention-heads", 0)},
              {"vocab", v.integer("--vocab-size", 0)}};
    const int64_t h = v.integer("--hidden-size", 0);
    m["ffn_hidden"] = v.integer("--ffn-hidden-size", 4 * h);
    m["kv_heads"] = v.flag("--group-query-attention") ? v.integer("--num-query-groups", 1)
                                                      : v.integer("--num-attention-heads", 0);
    if (v.has("--kv-channels")) m["head_dim"] = v.integer("--kv-channels", 0);
    m["mlp"] = v.flag("--swiglu") ? "swiglu" : v.flag("--squared-relu") ? "relu2" : "gelu";
    m["norm"] = v.text("--normalization", "LayerNorm") == "RMSNorm" ? "rmsnorm" : "layernorm";
    m["linear_bias"] = !v.flag("--disable-bias-linear");
    m["qkv_bias"] = v.flag("--add-qkv-bias");
    m["qk_norm"] = v.flag("--qk-layernorm");
    m["tied_embeddings"] = !v.flag("--untie-embeddings-and-output-weights");
    if (v.flag("--multi-latent-attention")) {
        m["attention"] = "mla";
        m["mla"] = {{"q_lora_rank", v.integer("--q-lora-rank", 0, 0)}, {"kv_lora_rank", v.integer("--kv-lora-rank", 512)},
                    {"qk_nope_head_dim", v.integer("--qk-head-dim", 128)},
                    {"qk_rope_head_dim", v.integer("--qk-pos-emb-head-dim", 64)},
                    {"v_head_dim", v.integer("--v-head-dim", 128)}};
        // As a Hugging Face config reads: an MLA query/key head is the no-position part plus the RoPE part.
        m["head_dim"] = v.integer("--qk-head-dim", 128) + v.integer("--qk-pos-emb-head-dim", 64);
    }
    if (v.has("--num-experts")) {
        int64_t dense = 0, freq = 1;
        if (v.has("--moe-layer-freq")) {
            const std::string f = v.text("--moe-layer-freq", "1");
            if (f.find('[') == std::string::npos) {
                const json n = typed_word(f);
                if (!n.is_number_integer() || n.get<int64_t>() < 1) v.bad("--moe-layer-freq", "an integer or a list of 0/1");
                freq = n.get<int64_t>();
            } else {  // '[0,0,1,1,...]': a leading run of dense layers, then MoE everywhere
                bool moe_seen = false;
                for (char c : f) {
                    if (c == '0' && !moe_seen) ++dense;
                    else if (c == '1') moe_seen = true;
                    else if (c == '0') v.bad("--moe-layer-freq", "dense layers only as a leading run (0,…,0,1,…,1)");
                }
            }
        }
        const int64_t fe = v.integer("--moe-ffn-hidden-size", v.integer("--ffn-hidden-size", 4 * h));
        const int64_t shared = v.integer("--moe-shared-expert-intermediate-size", 0, 0);
        m["moe"] = {{"experts", v.integer("--num-experts", 0)}, {"top_k", v.integer("--moe-router-topk", 2)},
                    {"shared_experts", fe > 0 ? shared / fe : 0}, {"expert_ffn_hidden", fe},
                    {"dense_layers", dense}, {"layer_freq", freq},
                    {"router_groups", v.integer("--moe-router-num-groups", 1)},
                    {"group_topk", v.integer("--moe-router-group-topk", 0, 0)}};
    }
    ModelSpec spec = model_from_json(m, v.field + " (model arguments)");
    // The same architecture as a preset is that preset (its name in reports and in the case).
    json mine = to_json(spec);
    mine.erase("name");
    for (const ModelSpec& p : model_presets()) {
        json theirs = to_json(p);
        theirs.erase("name");
        if (theirs == mine) return p;
    }
    return spec;
}

// torchtitan's model names and flavors that are shardplan presets.
std::optional<std::string> torchtitan_preset(const std::string& name, const std::string& flavor) {
    const std::string preset = ascii_lower(name == "deepseek_v3" ? "deepseek-v3" : name + "-" + flavor);
    if (name == "deepseek_v3" && flavor != "671B") return std::nullopt;
    return has_model_preset(preset) ? std::optional<std::string>(preset) : std::nullopt;
}

// ---- Layouts ---------------------------------------------------------------------------------------------

struct Draft {
    Layout l;
    int64_t replicate = 1, shard = 1;  // torchtitan's data-parallel degrees as written (shard -1: the rest)
    std::optional<int64_t> gpus;  // what the configuration itself implies
    std::vector<std::string> notes;
    std::optional<ModelSpec> model;
};

Draft megatron_layout(const Values& v) {
    Draft d;
    Layout& l = d.l;
    l.framework = "Megatron-LM";
    l.tp = v.integer("--tensor-model-parallel-size", 1);
    l.pp = v.integer("--pipeline-model-parallel-size", 1);
    l.cp = v.integer("--context-parallel-size", 1);
    l.ep = v.integer("--expert-model-parallel-size", 1);
    l.etp = v.integer("--expert-tensor-parallel-size", 0, 0);
    l.vpp = v.integer("--num-virtual-stages-per-pipeline-rank", 1);
    if (!v.has("--micro-batch-size")) v.bad("--micro-batch-size", "the micro-batch size (Megatron requires it)");
    l.micro_batch = v.integer("--micro-batch-size", 1);
    l.global_batch = v.integer("--global-batch-size", 0);
    if (!v.has("--seq-length")) v.bad("--seq-length", "the sequence length");
    l.seq_len = v.integer("--seq-length", 0);
    l.sequence_parallel = v.flag("--sequence-parallel") || l.tp == 1;
    l.tp_comm_overlap = v.flag("--tp-comm-overlap");
    l.ep_comm_overlap = v.flag("--overlap-moe-expert-parallel-comm");
    // DP overlap is opt-in in Megatron-LM's arguments: --overlap-grad-reduce (and, with the distributed
    // optimizer, --overlap-param-gather beside it).
    l.dp_comm_overlap = v.flag("--overlap-grad-reduce");
    // The pipeline's sends: Megatron-Core waits on them under 1F1B and overlaps them when interleaved
    // unless --no-overlap-p2p-communication says otherwise.
    l.pipeline_sends = v.flag("--no-overlap-p2p-communication") ? PipelineSends::blocking : PipelineSends::blocking_1f1b;
    // CUDA graphs: the whole step (--cuda-graph-impl local --cuda-graph-scope full_iteration); Transformer
    // Engine's per-module graphs are not priced (enums.h) and are planned as none, and said so.
    const std::string graph_impl = v.text("--cuda-graph-impl", "none");
    bool full_iteration = false;
    if (v.has("--cuda-graph-scope"))
        for (const json& scope : v.given.at("--cuda-graph-scope")) full_iteration |= scope.get<std::string>() == "full_iteration";
    if (graph_impl == "local" && full_iteration) l.cuda_graphs = CudaGraphs::full;
    else if (graph_impl != "none")
        d.notes.push_back("layout.cuda_graphs: none (per-module CUDA graphs are not priced; the host's launch cost is planned as without them)");
    // Experts' GEMMs: Transformer Engine's GroupedLinear under --moe-grouped-gemm, Megatron's SequentialMLP
    // without it, one launch per expert either way; the legacy grouped_gemm package, one for all.
    l.expert_gemms = v.flag("--moe-grouped-gemm") && v.flag("--moe-use-legacy-grouped-gemm") ? ExpertGemms::grouped
                                                                                              : ExpertGemms::per_expert;
    // The token dispatcher: flex runs DeepEP (Megatron's default backend) or HybridEP; allgather, Megatron's
    // default type, is not modelled and is planned as alltoall, and said so.
    const std::string dispatcher = v.text("--moe-token-dispatcher-type", "");
    if (dispatcher == "flex" || v.flag("--moe-enable-deepep"))
        l.moe_dispatcher = v.text("--moe-flex-dispatcher-backend", "deepep") == "hybridep" ? Dispatcher::hybridep : Dispatcher::deepep;
    else if (dispatcher == "allgather" || (dispatcher.empty() && v.has("--num-experts")))
        d.notes.push_back("layout.moe_dispatcher: alltoall (Megatron's allgather dispatcher, its default, is not modelled)");
    // Token dropping: shardplan plans the capacity padded, as Megatron's token-drop recipes run it; without
    // --moe-pad-expert-input-to-capacity an expert takes at most that share, which is planned and said.
    if (v.has("--moe-expert-capacity-factor")) {
        l.moe_capacity_factor = v.number("--moe-expert-capacity-factor", 0);
        if (!(l.moe_capacity_factor > 0)) v.bad("--moe-expert-capacity-factor", "a positive capacity factor");
        if (!v.flag("--moe-pad-expert-input-to-capacity"))
            d.notes.push_back("layout.moe_capacity_factor: planned padded to capacity (without "
                              "--moe-pad-expert-input-to-capacity an expert takes at most that share: an upper bound)");
    }
    l.zero = v.flag("--use-distributed-optimizer") ? 1 : 0;
    if (v.flag("--use-torch-fsdp2")) l.zero = 3;
    if (v.flag("--use-megatron-fsdp")) {
        const std::string s = v.text("--data-parallel-sharding-strategy", "optim_grads_params");
        l.zero = s == "optim" ? 1 : s == "optim_grads" ? 2 : s == "optim_grads_params" ? 3 : 0;
    }
    if (v.flag("--fp16")) l.precision = Precision::fp16;
    else if (v.flag("--bf16")) l.precision = Precision::bf16;
    else v.bad("--bf16", "--bf16 or --fp16 (shardplan does not model fp32 training)");
    if (v.has("--fp8-format")) l.precision = v.text("--fp8-recipe", "delayed") == "mxfp8" ? Precision::mxfp8 : Precision::fp8;
    if (v.has("--fp4-format")) l.precision = Precision::nvfp4;
    l.fp8_params = v.flag("--fp8-param-gather");
    l.grad_dtype = v.flag("--grad-reduce-in-bf16") ? GradDtype::bf16 : GradDtype::fp32;
    if (!v.flag("--grad-reduce-in-bf16"))
        d.notes.push_back("layout.grad_dtype: fp32, Megatron's default (--accumulate-allreduce-grads-in-fp32)");
    const std::string gran = v.text("--recompute-granularity", v.flag("--recompute-activations") ? "selective" : "");
    if (gran == "full") {
        l.recompute = Recompute::full;
        const std::string method = v.text("--recompute-method", "uniform");
        const auto parsed = parse_enum<RecomputeMethod>(method);
        if (!parsed) v.bad("--recompute-method", "uniform or block, got \"" + method + "\"");
        l.recompute_method = *parsed;
        l.recompute_layers = v.integer("--recompute-num-layers", 1);
        if (l.recompute_layers < 1) v.bad("--recompute-num-layers", "at least 1 layer");
    } else if (gran == "selective") {
        l.recompute = Recompute::selective;
        if (v.has("--recompute-modules")) {
            for (const json& mod : v.given.at("--recompute-modules"))
                l.recompute_modules |= module_bit(*parse_enum<RecomputeModule>(mod.get<std::string>()));
        }
    }
    // --attention-backend: flash (FlashAttention), fused (cuDNN through Transformer Engine), unfused or
    // local (scores stored); auto lets Transformer Engine choose, which is cuDNN's fused attention on
    // Hopper and later (framework_defaults).
    const std::string backend = v.text("--attention-backend", "auto");
    if (backend == "unfused" || backend == "local") l.attention_kernel = AttentionKernel::unfused;
    else if (backend == "flash") l.attention_kernel = AttentionKernel::flash;
    else l.attention_kernel = AttentionKernel::fused;
    l.dropout = v.number("--hidden-dropout", 0.1) > 0 || v.number("--attention-dropout", 0.1) > 0;
    if (!v.has("--hidden-dropout") || !v.has("--attention-dropout"))
        d.notes.push_back("layout.dropout: Megatron's default --hidden-dropout / --attention-dropout 0.1");
    // Megatron fuses gradient accumulation into the weight-gradient GEMM unless told not to.
    l.grad_accumulation = v.flag("--no-gradient-accumulation-fusion") ? GradAccumulation::eager : GradAccumulation::fused;
    l.order = *parse_order(v.flag("--use-tp-pp-dp-mapping") ? "tp-cp-ep-pp-dp" : "tp-cp-ep-dp-pp");
    if (v.has("--nproc-per-node") || v.has("--nproc_per_node") || v.has("--nnodes"))
        d.gpus = v.integer("--nproc-per-node", v.integer("--nproc_per_node", 1)) * v.integer("--nnodes", 1);
    return d;
}

Draft torchtitan_layout(const Values& v) {
    Draft d;
    Layout& l = d.l;
    l.framework = "torchtitan";
    // What torchtitan brings (framework_defaults): eager gradient accumulation (FSDP2 / AccumulateGrad,
    // compiled or not), F.cross_entropy on pred.float(), the expandable allocator its run_train.sh
    // launches with, fp32 gradients (training.mixed_precision_reduce: float32 is its only choice); what
    // the file sets below overrides them.
    apply_framework_defaults(framework_defaults(l.framework), l);
    // Eager PyTorch ops unless torch.compile fuses them (training.compile, or [compile] enable).
    l.kernels = v.flag("training.compile") || v.flag("compile.enable") ? Kernels::fused : Kernels::eager;
    d.notes.push_back("layout.allocator: expandable, as torchtitan's run_train.sh launches with "
                      "PYTORCH_ALLOC_CONF=expandable_segments:True");
    // Async TP, under whichever table this torchtitan version keeps it.
    l.tp_comm_overlap = v.flag("parallelism.enable_async_tensor_parallel") || v.flag("experimental.enable_async_tensor_parallel") ||
                        v.flag("compile.enable_async_tensor_parallel");
    const std::string P = "parallelism.";
    const int64_t replicate = v.integer(P + "data_parallel_replicate_degree", 1);
    const int64_t shard = v.integer(P + "data_parallel_shard_degree", -1, -1);
    if (shard == 0) v.bad(P + "data_parallel_shard_degree", "-1 (the rest) or a positive integer");
    if (replicate > 1 && shard > 1)
        v.bad(P + "data_parallel_shard_degree",
              "1 with data_parallel_replicate_degree > 1: HSDP (replicated shards) is not modelled");
    d.replicate = replicate;
    d.shard = shard;
    l.tp = v.integer(P + "tensor_parallel_degree", 1);
    l.cp = v.integer(P + "context_parallel_degree", 1);
    l.pp = v.integer(P + "pipeline_parallel_degree", 1);
    l.ep = v.integer(P + "expert_parallel_degree", 1);
    l.etp = v.integer(P + "expert_tensor_parallel_degree", 0, 0);
    const std::string backend = v.text(P + "expert_parallel_comm_backend", "standard");
    l.moe_dispatcher = backend == "deepep" ? Dispatcher::deepep : backend == "hybridep" ? Dispatcher::hybridep : Dispatcher::alltoall;
    // FSDP whenever parameters are sharded, and with context parallelism always: torchtitan shards over
    // data_parallel_shard × cp (ParallelDims.fsdp_enabled: dp_shard or cp enabled), so CP beside replicas
    // is HSDP.
    if (replicate > 1 && l.cp > 1)
        v.bad(P + "data_parallel_replicate_degree",
              "1 with context_parallel_degree > 1: torchtitan then shards over the CP ranks beside the replicas (HSDP, "
              "not modelled)");
    l.zero = shard > 1 || (shard == -1 && replicate == 1) || l.cp > 1 ? 3 : 0;
    l.dp = shard > 1 ? shard : shard == -1 ? 0 : replicate;  // 0: the rest of the GPUs, once they are known
    l.seq_len = v.integer("training.seq_len", 2048);
    if (!v.has("training.seq_len")) d.notes.push_back("layout.seq_len: torchtitan's default training.seq_len 2048");
    const int64_t local = v.integer("training.local_batch_size", 8);
    if (!v.has("training.local_batch_size"))
        d.notes.push_back("layout.micro_batch: torchtitan's default training.local_batch_size 8");
    l.micro_batch = l.pp > 1 ? v.integer(P + "pipeline_parallel_microbatch_size", 1) : local;
    if (l.pp > 1 && local % l.micro_batch != 0)
        v.bad(P + "pipeline_parallel_microbatch_size", fmt::format("a divisor of training.local_batch_size ({})", local));
    const int64_t gb = v.integer("training.global_batch_size", -1, -1);
    l.global_batch = gb > 0 ? gb : -local;  // negative: local_batch_size × dp, once dp is known
    const std::string sched = v.text(P + "pipeline_parallel_schedule", "1F1B");
    if (l.pp > 1) {
        if (sched == "1F1B") l.schedule = Schedule::one_f_one_b;
        else if (sched == "GPipe") l.schedule = Schedule::gpipe;
        else if (sched == "Interleaved1F1B") l.schedule = Schedule::interleaved;
        else v.bad(P + "pipeline_parallel_schedule", "1F1B, GPipe or Interleaved1F1B (the schedules shardplan models)");
    }
    if (l.schedule == Schedule::interleaved) l.vpp = 2;  // torchtitan's default stages per rank for looped schedules
    if (v.text("training.mixed_precision_param", "bfloat16") != "bfloat16")
        v.bad("training.mixed_precision_param", "bfloat16 (shardplan does not model fp32 training)");
    if (v.has("model.converters")) {
        for (const json& c : v.given.at("model.converters")) {
            if (c == "float8") l.precision = Precision::fp8;
            if (c == "mx") l.precision = Precision::mxfp8;
        }
    }
    const std::string mode = v.text("activation_checkpoint.mode", "selective");
    if (mode == "full") l.recompute = Recompute::full;
    if (mode == "selective") {
        const std::string opt = v.text("activation_checkpoint.selective_ac_option", "2");
        if (opt != "op")
            v.bad("activation_checkpoint.selective_ac_option",
                  "\"op\": layer-level selective checkpointing (every " + opt +
                      "th layer recomputed whole) is not modelled yet");
        l.recompute = Recompute::selective;
        l.recompute_modules = op_level_selective_modules();
    }
    if (v.has("model.name")) {
        const auto p = torchtitan_preset(v.text("model.name", ""), v.text("model.flavor", ""));
        if (p) d.model = preset_model(*p);
    }
    return d;
}

Draft deepspeed_layout(const Values& v, const ImportContext& ctx) {
    Draft d;
    Layout& l = d.l;
    l.framework = "DeepSpeed";
    l.tp = v.integer("tensor_parallel.autotp_size", 1);
    l.zero = static_cast<int>(v.integer("zero_optimization.stage", 0, 0));
    l.micro_batch = v.integer("train_micro_batch_size_per_gpu", 1);
    const int64_t gas = v.integer("gradient_accumulation_steps", 1);
    if (!v.has("train_batch_size")) v.bad("train_batch_size", "the global batch");
    l.global_batch = v.integer("train_batch_size", 0);
    if (l.global_batch % (l.micro_batch * gas) != 0)
        v.bad("train_batch_size", fmt::format("a multiple of train_micro_batch_size_per_gpu × gradient_accumulation_steps "
                                              "({})", l.micro_batch * gas));
    l.dp = l.global_batch / (l.micro_batch * gas);
    d.gpus = l.dp * l.tp;
    if (v.flag("fp16.enabled")) l.precision = Precision::fp16;
    else if (v.flag("bf16.enabled")) l.precision = Precision::bf16;
    else v.bad("bf16.enabled", "true, or fp16.enabled true (shardplan does not model fp32 training)");
    l.recompute = v.has("activation_checkpointing.partition_activations") ||
                          v.has("activation_checkpointing.contiguous_memory_optimization")
                      ? Recompute::full
                      : Recompute::none;
    l.sequence_parallel = false;
    // What DeepSpeed brings (framework_defaults), as a case naming it gets: with bf16 its BF16 optimizer
    // accumulates the gradients in fp32 after every backward, keeping the bf16 ones beside (ZeRO-0/1);
    // with fp16 the gradients stay fp16 and are reduced so (communication_data_type's default).
    apply_framework_defaults(framework_defaults(l.framework, "", l.precision), l);
    // overlap_comm: gradients reduced in buckets during the backward; unset, DeepSpeed's default is
    // `stage == 3` (runtime/zero/config.py), and ZeRO-3 prefetches its gathers either way.
    l.dp_comm_overlap = v.has("zero_optimization.overlap_comm") ? v.flag("zero_optimization.overlap_comm") : l.zero >= 3;
    // With bf16 and ZeRO stage 0 DeepSpeed runs that optimizer, which partitions the fp32 master weights
    // and moments over the data-parallel ranks itself (runtime/bf16_optimizer.py: partition_count =
    // dp world size): ZeRO-1's memory. BLOOM's launch script: "bf16 must use z0! it implements its own
    // zero stage 1 equivalent".
    if (l.precision == Precision::bf16 && l.zero == 0) {
        l.zero = 1;
        d.notes.push_back("layout.zero: 1 for zero_optimization.stage 0 with bf16: DeepSpeed's BF16 optimizer partitions "
                          "the fp32 master weights and optimizer states over data parallelism itself");
    }
    if (!ctx.seq_len) throw ConfigError("--seq-len", "the sequence length (a DeepSpeed config does not give it)");
    return d;
}

// What a torchtitan file leaves to the GPU count and the model, once dp is known: replicas whose shard
// degree is the rest (DDP when nothing is left, HSDP otherwise), and the virtual stages its split makes.
void torchtitan_degrees(const Values& v, const Draft& d, const ModelSpec& m, Layout& l) {
    const std::string P = "parallelism.";
    if (d.shard == -1 && d.replicate > 1) {
        const std::string key = P + "data_parallel_shard_degree";
        if (l.dp % d.replicate != 0)
            v.bad(key, fmt::format("a data-parallel degree ({}) divisible by data_parallel_replicate_degree ({})", l.dp, d.replicate));
        if (l.dp / d.replicate > 1)
            v.bad(key, fmt::format("1 with data_parallel_replicate_degree > 1, it comes to {} (the rest): HSDP "
                                   "(replicated shards) is not modelled", l.dp / d.replicate));
        l.zero = 0;
    }
    const int64_t local = v.integer("training.local_batch_size", 8);
    if (l.pp > 1 && local * l.dp != l.global_batch)
        v.bad("training.global_batch_size", "local_batch_size × dp with pipeline parallelism (shardplan streams "
                                            "every micro-batch of a step through one pipeline pass)");
    const bool looped = l.schedule == Schedule::interleaved;
    if (v.has(P + "module_fqns_per_model_part")) {
        const int64_t parts = static_cast<int64_t>(v.given.at(P + "module_fqns_per_model_part").size());
        if (parts % l.pp != 0) v.bad(P + "module_fqns_per_model_part", fmt::format("a multiple of pp ({}) parts", l.pp));
        if (looped) l.vpp = parts / l.pp;
    } else if (looped && v.has(P + "pipeline_parallel_layers_per_stage")) {
        const int64_t per = v.integer(P + "pipeline_parallel_layers_per_stage", 1);
        const int64_t stages = (m.layers + v.integer(P + "pipeline_parallel_first_stage_less_layers", 1, 0) +
                                v.integer(P + "pipeline_parallel_last_stage_less_layers", 1, 0) + per - 1) / per;
        if (stages % l.pp != 0)
            v.bad(P + "pipeline_parallel_layers_per_stage",
                  fmt::format("a split into a multiple of pp ({}) stages, it makes {}", l.pp, stages));
        l.vpp = stages / l.pp;
    }
}

}  // namespace

Imported import_launch(Framework f, const std::string& text, const ImportContext& ctx, const std::string& field) {
    Values v{f, field, {}, 0};
    if (f == Framework::megatron) v = megatron_values(text, field);
    else flatten(f == Framework::torchtitan ? parse_toml(text, field) : parse_json_text(text, field), "", v, 0);

    Draft d = f == Framework::megatron ? megatron_layout(v) : f == Framework::torchtitan ? torchtitan_layout(v)
                                                                                        : deepspeed_layout(v, ctx);
    Imported im;
    im.ignored = v.ignored;
    im.notes = d.notes;
    Case& c = im.c;
    c.model = ctx.model ? *ctx.model : d.model ? *d.model : f == Framework::megatron ? megatron_model(v) : ModelSpec{};
    if (c.model.layers == 0)
        throw ConfigError("--model", "the model (a preset, model JSON or Hugging Face config.json): the " +
                                         std::string(enum_name(f)) + " configuration does not name one shardplan knows");
    c.cluster = ctx.cluster;
    Layout& l = d.l;
    if (ctx.seq_len) l.seq_len = *ctx.seq_len;
    // How many GPUs: given, else what the file implies, else every degree must be stated.
    if (ctx.gpus) c.cluster.gpus = *ctx.gpus;
    else if (d.gpus) c.cluster.gpus = *d.gpus;
    else if (l.dp > 0) c.cluster.gpus = ranks(l);
    else throw ConfigError("--gpus", "the number of GPUs (the configuration leaves the data-parallel degree to them)");
    validate_cluster(c.cluster, "--gpus");
    if (f == Framework::megatron || l.dp == 0) {
        l.dp = 0;
        derive_dp(l, c.cluster, field + " (data-parallel degree)");
    }
    if (l.global_batch < 0) l.global_batch = -l.global_batch * l.dp;  // torchtitan: local × dp
    if (l.global_batch == 0) l.global_batch = l.micro_batch * l.dp;
    if (f == Framework::torchtitan) torchtitan_degrees(v, d, c.model, l);
    if (l.schedule == Schedule::one_f_one_b && l.vpp > 1) l.schedule = Schedule::interleaved;
    if (l.pp == 1) l.vpp = 1;
    if (l.pp == 1 && l.schedule != Schedule::one_f_one_b) l.schedule = Schedule::one_f_one_b;
    if (f == Framework::megatron && v.has("--num-layers-per-virtual-pipeline-stage") && l.pp > 1) {
        const int64_t per = v.integer("--num-layers-per-virtual-pipeline-stage", 1);
        if (c.model.layers % (per * l.pp) != 0)
            v.bad("--num-layers-per-virtual-pipeline-stage", fmt::format("a divisor of layers / pp ({})", c.model.layers / l.pp));
        l.vpp = c.model.layers / (per * l.pp);
        l.schedule = l.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    }
    // An expert TP degree in the configuration of a dense model splits nothing (Megatron and torchtitan
    // read it only for expert layers): it is dropped, and said, not carried as a setting the plan refuses.
    if (!c.model.moe && l.etp > 0 && l.etp != l.tp) {
        im.notes.push_back(fmt::format("layout.etp: null (the configuration's expert TP {} splits nothing in a dense model)", l.etp));
        l.etp = 0;
    }
    if (auto p = check_layout(c.model, c.cluster, l))
        throw ConfigError(field + " (" + p->field + ")", p->expected);
    c.layout = l;
    c.id = "imported-" + std::string(enum_name(f));
    return im;
}

json imported_to_json(const Imported& im, const std::string& source) {
    const Case& c = im.c;
    // A preset by its name only when it is that preset unchanged (as the cluster below).
    json model = has_model_preset(c.model.name) && to_json(preset_model(c.model.name)) == to_json(c.model)
                     ? json(c.model.name)
                     : to_json(c.model);
    if (model.is_object()) {
        model.erase("params_total");
        model.erase("params_active");
    }
    json cluster = to_json(c.cluster);
    for (const ClusterSpec& p : cluster_presets()) {
        if (p.name != c.cluster.name) continue;
        ClusterSpec same = p;
        same.gpus = c.cluster.gpus;
        if (to_json(same) == cluster) cluster = {{"preset", c.cluster.name}, {"gpus", c.cluster.gpus}};
    }
    json layout = to_json(c.layout);
    json derived = json::array();
    for (const std::string& n : im.notes) derived.push_back(n);
    return {{"id", c.id}, {"source", source}, {"model", model}, {"cluster", cluster}, {"layout", layout},
            {"derived", derived}};
}

}  // namespace shardplan
