// The tunable constants, one table (include/shardplan/constants.h). Ranges in JSON units.
#include "shardplan/constants.h"

#include <algorithm>

#include <fmt/format.h>

#include "shardplan/error.h"

namespace shardplan {

namespace {
using S = Constant::Scale;
}  // namespace

double Constant::to_json(const Efficiency& e) const {
    const double v = e.*field;
    switch (scale) {
        case S::one: return v;
        case S::micro: return v * 1e6;
        case S::giga: return v / 1e9;
    }
    return v;
}

double Constant::si_per_json() const {
    switch (scale) {
        case S::one: return 1.0;
        case S::micro: return 1e-6;
        case S::giga: return 1e9;
    }
    return 1.0;
}

void Constant::from_json(Efficiency& e, double json_value) const { e.*field = json_value * si_per_json(); }

const std::vector<Constant>& efficiency_constants() {
    // key, field, C++ name, scale, unit, valid range, fit range, fitted, meaning, source
    static const std::vector<Constant> v = {
        {"gemm_16", &Efficiency::gemm_16, "gemm_16", S::one, "fraction", 0.01, 1, 0.30, 0.85, true,
         "large bf16/fp16 GEMMs, share of the 16-bit dense peak",
         "cuBLAS/XLA: 72-82 % of peak on A100/H100 (reference B.6: S7, S38, S39; no large GEMM there beats 82 %, "
         "hence the ceiling); fitted per generation from its cuBLAS figure (A100 0.82, H100 0.80); Blackwell's not "
         "fitted: 0.51, a B200's bf16 GEMMs of training shapes under load at 0.45-0.51 (SimuMax's timings, "
         "docs/validation.md), where one burst reaches 0.56-0.69 (S7, S39, S51)"},
        {"gemm_8", &Efficiency::gemm_8, "gemm_8", S::one, "fraction", 0.01, 1, 0.20, 0.90, true,
         "large fp8/mxfp8 GEMMs, share of the 8-bit dense peak",
         "cuBLASLt fp8: 66-69 % of 1979 TF on H200, 57-58 % of 5 PF on GB200 (reference B.6: S7); fitted per generation "
         "from its cuBLAS figure (H100 0.68, B200 0.58)"},
        {"gemm_4", &Efficiency::gemm_4, "gemm_4", S::one, "fraction", 0.01, 1, 0.15, 0.90, true,
         "large nvfp4 GEMMs, share of the 4-bit dense peak",
         "cuBLASLt fp4: 76 % of 10 PF on GB200 at 16384^3 in one burst (reference B.6: S7); Blackwell starts at 0.615, "
         "that figure at the 0.51/0.63 a B200's bf16 GEMMs keep under load (SimuMax's timings, docs/validation.md); "
         "fitted where fp4 runs of two sources or more exist"},
        {"gemm_half_dim", &Efficiency::gemm_half_dim, "gemm_half_dim", S::one, "elements", 0, 1e6, 16, 2048, true,
         "GEMM dimension at which a GEMM reaches half its large-size efficiency",
         "efficiency halves near min-dim 1024-2048 and falls below 0.1 at 512 (reference B.6: S39); fitted; "
         "Blackwell's not: 250, a B200's bf16 GEMMs at 0.37-0.45 of peak with an inner dimension of 512-768 against "
         "0.45-0.51 at 4096 (SimuMax's timings, docs/validation.md)"},
        {"gemm_unaligned", &Efficiency::gemm_unaligned, "gemm_unaligned", S::one, "fraction", 0.01, 1, 0.125, 0.5, false,
         "a GEMM whose N or K (its operands' contiguous dimensions) is not whole 16-byte vectors, relative to the same "
         "GEMM aligned",
         "Tensor Core kernels load 16-byte vectors (cuBLAS documentation, \"Tensor Core Usage\": dimensions and leading "
         "dimensions multiples of 8 for 16-bit types); off them a GEMM runs at the GPU's rate without Tensor Cores: "
         "A100 BF16 39 of 312 TFLOP/s (0.125), H100 SXM 16-bit 133.8 of 989 (0.135; NVIDIA A100 and H100 "
         "whitepapers): 0.13. The range's top, 0.5: nanoGPT's 25 % speed-up from padding GPT-2's 50,257-token "
         "vocabulary to 50,304 (its output layer a third of the FLOPs). Not fitted: no run in the shared files has "
         "such a dimension (BLOOM's hidden-14,400 search does: docs/validation.md)"},
        {"moe", &Efficiency::moe, "moe", S::one, "fraction", 0.01, 1, 0.10, 1.0, true,
         "routed-expert grouped GEMMs and token permutation, relative to dense GEMMs",
         "a grouped GEMM runs at 0.83-1.07 of a dense GEMM of its shape (DeepGEMM's README, H800 FP8: contiguous "
         "grouped 1,093-1,297 TFLOP/s against dense 1,025-1,304 at the same N and K, CUTLASS's grouped kernels "
         "1/1.2 of those); fitted per generation on calibration.json (docs/validation.md), where the fits sit below "
         "that: what the MoE runs cost beyond the terms priced"},
        {"attn", &Efficiency::attn, "attn", S::one, "fraction", 0.01, 1, 0.10, 0.90, true,
         "FlashAttention-2 at long context on H100, share of the 16-bit peak (other GPUs: times attn_gpu)",
         "FlashAttention-2 reaches 0.35-0.4 of H100's peak forward (FlashAttention-3 paper); fitted per generation, "
         "where its runs of two sources or more move it, and below that: attention as "
         "calibration.json's runs read it (MosaicML's tables ran its Triton port of FlashAttention-1; on "
         "torchtitan's 500 W parts it makes up for a slow GEMM side; docs/validation.md)"},
        {"attn_fused", &Efficiency::attn_fused, "attn_fused", S::one, "ratio", 0.1, 10, 1.0, 2.0, false,
         "fused attention (cuDNN, FlashAttention-3) relative to FlashAttention-2",
         "H100: 1.6-1.75 × forward, 1.5-1.75 × backward at head dim 128 (FlashAttention-3 paper, Fig. 5-7): 1.6 on "
         "Hopper and Blackwell, 1 elsewhere"},
        {"attn_gpu", &Efficiency::attn_gpu, "attn_gpu", S::one, "ratio", 0.1, 10, 1.0, 2.0, false,
         "FlashAttention-2's share of this GPU's 16-bit peak over its share of H100's",
         "FlashAttention-2 reaches 0.5-0.7 of A100's peak (FlashAttention-2 paper, Dao 2023) and 0.35-0.4 of H100's "
         "(FlashAttention-3 paper, Shah et al. 2024): 1.6 on Ampere (the middles' ratio), 1 elsewhere (no other "
         "measurement)"},
        {"attn_half_seq", &Efficiency::attn_half_seq, "attn_half_seq", S::one, "keys", 0, 1e8, 270, 600, false,
         "keys per query row at which causal attention reaches half of attn",
         "FlashAttention-3 paper (Shah et al. 2024) Fig. 5-6, H100, head dim 128, 512-16k keys: A·s/(s + h) fits each "
         "kernel's curve within 2.5 % with h = 600 (FlashAttention-3), 390 (cuDNN), 400 (FlashAttention-2) causal "
         "forward and 270-430 backward (not causal, where a causal one is slower at short keys): 500; not fitted "
         "(calibration.json's runs, at 2k-8k keys, cannot tell it from attn)"},
        {"hbm", &Efficiency::hbm, "hbm", S::one, "fraction", 0.01, 1, 0.60, 0.95, false,
         "achieved share of HBM bandwidth for memory-bound kernels", "STREAM-like kernels: about 80 % of HBM peak"},
        {"scale_up_bw", &Efficiency::scale_up_bw, "scale_up_bw", S::one, "fraction", 0.01, 1, 0.60, 0.95, false,
         "achieved share of the scale-up link rate (bus bandwidth)",
         "nccl-tests all-reduce bus bandwidth about 80 % of NVLink rate (reference B.1)"},
        {"scale_out_bw", &Efficiency::scale_out_bw, "scale_out_bw", S::one, "fraction", 0.01, 1, 0.30, 1.0, true,
         "achieved share of the NIC line rate",
         "nccl-tests over InfiniBand/RoCE: 85-95 % of line rate (reference B.1): the defaults take 0.9, the middle, "
         "not fitted (fitted on the published runs it fell to 0.66 on Blackwell, below any measurement, and pressed "
         "a2a to its end; docs/validation.md); calibrate fits it to a cluster's own runs"},
        {"overlap_dp", &Efficiency::overlap_dp, "overlap_dp", S::one, "fraction", 0, 1, 0.0, 1.0, true,
         "share of the last backward (first forward) that hides DP traffic, where the layout overlaps it (dp_comm_overlap)",
         "Megatron-LM overlap_grad_reduce / overlap_param_gather, FSDP prefetch; fitted"},
        {"a2a", &Efficiency::a2a, "a2a", S::one, "fraction", 0.01, 1, 0.1, 1.0, true,
         "share of the tier's achieved bandwidth an all-to-all reaches (many small flows)",
         "DeepEP's published dispatch/combine bandwidths against NVLink and RDMA rates; fitted"},
        {"overlap_cp", &Efficiency::overlap_cp, "overlap_cp", S::one, "fraction", 0, 1, 0.0, 1.0, false,
         "share of CP ring traffic hidden under block attention",
         "ring attention overlaps each K/V step with the previous block's attention (Megatron-Core CP)"},
        {"comm_sms", &Efficiency::comm_sms, "comm_sms", S::one, "SMs", 0, 1000, 8, 32, false,
         "SMs a collective's kernels hold while it runs beside computation (DP and FSDP traffic under the backward "
         "and forward, EP all-to-alls under another micro-batch, CP's ring under attention), taken from the "
         "computation it hides under: the step pays comm_sms / sms of the hidden time (docs/model.md §5.3)",
         "NCCL launches one CTA per channel (ncclConfig_t's minCTAs and maxCTAs bound them; RCCL's documentation: "
         "\"CTAs (channels)\"); an FSDP-style ncclAllGather beside a GEMM on an H100 (132 SMs) launched 24 (an "
         "Nsight Systems profile, NVIDIA developer forum, \"Compute-Communication Overlap Causes Severe GEMM "
         "Performance Degradation because of Tail Effect\"); "
         "DeepSeek-V3's all-to-all kernels under DualPipe take 20 SMs (DeepSeek-V3 report §3.2.2): 24; not fitted"},
        {"layer_overhead_us", &Efficiency::layer_overhead_s, "layer_overhead_s", S::micro, "µs", 0, 1e6, 750, 3750, false,
         "host time to issue one layer's kernels per micro-batch as eager PyTorch ops (forward + backward; shows in "
         "part, docs/model.md §4)",
         "about 150 kernels a layer forward and backward (some 50 ops forward, twice that for autograd) at 5-25 µs "
         "of CPU dispatch each in PyTorch: 0.75-3.75 ms; 3 ms; not fitted (calibration.json's layers are too large "
         "to tell it apart from GEMM efficiency)"},
        {"fused_host_share", &Efficiency::fused_host_share, "fused_host_share", S::one, "fraction", 0, 1, 0.5, 1, false,
         "share of layer_overhead a layer of fused kernels takes to issue (Megatron's and Transformer Engine's "
         "fusions, torch.compile)",
         "vTrain's smallest A100 layers (Megatron-DeepSpeed: apex layer norm, fused softmax, bias-GeLU and "
         "bias-dropout-add; hidden 1,024, TP 1, PP 1, micro-batch 1, full recompute) never ran faster than 3.3 ms "
         "a layer and micro-batch, which t_host = 2.2 ms meets: 0.73 of 3 ms; not fitted"},
        {"graph_node_gap_us", &Efficiency::graph_node_gap_s, "graph_node_gap_s", S::micro, "µs", 0, 1000, 0.2, 2, false,
         "time between one kernel of a replayed CUDA graph and the next, launched from the device (layout.cuda_graphs "
         "full; docs/model.md §4)",
         "NVIDIA Technical Blog, \"Getting Started with CUDA Graphs\" (2019): kernels of 2.9 µs ran 3.8 µs apart launched "
         "into a stream without host waits and 3.4 µs apart as one graph, 0.5 µs a node; not fitted"},
        {"reserve_gb", &Efficiency::reserve_bytes, "reserve_bytes", S::giga, "GB", 0, 1e4, 0.5, 12, true,
         "CUDA context, NCCL buffers and allocator slack per GPU",
         "CUDA context 0.5-1 GB, NCCL buffers per communicator; fitted: calibration.json measures no device memory, so the fit holds it where the runs that ran still fit as they ran, below its 4 GB start; a cluster's own calibrate fits it to the device figures its runs measured (nvidia-smi; fit_memory)"},
        {"fragmentation", &Efficiency::fragmentation, "fragmentation", S::one, "fraction", 0, 2, 0.05, 0.3, false,
         "extra share of activation memory PyTorch's classic caching allocator holds (none with expandable segments)",
         "PyTorch caching allocator: reserved 5-30 % above allocated; 0.2, the lowest median error on the Ultra-Scale "
         "Playbook's 1,170 reserved-memory readings (nanotron, classic allocator); not fitted for the defaults "
         "(calibration.json's measured memory is torchtitan's, under expandable segments); a cluster's own calibrate "
         "fits it to the reserved and device figures its runs measured (fit_memory)"},
    };
    return v;
}

const Constant* find_constant(std::string_view key) {
    for (const Constant& k : efficiency_constants())
        if (key == k.key) return &k;
    return nullptr;
}

void validate_efficiency(const Efficiency& e, const std::string& path) {
    for (const Constant& k : efficiency_constants()) {
        const double v = k.to_json(e);
        if (v >= k.valid_lo && v <= k.valid_hi) continue;
        const std::string field = path + ".efficiency." + k.key;
        if (std::string_view(k.unit) == "fraction")
            throw ConfigError(field, fmt::format("a fraction in [{}, {}], got {}", k.valid_lo, k.valid_hi, v));
        throw ConfigError(field, fmt::format("a number of {} in [{}, {}], got {}", k.unit, k.valid_lo, k.valid_hi, v));
    }
}

bool at_fit_bound(const Constant& k, const Efficiency& e) {
    const double v = k.to_json(e), margin = 0.005 * (k.fit_hi - k.fit_lo);
    return v <= k.fit_lo + margin || v >= k.fit_hi - margin;
}

std::vector<const Constant*> constants_at_bounds(const Efficiency& e, const std::vector<std::string>& unexercised) {
    std::vector<const Constant*> out;
    for (const Constant& k : efficiency_constants()) {
        if (!k.fitted || std::find(unexercised.begin(), unexercised.end(), k.key) != unexercised.end()) continue;
        if (at_fit_bound(k, e)) out.push_back(&k);
    }
    return out;
}

}  // namespace shardplan
