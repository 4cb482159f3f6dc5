#include "shardplan/hardware.h"

#include "shardplan/constants.h"

#include <cctype>

#include <fmt/format.h>

#include "shardplan/error.h"

namespace shardplan {

double GpuSpec::peak_flops(Precision p) const {
    switch (p) {
        case Precision::bf16:
        case Precision::fp16: return peak_16_flops;
        case Precision::fp8:
        case Precision::mxfp8: return peak_8_flops > 0 ? peak_8_flops : peak_16_flops;
        case Precision::nvfp4:
            return peak_4_flops > 0 ? peak_4_flops : (peak_8_flops > 0 ? peak_8_flops : peak_16_flops);
    }
    return peak_16_flops;
}

bool names_efa(const std::string& note) {
    const std::string s = ascii_lower(note);
    auto alnum = [&](size_t i) { return i < s.size() && std::isalnum(static_cast<unsigned char>(s[i])) != 0; };
    auto digit = [&](size_t i) { return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0; };
    for (size_t at = s.find("efa"); at != std::string::npos; at = s.find("efa", at + 1)) {
        if (at > 0 && alnum(at - 1)) continue;
        size_t end = at + 3;
        if (end < s.size() && s[end] == 'v' && digit(end + 1)) {  // "EFAv2": the adapter's generation
            ++end;
            while (digit(end)) ++end;
        }
        if (!alnum(end)) return true;
    }
    return false;
}

std::optional<std::string> GpuSpec::precision_problem(Precision p) const {
    const std::string& g = generation;
    const bool blackwell = g == "blackwell", cdna4 = g == "cdna4";
    auto no = [&](const char* needs) {
        return std::optional<std::string>(fmt::format("a precision {} ({}) trains in; {} needs {}", id, g,
                                                      enum_name(p), needs));
    };
    switch (p) {
        case Precision::bf16:
            if (g == "volta") return no("Ampere or later (Volta has fp16 tensor cores only)");
            return std::nullopt;
        case Precision::fp16: return std::nullopt;
        case Precision::fp8:
            if (peak_8_flops <= 0 || !(g == "ada" || g == "hopper" || blackwell || g == "cdna3" || cdna4))
                return no("FP8 tensor cores: Ada, Hopper, Blackwell, MI300 or MI355");
            return std::nullopt;
        case Precision::mxfp8:
            if (peak_8_flops <= 0 || !(blackwell || cdna4)) return no("block-scaled MX tensor cores: Blackwell or MI355");
            return std::nullopt;
        case Precision::nvfp4:
            if (peak_4_flops <= 0 || !blackwell) return no("NVFP4 tensor cores: Blackwell");
            return std::nullopt;
    }
    return std::nullopt;
}

void validate_cluster(const ClusterSpec& c, const std::string& path) {
    if (c.gpus <= 0 || c.gpus > 100'000'000)
        throw ConfigError(path + ".gpus", fmt::format("an integer in [1, 100000000], got {}", c.gpus));
    if (c.gpus_per_node <= 0 || c.gpus_per_node > 1'000'000)
        throw ConfigError(path + ".gpus_per_node", fmt::format("a positive integer, got {}", c.gpus_per_node));
    if (c.scale_up_domain <= 0 || c.scale_up_domain > 100'000'000)
        throw ConfigError(path + ".scale_up_domain", fmt::format("a positive integer, got {}", c.scale_up_domain));
    // Physical ranges, far outside any real part in both directions (a zero, a bandwidth of 1e-300 that
    // would print 300-digit step times, a latency of 1e30 s); the lower ends of the ones a step divides
    // by are positive.
    auto within = [&](double v, const char* field, double lo, double hi, double unit) {
        if (!(v >= lo * unit && v <= hi * unit))
            throw ConfigError(path + ".gpu." + field, fmt::format("a number in [{}, {}], got {}", lo, hi, v / unit));
    };
    const GpuSpec& g = c.gpu;
    within(g.hbm_bytes, "hbm_gb", 0, 1e5, 1e9);
    within(g.hbm_usable_bytes, "hbm_usable_gb", 0.1, 1e5, 1e9);
    within(g.hbm_Bps, "hbm_tbps", 0.01, 1e3, 1e12);
    within(g.peak_16_flops, "bf16_tflops", 0.1, 1e6, 1e12);
    within(g.peak_8_flops, "fp8_tflops", 0, 1e6, 1e12);
    within(g.peak_4_flops, "fp4_tflops", 0, 1e6, 1e12);
    within(g.scale_up_Bps, "scale_up_gbps", 0.01, 1e6, 1e9);
    within(g.scale_out_Bps, "scale_out_gbps", 0.01, 1e6, 1e9);
    within(g.scale_up_latency_s, "scale_up_latency_us", 0, 1e6, 1e-6);
    within(g.scale_out_latency_s, "scale_out_latency_us", 0, 1e6, 1e-6);
    if (!is_known_generation(g.generation))
        throw ConfigError(path + ".gpu.generation", "one of " + known_generations() + ", got \"" + g.generation + "\"");
    if (c.gpu.hbm_bytes > 0 && c.gpu.hbm_usable_bytes > c.gpu.hbm_bytes)
        throw ConfigError(path + ".hbm_usable_gb", "at most hbm_gb (usable memory cannot exceed physical)");
    validate_efficiency(c.gpu.eff, path);
}

}  // namespace shardplan

namespace shardplan {

namespace {
constexpr const char* kGenerations[] = {"volta", "ampere", "ada", "hopper", "blackwell", "cdna3", "cdna4", "tpu"};
}  // namespace

bool is_known_generation(const std::string& g) {
    for (const char* k : kGenerations)
        if (g == k) return true;
    return false;
}

std::string known_generations() {
    std::string s;
    for (const char* k : kGenerations) s += (s.empty() ? "" : ", ") + std::string(k);
    return s;
}

Efficiency default_efficiency(const std::string& generation) {
    // Generations without published runs in the calibration set borrow the nearest fitted one
    // (docs/validation.md): Volta and TPU from Ampere; AMD CDNA from Hopper, with GEMMs at 0.7 of it
    // (hipBLASLt reaches 44 % of MI300X's fp8 peak where cuBLASLt reaches 66 % on H200, reference B.6)
    // and RCCL at 75 % of xGMI's link rate (AMD's RCCL blog).
    if (generation == "volta" || generation == "tpu") return default_efficiency("ampere");
    // Ada (L40S) has Hopper's FP8 tensor cores and Transformer Engine support but no published run here.
    if (generation == "ada") {  // FlashAttention-3 and cuDNN's Hopper kernels need sm90
        Efficiency e = default_efficiency("hopper");
        e.attn_fused = 1.0;
        return e;
    }
    if (generation == "cdna3" || generation == "cdna4") {
        Efficiency e = default_efficiency("hopper");
        e.gemm_16 *= 0.7;
        e.gemm_8 *= 0.7;
        e.gemm_4 *= 0.7;
        e.scale_up_bw = 0.75;
        e.attn_fused = 1.0;  // no cuDNN: CK's flash attention, FlashAttention-2's class
        return e;
    }
    Efficiency e;
    // FITTED-BEGIN (tools/fit_defaults.py: shardplan calibrate calibration.json --per-generation)
    if (generation == "ampere") {  // 98 runs
        e.gemm_16 = 0.7898;
        e.gemm_8 = 0.65;
        e.gemm_4 = 0.55;
        e.gemm_half_dim = 165.7;
        e.moe = 0.7072;
        e.attn = 0.214;
        e.scale_out_bw = 0.9;
        e.overlap_dp = 0.6574;
        e.a2a = 0.7851;
        e.reserve_bytes = 2.226e+09;
    }
    if (generation == "blackwell") {  // 64 runs
        e.gemm_16 = 0.51;
        e.gemm_8 = 0.5699;
        e.gemm_4 = 0.6152;
        e.gemm_half_dim = 250;
        e.moe = 0.6301;
        e.attn = 0.2412;
        e.scale_out_bw = 0.9;
        e.overlap_dp = 0.2326;
        e.a2a = 0.9453;
        e.reserve_bytes = 2.226e+09;
    }
    if (generation == "hopper") {  // 162 runs
        e.gemm_16 = 0.7023;
        e.gemm_8 = 0.6562;
        e.gemm_4 = 0.55;
        e.gemm_half_dim = 520.4;
        e.moe = 0.7885;
        e.attn = 0.2161;
        e.scale_out_bw = 0.9;
        e.overlap_dp = 0.8951;
        e.a2a = 0.7864;
        e.reserve_bytes = 2.321e+09;
    }
    // FITTED-END
    // Hopper-native attention (cuDNN fused attention, FlashAttention-3) against FlashAttention-2 on H100,
    // head dim 128, 2k-16k keys: forward 1.6-1.75 ×, backward 1.5-1.75 × (FlashAttention-3 paper, Shah et
    // al. 2024, Fig. 5-7). Blackwell is taken as Hopper (no FlashAttention-2 comparison there; its runs are
    // all fused); on Ampere cuDNN's fused attention is FlashAttention-2's speed.
    if (generation == "hopper" || generation == "blackwell") e.attn_fused = 1.6;
    // FlashAttention-2 on A100 against H100, each as a share of its GPU's peak: 0.5-0.7 (FlashAttention-2
    // paper, Dao 2023) against 0.35-0.4 (FlashAttention-3 paper): 1.6, the middles' ratio. `attn` is read
    // as H100's; other GPUs keep 1, no FlashAttention-2 measurement of theirs being at hand.
    if (generation == "ampere") e.attn_gpu = 1.6;
    return e;
}

}  // namespace shardplan
