// Framework configurations (docs/export.md). Option names: Megatron-LM megatron/training/arguments.py,
// torchtitan torchtitan/config/job_config.py, DeepSpeed docs/config-json.
#include "shardplan/export.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "shardplan/error.h"
#include "shardplan/import.h"
#include "shardplan/plan.h"
#include "shardplan/schedule.h"

namespace shardplan {

namespace {

// The rank order as a framework must match it: ep's place matters only when it has ranks, so with a
// dense model or ep = 1 it is left out ("tp-cp-pp-dp").
std::string order_to_match(const ModelSpec& m, const Layout& l) {
    std::string order = order_string(l);
    if (m.moe && l.ep > 1) return order;
    const size_t at = order.find("ep-");
    if (at != std::string::npos) order.erase(at, 3);
    else if (order.ends_with("-ep")) order.erase(order.size() - 3);
    return order;
}

Export refuse(Framework f, std::string why) {
    Export e;
    e.refusal = fmt::format("{}: {}", enum_name(f), why);
    return e;
}

// Full recomputation with anything but one checkpoint per layer (Megatron's uniform method, N = 1):
// what torchtitan and DeepSpeed, which wrap every layer on its own, cannot express.
bool checkpoints_groups_or_blocks(const Layout& l) {
    return l.recompute == Recompute::full && (l.recompute_method != RecomputeMethod::uniform || l.recompute_layers != 1);
}

std::string megatron_precision(Precision p) {
    switch (p) {
        case Precision::bf16: return "--bf16";
        case Precision::fp16: return "--fp16";
        case Precision::fp8: return "--bf16 --fp8-format hybrid --fp8-recipe tensorwise";
        case Precision::mxfp8: return "--bf16 --fp8-format e4m3 --fp8-recipe mxfp8";
        case Precision::nvfp4: return "--bf16 --fp4-format e2m1 --fp4-recipe nvfp4";
    }
    return "--bf16";
}

Export megatron(const ModelSpec& m, const Layout& l) {
    const Framework F = Framework::megatron;
    if (l.schedule == Schedule::gpipe) return refuse(F, "Megatron-LM has no GPipe schedule (use 1f1b or interleaved)");
    if (l.schedule == Schedule::zb) return refuse(F, "Megatron-LM has no zero-bubble (ZB-H1) schedule");
    if (l.schedule == Schedule::dualpipe) return refuse(F, "Megatron-LM has no DualPipe schedule");
    if (recomputes(l, RecomputeModule::mlp_act))
        return refuse(F, "Megatron-LM has no recompute module for a dense MLP's activation alone (mlp_act; use mlp)");
    if (recomputes(l, RecomputeModule::every_second_gemm))
        return refuse(F, "Megatron-LM has no recompute module for every second GEMM of a layer (every_second_gemm, "
                         "torchtitan's op-level checkpointing; use mlp, or full)");
    if (m.mlp == MlpKind::geglu)
        return refuse(F, "Megatron-LM's arguments have no gated GELU MLP (model.mlp geglu; --swiglu gates with SiLU)");
    if (l.zero == 2)
        return refuse(F, "Megatron-LM has no ZeRO-2: its distributed optimizer shards the optimizer state (zero 1) and "
                         "keeps the gradient buffer whole; FSDP shards everything (zero 3)");
    const std::string order = order_to_match(m, l);
    const bool pp_inside_dp = order == "tp-cp-ep-pp-dp" || order == "tp-cp-pp-dp";
    if (!pp_inside_dp && order != "tp-cp-ep-dp-pp" && order != "tp-cp-dp-pp")
        return refuse(F, fmt::format("rank order {} (Megatron offers tp-cp-ep-dp-pp and, with "
                                     "--use-tp-pp-dp-mapping, tp-cp-ep-pp-dp)", order_string(l)));
    std::vector<std::string> a;
    auto arg = [&](const std::string& s) { a.push_back(s); };
    // Model.
    arg(fmt::format("--num-layers {}", m.layers));
    arg(fmt::format("--hidden-size {}", m.hidden));
    arg(fmt::format("--ffn-hidden-size {}", m.ffn_hidden));
    arg(fmt::format("--num-attention-heads {}", m.heads));
    // Used by the tokenizers that take it (NullTokenizer); with a real tokenizer its own size wins. It
    // keeps the arguments a whole model description (shardplan import reads it back).
    arg(fmt::format("--vocab-size {}", m.vocab));
    if (m.attention == AttentionKind::mla && m.mla) {
        arg("--multi-latent-attention");
        if (m.mla->q_lora_rank > 0) arg(fmt::format("--q-lora-rank {}", m.mla->q_lora_rank));
        arg(fmt::format("--kv-lora-rank {}", m.mla->kv_lora_rank));
        arg(fmt::format("--qk-head-dim {}", m.mla->qk_nope_head_dim));
        arg(fmt::format("--qk-pos-emb-head-dim {}", m.mla->qk_rope_head_dim));
        arg(fmt::format("--v-head-dim {}", m.mla->v_head_dim));
    } else {
        if (m.kv_heads != m.heads) arg(fmt::format("--group-query-attention --num-query-groups {}", m.kv_heads));
        if (m.head_dim * m.heads != m.hidden) arg(fmt::format("--kv-channels {}", m.head_dim));
    }
    if (m.mlp == MlpKind::swiglu) arg("--swiglu");
    if (m.mlp == MlpKind::relu2) arg("--squared-relu");
    arg(m.norm == NormKind::rmsnorm ? "--normalization RMSNorm" : "--normalization LayerNorm");
    if (!m.linear_bias) arg("--disable-bias-linear");
    if (m.qkv_bias && !m.linear_bias) arg("--add-qkv-bias");
    if (m.qk_norm) arg("--qk-layernorm");
    if (!m.tied_embeddings) arg("--untie-embeddings-and-output-weights");
    arg("--position-embedding-type rope");
    if (m.moe) {
        const MoeSpec& e = *m.moe;
        arg(fmt::format("--num-experts {}", e.experts));
        arg(fmt::format("--moe-router-topk {}", e.top_k));
        arg(fmt::format("--moe-ffn-hidden-size {}", e.expert_ffn_hidden));
        if (e.shared_experts > 0)
            arg(fmt::format("--moe-shared-expert-intermediate-size {}", e.shared_experts * e.expert_ffn_hidden));
        if (e.dense_layers > 0 || e.layer_freq > 1) {
            std::string pattern = "'[";
            for (int64_t i = 0; i < m.layers; ++i) pattern += std::string(i ? "," : "") + (is_moe_layer(m, i) ? "1" : "0");
            arg("--moe-layer-freq " + pattern + "]'");
        }
        if (e.router_groups > 1 && e.group_topk > 0)
            arg(fmt::format("--moe-router-num-groups {} --moe-router-group-topk {}", e.router_groups, e.group_topk));
        // --moe-grouped-gemm runs Transformer Engine's GroupedLinear, one GEMM launch per expert; with
        // --moe-use-legacy-grouped-gemm, the grouped_gemm package's one launch for all of them.
        arg(l.expert_gemms == ExpertGemms::grouped ? "--moe-grouped-gemm --moe-use-legacy-grouped-gemm" : "--moe-grouped-gemm");
        if (l.moe_capacity_factor > 0)
            arg(fmt::format("--moe-expert-capacity-factor {:g} --moe-pad-expert-input-to-capacity", l.moe_capacity_factor));
        if (l.moe_dispatcher == Dispatcher::alltoall) arg("--moe-token-dispatcher-type alltoall");
        else arg(fmt::format("--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend {}", enum_name(l.moe_dispatcher)));
    }
    // Parallelism.
    arg(fmt::format("--tensor-model-parallel-size {}", l.tp));
    arg(fmt::format("--pipeline-model-parallel-size {}", l.pp));
    arg(fmt::format("--context-parallel-size {}", l.cp));
    if (m.moe) {
        arg(fmt::format("--expert-model-parallel-size {}", l.ep));
        arg(fmt::format("--expert-tensor-parallel-size {}", effective_etp(l)));
    }
    if (pp_inside_dp) arg("--use-tp-pp-dp-mapping");
    if (l.sequence_parallel && l.tp > 1) arg("--sequence-parallel");
    if (overlaps_tp(l)) arg("--tp-comm-overlap");
    if (m.moe && overlaps_ep(l)) arg("--overlap-moe-expert-parallel-comm");  // DualPipe is refused above
    if (l.cuda_graphs == CudaGraphs::full) arg("--cuda-graph-impl local --cuda-graph-scope full_iteration");
    if (l.pp > 1) {
        const std::vector<Stage> st = split_stages(m, l);
        if (l.vpp > 1) {
            arg(fmt::format("--num-virtual-stages-per-pipeline-rank {}", l.vpp));
            if (blocks_pipeline_sends(l)) arg("--no-overlap-p2p-communication");
            if (l.pp * l.vpp == m.layers + 2) arg("--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split");
            else if (m.layers % (l.pp * l.vpp) != 0)
                return refuse(F, fmt::format("{} layers do not split evenly into pp·vpp = {} chunks (Megatron needs "
                                             "an even split, or pp·vpp = layers + 2)", m.layers, l.pp * l.vpp));
        } else if (m.layers % l.pp != 0) {
            // Uneven: Megatron takes the first and last stage sizes and splits the rest evenly.
            const int64_t mid = st.size() > 2 ? st[1].layers : 0;
            for (size_t i = 1; i + 1 < st.size(); ++i)
                if (st[i].layers != mid)
                    return refuse(F, fmt::format("{} layers on {} stages leave middle stages of unequal size; Megatron "
                                                 "splits the middle evenly", m.layers, l.pp));
            arg(fmt::format("--decoder-first-pipeline-num-layers {}", st.front().layers));
            arg(fmt::format("--decoder-last-pipeline-num-layers {}", st.back().layers));
        }
    }
    if (l.zero == 1) arg("--use-distributed-optimizer");
    // DP overlap is opt-in in Megatron-LM: --overlap-grad-reduce (plain DDP or the distributed optimizer),
    // with the distributed optimizer --overlap-param-gather too.
    if (l.zero < 3 && l.dp_comm_overlap) arg(l.zero == 1 ? "--overlap-grad-reduce --overlap-param-gather" : "--overlap-grad-reduce");
    if (l.zero == 3) arg("--use-torch-fsdp2");
    if (l.recompute == Recompute::full)
        arg(fmt::format("--recompute-granularity full --recompute-method {} --recompute-num-layers {}",
                        enum_name(l.recompute_method), l.recompute_layers));
    if (l.recompute == Recompute::selective) {  // the modules the plan replays, by Megatron's names
        std::string mods;
        for (const auto& [mod, name] : EnumNames<RecomputeModule>::table)
            if (recomputes(l, mod)) mods += " " + std::string(name);
        arg("--recompute-granularity selective --recompute-modules" + mods);
    }
    arg(fmt::format("--attention-backend {}", enum_name(l.attention_kernel)));
    if (!l.dropout) arg("--attention-dropout 0.0 --hidden-dropout 0.0");
    // Training.
    arg(fmt::format("--micro-batch-size {}", l.micro_batch));
    arg(fmt::format("--global-batch-size {}", global_batch(l)));
    arg(fmt::format("--seq-length {}", l.seq_len));
    arg(fmt::format("--max-position-embeddings {}", l.seq_len));
    arg(megatron_precision(l.precision));
    // The weights held in 8 bits alone; MXFP8's gather then goes through the gradient buffer, which
    // Megatron-Core requires with it.
    if (keeps_fp8_params(l))
        arg(l.precision == Precision::mxfp8 ? "--fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag" : "--fp8-param-gather");
    if (l.grad_dtype == GradDtype::bf16) arg("--grad-reduce-in-bf16");  // read back as bf16 whatever the ZeRO stage
    if (l.grad_accumulation == GradAccumulation::eager) arg("--no-gradient-accumulation-fusion");
    Export e;
    for (size_t i = 0; i < a.size(); ++i) e.text += a[i] + (i + 1 < a.size() ? " \\\n" : "\n");
    return e;
}

Export torchtitan(const ModelSpec& m, const Layout& l) {
    const Framework F = Framework::torchtitan;
    if (l.zero == 1 || l.zero == 2)
        return refuse(F, "ZeRO-1/2 have no equivalent: torchtitan replicates parameters (DDP, zero 0) or shards them "
                         "with FSDP (zero 3)");
    if (l.zero == 0 && l.cp > 1)
        return refuse(F, "with context parallelism torchtitan always shards the parameters over the CP ranks (FSDP on "
                         "data_parallel_shard × cp; replicated data parallelism beside it is HSDP, which shardplan does "
                         "not model): zero 3");
    if (l.schedule == Schedule::zb)
        return refuse(F, "torchtitan's zero-bubble schedules are multi-stage (InterleavedZeroBubble, ZBVZeroBubble); "
                         "shardplan's zb is the single-stage ZB-H1");
    if (l.schedule == Schedule::dualpipe)
        return refuse(F, "torchtitan offers DualPipeV (one V-shaped pair of stages per rank); shardplan's dualpipe is "
                         "DeepSeek's original with two stages per rank");
    if (l.pp == 1 && l.schedule == Schedule::gpipe)
        return refuse(F, "without pipeline parallelism torchtitan runs each micro-batch's forward and backward in turn "
                         "(gradient accumulation), not all forwards first: schedule 1f1b");
    if (m.moe && overlaps_ep(l))
        return refuse(F, "torchtitan does not overlap the expert all-to-alls with another micro-batch: ep_comm_overlap false");
    if (!overlaps_dp(l) && l.dp > 1)
        return refuse(F, "torchtitan's data parallelism (DDP's buckets, FSDP's prefetch) always overlaps its traffic with "
                         "the compute: dp_comm_overlap true");
    if (l.moe_capacity_factor > 0)
        return refuse(F, "torchtitan's MoE is dropless (no capacity factor): moe_capacity_factor 0");
    if (overlaps_tp(l) && l.kernels != Kernels::fused)
        return refuse(F, "torchtitan's async TP runs only under torch.compile: kernels fused, or tp_comm_overlap false");
    if (l.attention_kernel == AttentionKernel::unfused)
        return refuse(F, "torchtitan's attention is PyTorch SDPA, which never stores the scores: attention_kernel flash or fused");
    if (l.tp > 1 && !l.sequence_parallel)
        return refuse(F, "torchtitan's TP plan shards the norms along the sequence (SequenceParallel) whenever tp > 1: "
                         "sequence_parallel true");
    if (l.precision == Precision::nvfp4) return refuse(F, "torchtitan has no nvfp4 training recipe");
    if (l.precision == Precision::fp16) return refuse(F, "torchtitan trains in bfloat16 or float32 (no fp16)");
    if (const std::string order = order_to_match(m, l); order != "tp-cp-ep-dp-pp" && order != "tp-cp-dp-pp")
        return refuse(F, fmt::format("rank order {}: torchtitan builds its device mesh as pp, dp, cp, tp (outermost first)",
                                     order_string(l)));
    if (m.moe && effective_etp(l) != l.tp && effective_etp(l) != 1)
        return refuse(F, "torchtitan supports expert tensor parallelism equal to tp or 1");
    // torchtitan borrows expert-parallel ranks from the FSDP shard and CP dimensions (and from TP when
    // etp = 1): parallelisms/parallel_dims.py.
    const int64_t dp_shard = l.zero == 3 ? l.dp : 1;
    if (m.moe && l.ep > 1 && (dp_shard * l.cp * (effective_etp(l) == 1 ? l.tp : 1)) % l.ep != 0)
        return refuse(F, fmt::format("ep {} must divide the FSDP-shard × cp{} ranks ({}) it is borrowed from", l.ep,
                                     effective_etp(l) == 1 ? " × tp" : "",
                                     dp_shard * l.cp * (effective_etp(l) == 1 ? l.tp : 1)));
    if (l.pp > 1 && l.schedule == Schedule::interleaved && m.layers % (l.pp * l.vpp) != 0)
        return refuse(F, fmt::format("{} layers do not split evenly into {} virtual stages", m.layers, l.pp * l.vpp));
    if (checkpoints_groups_or_blocks(l))
        return refuse(F, "its full activation checkpointing wraps every layer on its own (plan with --recompute-method "
                         "uniform --recompute-layers 1)");
    if (l.recompute == Recompute::selective) {
        // torchtitan's op-level selective checkpointing replays a fixed set; a dense model has no MoE act.
        const uint32_t relevant = m.moe ? ~0u : ~module_bit(RecomputeModule::moe_act);
        uint32_t planned = 0;
        for (const auto& [mod, name] : EnumNames<RecomputeModule>::table)
            if (recomputes(l, mod)) planned |= module_bit(mod);
        if ((planned & relevant) != (op_level_selective_modules() & relevant)) {
            Layout op = l;
            op.recompute_modules = op_level_selective_modules() & relevant;
            return refuse(F, fmt::format("its selective checkpointing (selective_ac_option \"op\") replays {}; this plan "
                                         "replays {} (plan with --recompute-modules {}, or full)",
                                         recompute_modules_string(op), recompute_modules_string(l),
                                         recompute_modules_string(op)));
        }
    }
    const char* schedule = "1F1B";
    if (l.schedule == Schedule::gpipe) schedule = "GPipe";
    if (l.schedule == Schedule::interleaved) schedule = "Interleaved1F1B";
    std::string t;
    t += "# torchtitan job config from shardplan: " + to_string(l) + "\n";
    t += "[training]\n";
    // local_batch_size is one rank's batch per forward-backward pass: with PP, every micro-batch the
    // schedule streams (split by pipeline_parallel_microbatch_size); without, one micro-batch, and
    // global_batch_size makes the gradient accumulation.
    t += fmt::format("local_batch_size = {}\n", l.pp > 1 ? l.micro_batch * micro_batches(l) : l.micro_batch);
    t += fmt::format("global_batch_size = {}\n", global_batch(l));
    t += fmt::format("seq_len = {}\n", l.seq_len);
    t += "mixed_precision_param = \"bfloat16\"\n";
    // Fused kernels as planned: torch.compile fuses the activation and the loss that eager ops keep apart.
    if (l.kernels == Kernels::fused) t += "compile = true\n";
    // SDPA picks its backend at run time: FlashAttention-2 unless cuDNN's is asked for (PyTorch 2.5.0's
    // default on H100 and later, turned off again in 2.5.1); the job config has no key for it.
    if (l.attention_kernel == AttentionKernel::fused)
        t += "# attention planned as fused (cuDNN): run SDPA under "
             "torch.nn.attention.sdpa_kernel(SDPBackend.CUDNN_ATTENTION) (PyTorch >= 2.5)\n";
    t += "\n[parallelism]\n";
    t += fmt::format("data_parallel_replicate_degree = {}\n", l.zero == 0 ? l.dp : 1);
    t += fmt::format("data_parallel_shard_degree = {}\n", l.zero == 0 ? 1 : l.dp);
    t += fmt::format("tensor_parallel_degree = {}\n", l.tp);
    t += fmt::format("context_parallel_degree = {}\n", l.cp);
    t += fmt::format("pipeline_parallel_degree = {}\n", l.pp);
    if (l.pp > 1) {
        t += fmt::format("pipeline_parallel_schedule = \"{}\"\n", schedule);
        t += fmt::format("pipeline_parallel_microbatch_size = {}\n", l.micro_batch);
        const int64_t chunks = l.pp * (l.schedule == Schedule::interleaved ? l.vpp : 1);
        if (m.layers % chunks == 0) {
            // torchtitan counts the embedding and the output layer as one layer each unless told not to:
            // with them it would make ceil((L + 2) / per_stage) stages.
            t += fmt::format("pipeline_parallel_layers_per_stage = {}\n", m.layers / chunks);
            t += "pipeline_parallel_first_stage_less_layers = 0\npipeline_parallel_last_stage_less_layers = 0\n";
        } else {  // uneven single-stage split (interleaving with an uneven split is refused above)
            t += "module_fqns_per_model_part = [\n";
            for (const Stage& st : split_stages(m, l)) {
                t += "  [";
                if (st.first) t += "\"tok_embeddings\", ";
                for (int64_t i = 0; i < st.layers; ++i)
                    t += fmt::format("{}\"layers.{}\"", i ? ", " : "", st.first_layer + i);
                if (st.last) t += ", \"norm\", \"output\"";
                t += "],\n";
            }
            t += "]\n";
        }
    }
    if (m.moe) {
        t += fmt::format("expert_parallel_degree = {}\n", l.ep);
        t += fmt::format("expert_tensor_parallel_degree = {}\n", effective_etp(l));
        t += fmt::format("expert_parallel_comm_backend = \"{}\"\n",
                         l.moe_dispatcher == Dispatcher::alltoall ? "standard" : enum_name(l.moe_dispatcher));
    }
    if (overlaps_tp(l)) t += "enable_async_tensor_parallel = true\n";
    t += "\n[activation_checkpoint]\n";
    t += fmt::format("mode = \"{}\"\n", enum_name(l.recompute));
    if (l.recompute == Recompute::selective) t += "selective_ac_option = \"op\"\n";
    // [model]: torchtitan's own name and flavor where the model is one it ships; else the model is the
    // user's to register (import then needs --model).
    std::string model_keys;
    for (const char* size : {"8", "70", "405"})
        if (m.name == fmt::format("llama3-{}b", size)) model_keys = fmt::format("name = \"llama3\"\nflavor = \"{}B\"\n", size);
    if (m.name == "deepseek-v3") model_keys = "name = \"deepseek_v3\"\nflavor = \"671B\"\n";
    if (l.precision == Precision::fp8) model_keys += "converters = [\"float8\"]\n";
    if (l.precision == Precision::mxfp8) model_keys += "converters = [\"mx\"]\n";
    if (!model_keys.empty()) t += "\n[model]\n" + model_keys;
    if (l.precision == Precision::fp8) t += "\n[float8]\nrecipe_name = \"tensorwise\"\n";
    if (l.precision == Precision::mxfp8) t += "\n[mx]\nrecipe_name = \"mxfp8\"\n";
    Export e;
    e.text = t;
    return e;
}

Export deepspeed(const ModelSpec& m, const Layout& l) {
    const Framework F = Framework::deepspeed;
    (void)m;
    if (l.pp > 1) return refuse(F, "pipeline parallelism is set up in model code (deepspeed.pipe.PipelineModule), not in the JSON config");
    if (l.cp > 1) return refuse(F, "context parallelism (ring attention) has no DeepSpeed config setting");
    if (l.ep > 1) return refuse(F, "expert parallelism is set up in model code (deepspeed.moe.layer.MoE ep_size)");
    if (l.moe_capacity_factor > 0)
        return refuse(F, "the capacity factor is set in model code (deepspeed.moe.layer.MoE capacity_factor)");
    if (l.schedule != Schedule::one_f_one_b)
        return refuse(F, "without pipeline parallelism DeepSpeed runs each micro-batch's forward and backward in turn "
                         "(gradient accumulation): schedule 1f1b");
    if (l.recompute == Recompute::selective)
        return refuse(F, "DeepSpeed has no selective recomputation setting (choose none or full)");
    if (checkpoints_groups_or_blocks(l))
        return refuse(F, "which layers are checkpointed is the model code's choice, not the config's (plan with "
                         "--recompute-method uniform --recompute-layers 1)");
    if (l.tp > 1 && l.zero == 3)
        return refuse(F, "DeepSpeed's AutoTP training (tensor_parallel.autotp_size) runs with ZeRO stages 0-2, not 3");
    if (l.precision != Precision::bf16 && l.precision != Precision::fp16)
        return refuse(F, fmt::format("the DeepSpeed config has no {} training setting (bf16 or fp16)", enum_name(l.precision)));
    if (l.tp > 1 && l.sequence_parallel)
        return refuse(F, "DeepSpeed's AutoTP splits the linear layers only and keeps the norms' activations whole: "
                         "sequence_parallel false");
    if (l.zero == 0 && l.precision == Precision::bf16 && l.dp > 1)
        return refuse(F, "with bf16 DeepSpeed runs its BF16 optimizer, which partitions the fp32 master weights and "
                         "optimizer state over the data-parallel ranks at stage 0 as at stage 1: zero 1");
    nlohmann::ordered_json j;
    j["train_batch_size"] = global_batch(l);
    j["train_micro_batch_size_per_gpu"] = l.micro_batch;
    j["gradient_accumulation_steps"] = micro_batches(l);
    j["zero_optimization"] = {{"stage", l.zero}, {"overlap_comm", overlaps_dp(l)}, {"contiguous_gradients", true}};
    j["bf16"] = {{"enabled", l.precision == Precision::bf16}};
    j["fp16"] = {{"enabled", l.precision == Precision::fp16}};
    if (l.tp > 1) j["tensor_parallel"] = {{"autotp_size", l.tp}};
    if (l.recompute == Recompute::full)
        j["activation_checkpointing"] = {{"partition_activations", l.tp > 1}, {"contiguous_memory_optimization", false},
                                         {"cpu_checkpointing", false}};
    Export e;
    e.text = j.dump(2) + "\n";
    return e;
}

/// What the configuration runs is what the plan planned: the text read back by the importer (the
/// framework's own defaults for what it leaves unsaid) plans the same step and memory, or the export is
/// refused naming the settings the framework would run otherwise. A setting that changes nothing (sequence
/// parallelism at tp 1, say) passes.
Export round_trip(const ModelSpec& m, const ClusterSpec& c, const Layout& l, Framework f, Export e) {
    ImportContext ctx;
    ctx.model = m;
    ctx.cluster = c;
    ctx.gpus = c.gpus;
    ctx.seq_len = l.seq_len;
    Imported back;
    try {
        back = import_launch(f, e.text, ctx, "the export");
    } catch (const ConfigError& err) {  // an exporter that writes what its importer refuses: a bug, said so
        return refuse(f, std::string("its configuration does not read back (") + err.what() + ")");
    }
    // torchtitan's job config has no key for SDPA's cuDNN backend: the export says in a comment how to run
    // it (above), which a TOML reader drops, so that setting is taken as said.
    if (f == Framework::torchtitan && l.attention_kernel == AttentionKernel::fused &&
        e.text.find("SDPBackend.CUDNN_ATTENTION") != std::string::npos)
        back.c.layout.attention_kernel = AttentionKernel::fused;
    const Plan a = evaluate(m, c, l), b = evaluate(back.c.model, back.c.cluster, back.c.layout);
    const auto same = [](double x, double y) { return std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y)); };
    if (same(a.time.step_s, b.time.step_s) && same(a.needed_bytes, b.needed_bytes) &&
        same(a.memory.total_bytes(), b.memory.total_bytes()))
        return e;
    // Name the settings that change the plan on their own (sequence parallelism at tp 1 does not), all that
    // differ where none does alone.
    const json planned = to_json(l), runs = to_json(back.c.layout);
    std::string moving, differing;
    for (const auto& [key, value] : planned.items()) {
        if (key == "framework" || !runs.contains(key) || runs[key] == value) continue;
        const std::string what = fmt::format("{} {} (not {})", key, runs[key].dump(), value.dump());
        differing += (differing.empty() ? "" : ", ") + what;
        json one = planned;
        one[key] = runs[key];
        try {
            const Plan p = evaluate(m, c, layout_from_json(one, "layout", c.gpu.generation, m.moe.has_value()));
            if (!same(p.time.step_s, a.time.step_s) || !same(p.needed_bytes, a.needed_bytes))
                moving += (moving.empty() ? "" : ", ") + what;
        } catch (const ConfigError&) {  // not a layout on its own: counted with the rest
        }
    }
    Export settings = refuse(f, fmt::format("it would run {}: plan with --framework {} (its defaults) or set {}",
                                            moving.empty() ? differing : moving, framework_name(f),
                                            moving.empty() ? "those" : "them"));
    settings.refused_for_settings = true;
    return settings;
}

}  // namespace

std::string framework_name(Framework f) {
    switch (f) {
        case Framework::megatron: return "Megatron-LM";
        case Framework::torchtitan: return "torchtitan";
        case Framework::deepspeed: return "DeepSpeed";
    }
    return "";
}

Export export_config(const ModelSpec& m, const ClusterSpec& c, const Layout& l, Framework f) {
    if (auto p = check_layout(m, c, l)) return refuse(f, p->field + ": expected " + p->expected);
    // No exporter writes a sliding or chunked window, or sandwich norms: the job it wrote would attend over
    // the whole sequence on every layer, or have two norms a layer.
    if (m.window_layers > 0)
        return refuse(f, fmt::format("model.sliding_window: shardplan does not write {} ({} tokens on {} layers) into "
                                     "this configuration, and without it every layer would attend over the whole sequence",
                                     m.window_kind == WindowKind::chunked ? "chunked attention" : "a sliding window",
                                     m.sliding_window, m.window_layers));
    if (m.sandwich_norms)
        return refuse(f, "model.sandwich_norms: shardplan does not write the norms after attention and after the MLP "
                         "into this configuration, and without them each layer would have two norms, not four");
    Export e;
    switch (f) {
        case Framework::megatron: e = megatron(m, l); break;
        case Framework::torchtitan: e = torchtitan(m, l); break;
        case Framework::deepspeed: e = deepspeed(m, l); break;
        default: return refuse(f, "unknown framework");
    }
    if (e.refusal) return e;
    return round_trip(m, c, l, f, std::move(e));
}

}  // namespace shardplan
