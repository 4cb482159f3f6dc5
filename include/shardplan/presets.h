/// Built-in models, GPUs and clusters (data, with sources in docs/hardware.md and docs/model.md §1),
/// and the default scenario `make run` plans: Llama 3 405B on 16,384 Blackwell GPUs in NVL72 racks.
///
///   preset_model("mixtral-8x7b");           // throws ConfigError("model", "one of ...") if unknown
///   preset_gpu("h100-sxm").peak_16_flops;   // 989e12
///   preset_cluster("nvl72").gpus;           // 16384
#pragma once
#include <string>
#include <vector>

#include "shardplan/hardware.h"
#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan {

const std::vector<ModelSpec>& model_presets();
const std::vector<GpuSpec>& gpu_presets();
/// Named clusters: "nvl72" (the seed), "dgx-h100", ...; every GPU id is also a cluster of that GPU
/// with its default node and domain sizes.
std::vector<ClusterSpec> cluster_presets();

ModelSpec preset_model(const std::string& name, const std::string& field = "model");
GpuSpec preset_gpu(const std::string& id, const std::string& field = "cluster.gpu");
ClusterSpec preset_cluster(const std::string& name, const std::string& field = "cluster");
bool has_model_preset(const std::string& name);

struct Scenario {
    ModelSpec model;
    ClusterSpec cluster;
    Layout layout;
};
/// Llama 3 405B, 16,384 GPUs of the seed's NVL72 cluster, TP8 · PP16 (interleaved, vpp 4) · DP128,
/// 2048 sequences of 8192 tokens (16M tokens per step, as Llama 3 was trained).
Scenario default_scenario();

}  // namespace shardplan
