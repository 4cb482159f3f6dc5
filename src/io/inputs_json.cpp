// The inputs written back as JSON: a model with its parameter counts, a cluster with its efficiency
// constants, a layout with every field resolved; the table of constants; the presets (docs/json.md).
#include "shardplan/io.h"

#include "shardplan/constants.h"
#include "shardplan/presets.h"

namespace shardplan {

json to_json(const ModelSpec& m) {
    json j = {{"name", m.name}, {"layers", m.layers}, {"hidden", m.hidden}, {"ffn_hidden", m.ffn_hidden},
              {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim}, {"vocab", m.vocab},
              {"mlp", enum_name(m.mlp)}, {"norm", enum_name(m.norm)}, {"attention", enum_name(m.attention)},
              {"tied_embeddings", m.tied_embeddings}, {"linear_bias", m.linear_bias}, {"qkv_bias", m.qkv_bias},
              {"qk_norm", m.qk_norm}, {"attention_sinks", m.attention_sinks}, {"sliding_window", m.sliding_window},
              {"window_layers", m.window_layers}, {"window_kind", enum_name(m.window_kind)},
              {"sandwich_norms", m.sandwich_norms}, {"mla", nullptr}, {"moe", nullptr}};
    if (m.mla)
        j["mla"] = {{"q_lora_rank", m.mla->q_lora_rank}, {"kv_lora_rank", m.mla->kv_lora_rank},
                    {"qk_nope_head_dim", m.mla->qk_nope_head_dim}, {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                    {"v_head_dim", m.mla->v_head_dim}};
    if (m.moe)
        j["moe"] = {{"experts", m.moe->experts}, {"top_k", m.moe->top_k}, {"shared_experts", m.moe->shared_experts},
                    {"expert_ffn_hidden", m.moe->expert_ffn_hidden}, {"dense_layers", m.moe->dense_layers},
                    {"layer_freq", m.moe->layer_freq}, {"router_groups", m.moe->router_groups},
                    {"group_topk", m.moe->group_topk}};
    j["params_total"] = model_params_total(m);
    j["params_active"] = model_params_active(m);
    return j;
}

json to_json(const Efficiency& e) {
    json j = json::object();
    for (const Constant& k : efficiency_constants()) j[k.key] = k.to_json(e);
    return j;
}

json to_json(const ClusterSpec& c) {
    const GpuSpec& g = c.gpu;
    json gpu = {{"id", g.id}, {"name", g.name}, {"generation", g.generation}, {"hbm_gb", g.hbm_bytes / 1e9},
                {"hbm_usable_gb", g.hbm_usable_bytes / 1e9}, {"hbm_tbps", g.hbm_Bps / 1e12},
                {"bf16_tflops", g.peak_16_flops / 1e12}, {"fp8_tflops", g.peak_8_flops / 1e12},
                {"fp4_tflops", g.peak_4_flops / 1e12}, {"scale_up_gbps", g.scale_up_Bps / 1e9},
                {"scale_out_gbps", g.scale_out_Bps / 1e9}, {"scale_up_latency_us", g.scale_up_latency_s * 1e6},
                {"scale_out_latency_us", g.scale_out_latency_s * 1e6}, {"in_switch_reduction", g.in_switch_reduction},
                {"default_domain", g.default_domain}, {"gpus_per_node", g.default_gpus_per_node}, {"sms", g.sms}, {"source", g.source}};
    return {{"name", c.name}, {"gpu", gpu}, {"gpus", c.gpus}, {"gpus_per_node", c.gpus_per_node},
            {"scale_up_domain", c.scale_up_domain}, {"efficiency", to_json(g.eff)}};
}

json to_json(const Layout& l) {
    return {{"tp", l.tp}, {"cp", l.cp}, {"pp", l.pp}, {"dp", l.dp}, {"ep", l.ep}, {"etp", effective_etp(l)},
            {"vpp", l.vpp}, {"micro_batch", l.micro_batch}, {"global_batch", global_batch(l)},
            {"seq_len", l.seq_len}, {"zero", l.zero}, {"recompute", enum_name(l.recompute)},
            {"recompute_modules", [&] {
                 if (l.recompute != Recompute::selective) return json(nullptr);
                 json mods = json::array();
                 for (const auto& [m, name] : EnumNames<RecomputeModule>::table)
                     if (recomputes(l, m)) mods.push_back(name);
                 return mods;
             }()},
            {"recompute_method", l.recompute == Recompute::full ? json(enum_name(l.recompute_method)) : json(nullptr)},
            {"recompute_layers", l.recompute == Recompute::full ? json(l.recompute_layers) : json(nullptr)},
            {"attention_kernel", enum_name(l.attention_kernel)}, {"kernels", enum_name(l.kernels)},
            {"stage_split", enum_name(l.stage_split)}, {"grad_buckets", enum_name(l.grad_buckets)},
            {"grad_accumulation", enum_name(l.grad_accumulation)}, {"cross_entropy", enum_name(l.cross_entropy)},
            {"allocator", enum_name(l.allocator)}, {"dropout", l.dropout},
            {"sequence_parallel", l.sequence_parallel}, {"tp_recompute_allgather", l.tp_recompute_allgather},
            {"tp_comm_overlap", l.tp_comm_overlap},
            {"dp_comm_overlap", l.dp_comm_overlap}, {"fp8_params", l.fp8_params}, {"fp32_shards", l.fp32_shards},
            {"ep_comm_overlap", l.ep_comm_overlap}, {"moe_dispatcher", enum_name(l.moe_dispatcher)},
            {"expert_gemms", enum_name(l.expert_gemms)}, {"zero3_comm", enum_name(l.zero3_comm)},
            {"cuda_graphs", enum_name(l.cuda_graphs)}, {"pipeline_pacing", enum_name(l.pipeline_pacing)},
            {"pipeline_sends", enum_name(l.pipeline_sends)}, {"pipeline_scatter_gather", l.pipeline_scatter_gather},
            {"moe_imbalance", l.moe_imbalance},
            {"moe_capacity_factor", l.moe_capacity_factor > 0 ? json(l.moe_capacity_factor) : json(nullptr)},
            {"precision", enum_name(l.precision)},
            {"schedule", enum_name(l.schedule)}, {"grad_dtype", enum_name(l.grad_dtype)},
            {"order", order_string(l)}, {"framework", l.framework}};
}

json constants_json() {
    json out = json::array();
    for (const Constant& k : efficiency_constants()) {
        out.push_back({{"key", k.key}, {"cpp_field", k.cpp_field}, {"unit", k.unit}, {"si_per_json", k.si_per_json()},
                       {"valid_range", {k.valid_lo, k.valid_hi}}, {"fit_range", {k.fit_lo, k.fit_hi}},
                       {"fitted", k.fitted}, {"meaning", k.meaning}, {"source", k.source}});
    }
    return out;
}

json presets_json() {
    json j = {{"models", json::array()}, {"gpus", json::array()}, {"clusters", json::array()},
              {"constants", constants_json()}};
    for (const ModelSpec& m : model_presets()) j["models"].push_back(to_json(m));
    for (const ClusterSpec& c : cluster_presets()) j["clusters"].push_back(to_json(c));
    for (const GpuSpec& g : gpu_presets()) {
        ClusterSpec one;
        one.gpu = g;
        json gpu = to_json(one)["gpu"];
        gpu["efficiency"] = to_json(g.eff);  // this GPU's value of each constant of "constants"
        j["gpus"].push_back(gpu);
    }
    return j;
}

}  // namespace shardplan
