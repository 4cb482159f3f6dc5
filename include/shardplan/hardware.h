/// The hardware side: a GPU's datasheet figures (GpuSpec), the efficiencies real software reaches on
/// it (Efficiency, fitted on published runs by `calibrate`), and a cluster of such GPUs (ClusterSpec):
/// how many, how many per node, and how many share one scale-up (NVLink/xGMI/ICI) domain.
/// Units are in the names: _bytes, _Bps (bytes per second, one direction), _flops (per second), _s.
///
///   ClusterSpec c = preset_cluster("nvl72");       // the seed: 16,384 Blackwell GPUs, 72 per rack
///   c.gpu.peak_flops(Precision::bf16);              // 2.5e15
///   c.gpu.hbm_usable_bytes;                         // 180e9
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "shardplan/enums.h"

namespace shardplan {

/// What software reaches on a GPU generation, as fractions of the datasheet figures, and the fixed
/// costs the datasheet does not show. Fitted per generation (docs/validation.md); a cluster profile
/// written by `shardplan calibrate` replaces them for one user's cluster.
struct Efficiency {
    double gemm_16 = 0.80;         // large bf16/fp16 GEMMs, fraction of the 16-bit dense peak
    double gemm_8 = 0.65;          // large fp8/mxfp8 GEMMs, fraction of the 8-bit dense peak
    double gemm_4 = 0.55;          // large nvfp4 GEMMs, fraction of the 4-bit dense peak
    double gemm_half_dim = 256;    // GEMM dimension at which a GEMM reaches half its large-size efficiency
    double gemm_unaligned = 0.13;  // a GEMM whose N or K is not whole 16-byte vectors, relative to an aligned one
    double moe = 0.60;             // routed-expert grouped GEMMs + token dispatch, relative to dense GEMMs
    double attn = 0.55;            // FlashAttention-2 at long context on H100, fraction of the 16-bit peak
    double attn_gpu = 1.0;         // FlashAttention-2's share of this GPU's peak over its share of H100's
    double attn_fused = 1.0;       // fused attention (cuDNN, FlashAttention-3) relative to FlashAttention-2
    double attn_half_seq = 500;    // keys per query row at which attention reaches half of `attn` (causal)
    double hbm = 0.80;             // achieved fraction of HBM bandwidth for memory-bound kernels
    double scale_up_bw = 0.80;     // achieved fraction of scale-up link rate (bus bandwidth)
    double scale_out_bw = 0.90;    // achieved fraction of NIC line rate
    double a2a = 0.60;             // all-to-all reaches this share of the tier's achieved bandwidth (many small flows)
    double overlap_dp = 0.80;      // share of the last backward (first forward) that hides DP traffic (dp_comm_overlap)
    double overlap_cp = 0.80;      // share of CP ring traffic hidden under block attention
    double comm_sms = 24;          // SMs a collective holds while it runs beside computation (NCCL's CTAs)
    double layer_overhead_s = 3e-3;  // host time to issue a layer's kernels per micro-batch (fwd + bwd), eager ops
    double fused_host_share = 0.73;  // share of it a layer of fused kernels (Kernels::fused) takes to issue
    double graph_node_gap_s = 0.5e-6;  // device-side launch of one kernel node of a replayed CUDA graph
    double reserve_bytes = 4e9;    // CUDA context, NCCL buffers and allocator slack per GPU
    double fragmentation = 0.2;    // extra share of activation memory the classic caching allocator holds
};

struct GpuSpec {
    std::string id;                 // "h100-sxm"
    std::string name;               // "NVIDIA H100 SXM5 80GB"
    std::string generation;         // "hopper": selects the fitted Efficiency
    double hbm_bytes = 0;           // physical HBM
    double hbm_usable_bytes = 0;    // what the framework can allocate (after ECC / firmware reserve)
    double hbm_Bps = 0;             // HBM bandwidth
    double peak_16_flops = 0;       // dense bf16/fp16 tensor-core peak
    double peak_8_flops = 0;        // dense fp8 peak (0 = no fp8 tensor cores)
    double peak_4_flops = 0;        // dense fp4 peak (0 = no fp4 tensor cores)
    double scale_up_Bps = 0;        // per GPU, one direction, inside the scale-up domain
    double scale_out_Bps = 0;       // NIC line rate per GPU, one direction
    double scale_up_latency_s = 0;  // per hop (NCCL Simple protocol constants)
    double scale_out_latency_s = 0;
    bool in_switch_reduction = false;  // NVLink SHARP (NVLS): the switch reduces, each GPU sends S once
    int64_t default_domain = 8;        // GPUs in one scale-up domain
    int64_t default_gpus_per_node = 8;
    int64_t sms = 0;                   // SMs (AMD: CUs) a GEMM's output tiles spread over; 0 = no wave quantization
    std::string source;                // where the figures come from (docs/hardware.md)
    Efficiency eff;

    /// Dense peak for GEMMs in this precision. Falls back to the 16-bit peak where the GPU has no
    /// tensor cores for that precision (A100 runs fp8 recipes at bf16 speed).
    double peak_flops(Precision p) const;
    /// Why this GPU cannot train in `p` (nullopt when it can): bf16 from Ampere on; FP8 on Ada, Hopper,
    /// Blackwell and CDNA3/4 (Transformer Engine, ROCm TE); MXFP8 on Blackwell and CDNA4 (OCP MX
    /// formats); NVFP4 on Blackwell only. docs/hardware.md, "Precision rules".
    std::optional<std::string> precision_problem(Precision p) const;
};

struct ClusterSpec {
    std::string name = "custom";
    GpuSpec gpu;
    int64_t gpus = 0;
    int64_t gpus_per_node = 8;
    int64_t scale_up_domain = 8;  // GPUs sharing one NVLink/xGMI/ICI domain (72 for an NVL72 rack)
};

/// Throws ConfigError("cluster.gpus", ...) and the like on non-positive or inconsistent values.
void validate_cluster(const ClusterSpec& c, const std::string& path = "cluster");

/// Per-step latency of AWS's Elastic Fabric Adapter between nodes: 22 µs, at which the collective model
/// (collectives.h) reads nccl-tests' 69 µs for an 8-byte all-reduce over two p5.48xlarge nodes of 8 H100
/// (aws/aws-k8s-tester PR #585, 2025: 25 µs in-switch inside each node + 2 tree steps across), against
/// the presets' 6 µs, InfiniBand's (docs/hardware.md). A cluster whose note names EFA takes it.
inline constexpr double kEfaScaleOutLatency_s = 22e-6;
/// Whether a cluster's free-text interconnect note names AWS's EFA: the word "EFA", or "EFAv2" and the
/// like, in any case ("default" does not).
bool names_efa(const std::string& note);

/// The fitted defaults of a GPU generation ("ampere", "hopper", "blackwell", "cdna3", ...).
Efficiency default_efficiency(const std::string& generation);
/// The generations default_efficiency knows ("volta", "ampere", "hopper", ...); a GPU of any other is refused.
bool is_known_generation(const std::string& generation);
std::string known_generations();

}  // namespace shardplan
