// The launch arguments and config keys of each framework that shardplan writes or reads, with the type
// and choices the framework's own parser gives them (include/shardplan/import.h). Sources:
// Megatron-LM megatron/training/arguments.py; torchtitan torchtitan/config/job_config.py;
// DeepSpeed docs/_pages/config-json.md and deepspeed/runtime/config.py. Kept sorted by name.
#include <algorithm>

#include "shardplan/import.h"

namespace shardplan {

namespace {

using K = ArgKind;

constexpr LaunchKey kMegatron[] = {
    {"--account-for-embedding-in-pipeline-split", K::flag, ""},
    {"--account-for-loss-in-pipeline-split", K::flag, ""},
    {"--add-qkv-bias", K::flag, ""},
    {"--attention-backend", K::text, "flash|fused|unfused|local|auto"},
    {"--attention-dropout", K::number, ""},
    {"--bf16", K::flag, ""},
    {"--context-parallel-size", K::integer, ""},
    {"--cuda-graph-impl", K::text, "none|local|transformer_engine"},
    {"--cuda-graph-scope", K::list, "attn|mlp|moe|moe_router|moe_preprocess|mamba|full_iteration"},
    {"--data-parallel-sharding-strategy", K::text, "no_shard|optim|optim_grads|optim_grads_params"},
    {"--decoder-first-pipeline-num-layers", K::integer, ""},
    {"--decoder-last-pipeline-num-layers", K::integer, ""},
    {"--disable-bias-linear", K::flag, ""},
    {"--expert-model-parallel-size", K::integer, ""},
    {"--expert-tensor-parallel-size", K::integer, ""},
    {"--ffn-hidden-size", K::integer, ""},
    {"--fp16", K::flag, ""},
    {"--fp4-format", K::text, "e2m1"},
    {"--fp4-recipe", K::text, "nvfp4|custom"},
    {"--fp8-format", K::text, "e4m3|hybrid"},
    {"--fp8-param-gather", K::flag, ""},
    {"--fp8-recipe", K::text, "tensorwise|delayed|mxfp8|blockwise|custom"},
    {"--global-batch-size", K::integer, ""},
    {"--grad-reduce-in-bf16", K::flag, ""},
    {"--group-query-attention", K::flag, ""},
    {"--hidden-dropout", K::number, ""},
    {"--hidden-size", K::integer, ""},
    {"--kv-channels", K::integer, ""},
    {"--kv-lora-rank", K::integer, ""},
    {"--max-position-embeddings", K::integer, ""},
    {"--micro-batch-size", K::integer, ""},
    {"--moe-enable-deepep", K::flag, ""},  // Megatron before the flex backends: the flex dispatcher with DeepEP
    {"--moe-expert-capacity-factor", K::number, ""},
    {"--moe-ffn-hidden-size", K::integer, ""},
    {"--moe-flex-dispatcher-backend", K::text, "deepep|hybridep"},
    {"--moe-grouped-gemm", K::flag, ""},
    {"--moe-layer-freq", K::text, ""},  // an integer, or a Python list '[0,1,1,...]' (moe_freq_type)
    {"--moe-pad-expert-input-to-capacity", K::flag, ""},
    {"--moe-router-group-topk", K::integer, ""},
    {"--moe-router-num-groups", K::integer, ""},
    {"--moe-router-topk", K::integer, ""},
    {"--moe-shared-expert-intermediate-size", K::integer, ""},
    {"--moe-token-dispatcher-type", K::text, "allgather|alltoall|flex"},
    {"--moe-use-legacy-grouped-gemm", K::flag, ""},
    {"--multi-latent-attention", K::flag, ""},
    {"--nnodes", K::integer, ""},  // torchrun
    {"--no-gradient-accumulation-fusion", K::flag, ""},
    {"--no-overlap-p2p-communication", K::flag, ""},
    {"--normalization", K::text, "LayerNorm|RMSNorm"},
    {"--nproc-per-node", K::integer, ""},  // torchrun
    {"--nproc_per_node", K::integer, ""},  // torchrun (older spelling)
    {"--num-attention-heads", K::integer, ""},
    {"--num-experts", K::integer, ""},
    {"--num-layers", K::integer, ""},
    {"--num-layers-per-virtual-pipeline-stage", K::integer, ""},
    {"--num-query-groups", K::integer, ""},
    {"--num-virtual-stages-per-pipeline-rank", K::integer, ""},
    {"--overlap-grad-reduce", K::flag, ""},
    {"--overlap-moe-expert-parallel-comm", K::flag, ""},
    {"--overlap-param-gather", K::flag, ""},
    {"--pipeline-model-parallel-size", K::integer, ""},
    {"--position-embedding-type", K::text, "learned_absolute|rope|mrope|relative|none"},
    {"--q-lora-rank", K::integer, ""},
    {"--qk-head-dim", K::integer, ""},
    {"--qk-layernorm", K::flag, ""},
    {"--qk-pos-emb-head-dim", K::integer, ""},
    {"--recompute-activations", K::flag, ""},
    {"--recompute-granularity", K::text, "full|selective"},
    {"--recompute-method", K::text, "uniform|block"},
    {"--recompute-modules", K::list, "core_attn|moe_act|layernorm|mla_up_proj|mlp|moe|shared_experts"},
    {"--recompute-num-layers", K::integer, ""},
    {"--reuse-grad-buf-for-mxfp8-param-ag", K::flag, ""},
    {"--seq-length", K::integer, ""},
    {"--sequence-parallel", K::flag, ""},
    {"--squared-relu", K::flag, ""},
    {"--swiglu", K::flag, ""},
    {"--tensor-model-parallel-size", K::integer, ""},
    {"--tp-comm-overlap", K::flag, ""},
    {"--untie-embeddings-and-output-weights", K::flag, ""},
    {"--use-distributed-optimizer", K::flag, ""},
    {"--use-megatron-fsdp", K::flag, ""},
    {"--use-torch-fsdp2", K::flag, ""},
    {"--use-tp-pp-dp-mapping", K::flag, ""},
    {"--v-head-dim", K::integer, ""},
    {"--vocab-size", K::integer, ""},
};

constexpr LaunchKey kTorchtitan[] = {
    {"activation_checkpoint.mode", K::text, "selective|full|none"},
    {"activation_checkpoint.selective_ac_option", K::text, ""},
    {"compile.enable", K::flag, ""},  // newer torchtitan's [compile] table
    {"compile.enable_async_tensor_parallel", K::flag, ""},
    {"experimental.enable_async_tensor_parallel", K::flag, ""},  // torchtitan before the [parallelism] key
    {"float8.recipe_name", K::text, "tensorwise|rowwise|rowwise_with_gw_hp"},
    {"model.converters", K::list, ""},
    {"model.flavor", K::text, ""},
    {"model.name", K::text, ""},
    {"mx.recipe_name", K::text, "mxfp8"},
    {"parallelism.context_parallel_degree", K::integer, ""},
    {"parallelism.data_parallel_replicate_degree", K::integer, ""},
    {"parallelism.data_parallel_shard_degree", K::integer, ""},
    {"parallelism.disable_loss_parallel", K::flag, ""},
    {"parallelism.enable_async_tensor_parallel", K::flag, ""},
    {"parallelism.expert_parallel_comm_backend", K::text, "standard|deepep|hybridep"},
    {"parallelism.expert_parallel_degree", K::integer, ""},
    {"parallelism.expert_tensor_parallel_degree", K::integer, ""},
    {"parallelism.module_fqns_per_model_part", K::list, ""},  // a list of lists of module names
    {"parallelism.pipeline_parallel_degree", K::integer, ""},
    {"parallelism.pipeline_parallel_first_stage_less_layers", K::integer, ""},
    {"parallelism.pipeline_parallel_last_stage_less_layers", K::integer, ""},
    {"parallelism.pipeline_parallel_layers_per_stage", K::integer, ""},
    {"parallelism.pipeline_parallel_microbatch_size", K::integer, ""},
    {"parallelism.pipeline_parallel_schedule", K::text,
     "1F1B|GPipe|Interleaved1F1B|LoopedBFS|InterleavedZeroBubble|ZBVZeroBubble|DualPipeV"},
    {"parallelism.tensor_parallel_degree", K::integer, ""},
    {"training.compile", K::flag, ""},
    {"training.global_batch_size", K::integer, ""},
    {"training.local_batch_size", K::integer, ""},
    {"training.mixed_precision_param", K::text, "bfloat16|float32"},
    {"training.seq_len", K::integer, ""},
};

constexpr LaunchKey kDeepspeed[] = {
    {"activation_checkpointing.contiguous_memory_optimization", K::flag, ""},
    {"activation_checkpointing.cpu_checkpointing", K::flag, ""},
    {"activation_checkpointing.partition_activations", K::flag, ""},
    {"bf16.enabled", K::flag, ""},
    {"fp16.enabled", K::flag, ""},
    {"gradient_accumulation_steps", K::integer, ""},
    {"tensor_parallel.autotp_size", K::integer, ""},
    {"train_batch_size", K::integer, ""},
    {"train_micro_batch_size_per_gpu", K::integer, ""},
    {"zero_optimization.contiguous_gradients", K::flag, ""},
    {"zero_optimization.overlap_comm", K::flag, ""},
    {"zero_optimization.stage", K::integer, "0|1|2|3"},
};

}  // namespace

std::span<const LaunchKey> launch_keys(Framework f) {
    switch (f) {
        case Framework::megatron: return kMegatron;
        case Framework::torchtitan: return kTorchtitan;
        case Framework::deepspeed: return kDeepspeed;
    }
    return {};
}

const LaunchKey* find_launch_key(Framework f, std::string_view name) {
    const auto keys = launch_keys(f);
    const auto it = std::lower_bound(keys.begin(), keys.end(), name,
                                     [](const LaunchKey& k, std::string_view n) { return k.name < n; });
    return it != keys.end() && it->name == name ? &*it : nullptr;
}

}  // namespace shardplan
