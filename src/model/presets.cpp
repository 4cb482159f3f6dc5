// Preset data. Model shapes are the published configs of each family; GPU figures are from
// ../shared/reference/hardware-and-formulas.md (source tags in docs/hardware.md).
#include "shardplan/presets.h"

#include <tuple>

#include "shardplan/error.h"

namespace shardplan {

namespace {

ModelSpec dense(const char* name, int64_t L, int64_t h, int64_t f, int64_t a, int64_t g, int64_t dh, int64_t V) {
    ModelSpec m;
    m.name = name;
    m.layers = L;
    m.hidden = h;
    m.ffn_hidden = f;
    m.heads = a;
    m.kv_heads = g;
    m.head_dim = dh;
    m.vocab = V;
    return m;
}

ModelSpec with_moe(ModelSpec m, int64_t E, int64_t k, int64_t shared, int64_t fe, int64_t dense_layers = 0) {
    m.moe = MoeSpec{E, k, shared, fe, dense_layers, 1};
    return m;
}

std::vector<ModelSpec> make_models() {
    std::vector<ModelSpec> v;
    v.push_back(dense("llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256));
    v.push_back(dense("llama3-70b", 80, 8192, 28672, 64, 8, 128, 128256));
    v.push_back(dense("llama3-405b", 126, 16384, 53248, 128, 8, 128, 128256));
    {
        ModelSpec m = dense("gpt3-175b", 96, 12288, 49152, 96, 96, 128, 50257);
        m.mlp = MlpKind::gelu;
        m.norm = NormKind::layernorm;
        m.tied_embeddings = true;
        m.linear_bias = true;
        v.push_back(m);
    }
    v.push_back(with_moe(dense("mixtral-8x7b", 32, 4096, 14336, 32, 8, 128, 32000), 8, 2, 0, 14336));
    v.push_back(with_moe(dense("mixtral-8x22b", 56, 6144, 16384, 48, 8, 128, 32768), 8, 2, 0, 16384));
    {
        ModelSpec m = with_moe(dense("deepseek-v3", 61, 7168, 18432, 128, 128, 128, 129280), 256, 8, 1, 2048, 3);
        m.attention = AttentionKind::mla;
        m.mla = MlaSpec{1536, 512, 128, 64, 128};
        m.head_dim = 128 + 64;  // a query/key head: no-position part + RoPE part (as config.json reads)
        m.moe->router_groups = 8;  // n_group 8, topk_group 4 (config.json; report §2.1.2)
        m.moe->group_topk = 4;
        v.push_back(m);
    }
    {
        ModelSpec m = with_moe(dense("qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 128, 151936), 128, 8, 0, 1536);
        m.qk_norm = true;
        v.push_back(m);
    }
    {
        ModelSpec m = with_moe(dense("qwen3-30b-a3b", 48, 2048, 6144, 32, 4, 128, 151936), 128, 8, 0, 768);
        m.qk_norm = true;
        v.push_back(m);
    }
    {
        // Biases on every attention, expert and router matrix, and a sink logit per head (OpenAI's gpt-oss
        // model card: 116.83 B total, 5.13 B active); every second layer attends to a 128-token window
        // (its config.json: sliding_window 128, layer_types alternating from "sliding_attention").
        ModelSpec m = with_moe(dense("gpt-oss-120b", 36, 2880, 2880, 64, 8, 64, 201088), 128, 4, 0, 2880);
        m.linear_bias = true;
        m.attention_sinks = true;
        m.sliding_window = 128;
        m.window_layers = 18;
        v.push_back(m);
    }
    {
        // Llama 4 Scout's and Maverick's text models (their config.json's text_config; tests/hf_families_test.cpp
        // reads the configs to the same counts): one routed expert of 8,192 and a shared one per MoE layer,
        // Maverick's on every second layer from layer 1 beside dense layers of 16,384; chunked attention,
        // 8,192-token chunks on the RoPE layers, all but every fourth.
        for (auto [name, experts, step] : {std::tuple{"llama4-scout", 16, 1}, {"llama4-maverick", 128, 2}}) {
            ModelSpec m = dense(name, 48, 5120, 16384, 40, 8, 128, 202048);
            m.moe = MoeSpec{experts, 1, 1, 8192, step - 1, step};
            m.sliding_window = 8192;
            m.window_layers = 36;
            m.window_kind = WindowKind::chunked;
            v.push_back(m);
        }
    }
    {
        // Gemma 3 27B's text model (its config.json's text_config with Gemma3TextConfig's defaults): gated GELU,
        // four norms a layer, per-head q/k norms, tied embeddings, 1,024-token windows on 52 of 62 layers.
        ModelSpec m = dense("gemma3-27b", 62, 5376, 21504, 32, 16, 128, 262208);
        m.mlp = MlpKind::geglu;
        m.sandwich_norms = true;
        m.qk_norm = true;
        m.tied_embeddings = true;
        m.sliding_window = 1024;
        m.window_layers = 52;
        v.push_back(m);
    }
    {
        ModelSpec m = dense("nemotron4-340b", 96, 18432, 73728, 96, 8, 192, 256000);
        m.mlp = MlpKind::relu2;
        m.norm = NormKind::layernorm;
        v.push_back(m);
    }
    return v;
}

struct GpuRow {
    const char* id;
    const char* name;
    const char* generation;
    double hbm_gb, usable_gb, hbm_tbps, bf16_tf, fp8_tf, fp4_tf, su_gbps, so_gbps;
    bool nvls;
    int64_t domain, per_node;
    const char* source;
    int64_t sms;  // streaming multiprocessors (AMD: compute units) a GEMM's tiles spread over; 0 = not modelled
};

// Bandwidths per GPU, one direction. Latencies per hop: NCCL Simple-protocol constants (B.1.6).
// Capacities are in 10^9 bytes. Where the marketed "GB" is really GiB, the figure is what the driver
// reports as total memory: nvidia-smi shows 40,960 MiB (A100 40GB), 81,920 MiB (A100 80GB), 81,559 MiB
// (H100/H800 80GB), 143,771 MiB (H200) and 32,510 MiB (V100 32GB); ROCm lists 192 GiB for MI300X [S17].
// Blackwell keeps the reference sheet's usable figures (B200 180, GB200 186).
constexpr GpuRow kGpus[] = {
    {"v100-32g", "NVIDIA V100 SXM2 32GB", "volta", 34.36, 34.09, 0.9, 125, 0, 0, 150, 12.5, false, 8, 8,
     "V100 datasheet (125 TF fp16 tensor, 900 GB/s, 6 NVLink2 × 25 GB/s); not in the reference sheet", 80},
    {"a100-40g", "NVIDIA A100 SXM4 40GB", "ampere", 42.95, 42.95, 1.555, 312, 0, 0, 300, 25, false, 8, 8, "[S13, S47]", 108},
    {"a100-80g", "NVIDIA A100 SXM4 80GB", "ampere", 85.9, 85.9, 2.039, 312, 0, 0, 300, 25, false, 8, 8, "[S13, S47]", 108},
    {"a800", "NVIDIA A800 SXM4 80GB", "ampere", 85.9, 85.9, 2.039, 312, 0, 0, 200, 25, false, 8, 8,
     "A100 80GB [S13, S47] with NVLink cut from 600 to 400 GB/s both ways (NVIDIA's statement to Reuters, "
     "7 Nov 2022: an A100 alternative for China; compute and memory unchanged)", 108},
    {"l40s", "NVIDIA L40S 48GB (PCIe)", "ada", 51.54, 48.3, 0.864, 362, 733, 0, 32, 25, false, 8, 8,
     "NVIDIA L40S datasheet: 48 GB GDDR6 with ECC (46,068 MiB usable with ECC on), 864 GB/s, 362 TF bf16 and "
     "733 TF fp8 dense; no NVLink: PCIe Gen4 x16 32 GB/s each way; one 200 Gb/s NIC per GPU assumed. Provisional", 142},
    {"h100-sxm", "NVIDIA H100 SXM5 80GB", "hopper", 85.9, 85.52, 3.35, 989, 1979, 0, 450, 50, true, 8, 8, "[S10, S14]", 132},
    {"h100-sxm-96g", "NVIDIA H100 96GB HBM2e (Grand Teton, 500 W)", "hopper", 96, 96, 2.4, 912, 1824, 0, 450, 50,
     true, 8, 8,
     "torchtitan docs/performance.md and paper: 96 GB HBM2e, 2.4 TB/s, lower TDP; 'the actual peak TFLOPs should be "
     "between SXM (989) and NVL (835)': the middle of that, 912 TF", 132},
    {"h200", "NVIDIA H200 SXM 141GB", "hopper", 150.76, 150.76, 4.8, 989, 1979, 0, 450, 50, true, 8, 8, "[S10, S25, S45]", 132},
    {"h800", "NVIDIA H800 SXM 80GB", "hopper", 85.9, 85.52, 3.35, 989, 1979, 0, 200, 50, true, 8, 8, "[S26, S27]", 132},
    {"b200", "NVIDIA B200 (DGX B200)", "blackwell", 192, 180, 8.0, 2250, 4500, 9000, 900, 50, true, 8, 8,
     "[S9, S13, S25]", 148},
    {"b300", "NVIDIA B300 (HGX B300)", "blackwell", 288, 279, 8.0, 2250, 4500, 13500, 900, 100, true, 8, 8,
     "[S13, S24] provisional", 160},
    {"gb200", "NVIDIA GB200 NVL72", "blackwell", 192, 186, 8.0, 2500, 5000, 10000, 900, 50, true, 72, 4,
     "[S11, S13, S25]", 148},
    {"gb300", "NVIDIA GB300 NVL72", "blackwell", 288, 279, 8.0, 2500, 5000, 15000, 900, 100, true, 72, 4,
     "[S12, S13, S24] provisional", 160},
    {"blackwell-nvl72", "Blackwell NVL72 (seed: 192 GB HBM3e, 180 usable, ConnectX-8)", "blackwell", 192, 180, 8.0,
     2500, 5000, 10000, 900, 100, true, 72, 4, "project seed; peaks as GB200 [S13]", 148},
    {"mi300x", "AMD Instinct MI300X", "cdna3", 206.2, 206.2, 5.3, 1307.4, 2614.9, 0, 448, 50, false, 8, 8, "[S17, S18, S50]", 304},
    {"mi355x", "AMD Instinct MI355X", "cdna4", 288, 288, 8.0, 2500, 5000, 10000, 537.6, 50, false, 8, 8,
     "[S15b, S20, S25]", 256},
    {"tpu-v4", "Google TPU v4", "tpu", 34.4, 34.4, 1.2, 275, 0, 0, 270, 6.25, false, 4096, 4,
     "TPU v4 paper (275 TF bf16, 32 GiB, 1.2 TB/s); ICI per chip assumed 6 × 45 GB/s; not in the reference sheet", 0},
};

GpuSpec to_gpu(const GpuRow& r) {
    GpuSpec g;
    g.id = r.id;
    g.name = r.name;
    g.generation = r.generation;
    g.hbm_bytes = r.hbm_gb * 1e9;
    g.hbm_usable_bytes = r.usable_gb * 1e9;
    g.hbm_Bps = r.hbm_tbps * 1e12;
    g.peak_16_flops = r.bf16_tf * 1e12;
    g.peak_8_flops = r.fp8_tf * 1e12;
    g.peak_4_flops = r.fp4_tf * 1e12;
    g.scale_up_Bps = r.su_gbps * 1e9;
    g.scale_out_Bps = r.so_gbps * 1e9;
    g.scale_up_latency_s = 2e-6;
    g.scale_out_latency_s = 6e-6;
    g.in_switch_reduction = r.nvls;
    g.default_domain = r.domain;
    g.default_gpus_per_node = r.per_node;
    g.source = r.source;
    g.sms = r.sms;
    g.eff = default_efficiency(r.generation);
    return g;
}

std::string names_of_models() {
    std::string s;
    for (const ModelSpec& m : model_presets()) s += (s.empty() ? "" : ", ") + m.name;
    return s;
}

}  // namespace

const std::vector<ModelSpec>& model_presets() {
    static const std::vector<ModelSpec> v = make_models();
    return v;
}

const std::vector<GpuSpec>& gpu_presets() {
    static const std::vector<GpuSpec> v = [] {
        std::vector<GpuSpec> out;
        for (const GpuRow& r : kGpus) out.push_back(to_gpu(r));
        return out;
    }();
    return v;
}

std::vector<ClusterSpec> cluster_presets() {
    std::vector<ClusterSpec> out;
    auto add = [&](const char* name, const char* gpu, int64_t gpus) {
        ClusterSpec c;
        c.name = name;
        c.gpu = preset_gpu(gpu);
        c.gpus = gpus;
        c.gpus_per_node = c.gpu.default_gpus_per_node;
        c.scale_up_domain = c.gpu.default_domain;
        out.push_back(c);
    };
    add("nvl72", "blackwell-nvl72", 16384);
    add("dgx-a100", "a100-80g", 1024);
    add("dgx-h100", "h100-sxm", 1024);
    add("dgx-h200", "h200", 1024);
    add("dgx-b200", "b200", 1024);
    add("gb200-nvl72", "gb200", 1152);
    add("gb300-nvl72", "gb300", 1152);
    // AWS p5.48xlarge: 8 H100 SXM and 32 EFA adapters of 100 Gb/s (50 GB/s a GPU, the preset's NIC
    // rate), at EFA's latency (hardware.h).
    add("aws-p5", "h100-sxm", 1024);
    out.back().gpu.scale_out_latency_s = kEfaScaleOutLatency_s;
    for (const GpuSpec& g : gpu_presets()) add(g.id.c_str(), g.id.c_str(), 1024);
    return out;
}

bool has_model_preset(const std::string& name) {
    for (const ModelSpec& m : model_presets())
        if (m.name == name) return true;
    return false;
}

ModelSpec preset_model(const std::string& name, const std::string& field) {
    for (const ModelSpec& m : model_presets())
        if (m.name == name) return m;
    throw ConfigError(field, "a model preset (" + names_of_models() + ") or a model object, got \"" + name + "\"");
}

GpuSpec preset_gpu(const std::string& id, const std::string& field) {
    for (const GpuSpec& g : gpu_presets())
        if (g.id == id) return g;
    std::string names;
    for (const GpuSpec& g : gpu_presets()) names += (names.empty() ? "" : ", ") + g.id;
    throw ConfigError(field, "a GPU preset (" + names + "), got \"" + id + "\"");
}

ClusterSpec preset_cluster(const std::string& name, const std::string& field) {
    for (const ClusterSpec& c : cluster_presets())
        if (c.name == name) return c;
    std::string names;
    for (const ClusterSpec& c : cluster_presets()) names += (names.empty() ? "" : ", ") + c.name;
    throw ConfigError(field, "a cluster preset (" + names + "), a cluster object or a profile file, got \"" + name + "\"");
}

Scenario default_scenario() {
    Scenario s{preset_model("llama3-405b"), preset_cluster("nvl72"), Layout{}};
    Layout& l = s.layout;
    l.tp = 8;
    l.pp = 16;
    l.dp = 128;
    l.vpp = 4;  // interleaved: 126 layers in 64 chunks of 1-2 layers; bubble ÷ 4
    l.schedule = Schedule::interleaved;
    l.micro_batch = 1;
    l.global_batch = 2048;
    l.seq_len = 8192;
    l.zero = 1;
    l.sequence_parallel = true;
    return s;
}

}  // namespace shardplan
