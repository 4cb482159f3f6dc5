// Alpha-beta collective costs (docs/model.md §5; Thakur et al. 2005, nccl-tests PERFORMANCE.md,
// NCCL tuning constants). Every function is pure; the fastest applicable algorithm is returned.
#include "shardplan/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "shardplan/hardware.h"

namespace shardplan {

namespace {
constexpr double kTreeBwFactor = 0.9;       // NCCL caps tree bus bandwidth at ≈0.9 × ring
constexpr double kInSwitchAlgbw = 0.6;      // NVLS all-reduce algbw ≈ 0.6 × link rate (nccl-tests #212)
constexpr double kInSwitchLatency_s = 25e-6;  // NCCL NVLS base latency

// Bandwidth factor of the ring form: the share of S each rank sends.
double ring_factor(Collective c, int64_t n) {
    const double nn = static_cast<double>(n);
    switch (c) {
        case Collective::all_reduce: return 2.0 * (nn - 1) / nn;
        case Collective::reduce_scatter:
        case Collective::all_gather:
        case Collective::all_to_all: return (nn - 1) / nn;
        case Collective::send_recv: return 1.0;
    }
    return 1.0;
}

double ring_steps(Collective c, int64_t n) {
    const double nn = static_cast<double>(n);
    switch (c) {
        case Collective::all_reduce: return 2.0 * (nn - 1);
        case Collective::send_recv: return 1.0;
        default: return nn - 1;
    }
}

double tree_steps(Collective c, int64_t n) {
    const double lg = std::ceil(std::log2(static_cast<double>(std::max<int64_t>(n, 2))));
    return c == Collective::all_reduce ? 2.0 * lg : lg;
}

// Best of ring and tree over a single tier of bandwidth B and latency α. NCCL's tree is a double binary
// tree across nodes and a chain through the GPUs inside one (src/graph/tuning.cc: the tree's latency is
// 2·((nRanks/nNodes − 1)·intra + log2(nNodes)·inter)), so inside one scale-up domain it takes the ring's
// hops at less bandwidth and never wins: only a group across domains weighs it.
CollectiveCost flat(Collective c, double S, int64_t n, double B, double alpha, Tier tier) {
    const double bw_term = ring_factor(c, n) * S / B;
    CollectiveCost best{ring_steps(c, n) * alpha + bw_term, tier, "ring"};
    if (c == Collective::all_reduce && tier != Tier::scale_up) {
        const double tree = tree_steps(c, n) * alpha + bw_term / kTreeBwFactor;
        if (tree < best.time_s) best = {tree, tier, "tree"};
    }
    return best;
}
}  // namespace

Fabric make_fabric(const ClusterSpec& c) {
    Fabric f;
    f.up_line_Bps = c.gpu.scale_up_Bps;
    f.up_Bps = c.gpu.scale_up_Bps * c.gpu.eff.scale_up_bw;
    f.out_Bps = c.gpu.scale_out_Bps * c.gpu.eff.scale_out_bw;
    f.up_latency_s = c.gpu.scale_up_latency_s;
    f.out_latency_s = c.gpu.scale_out_latency_s;
    f.in_switch = c.gpu.in_switch_reduction;
    f.a2a = c.gpu.eff.a2a;
    return f;
}

double wire_bytes(Collective c, double S, int64_t n) { return n <= 1 ? 0.0 : ring_factor(c, n) * S; }

const char* collective_name(Collective c) {
    switch (c) {
        case Collective::all_reduce: return "all-reduce";
        case Collective::reduce_scatter: return "reduce-scatter";
        case Collective::all_gather: return "all-gather";
        case Collective::all_to_all: return "all-to-all";
        case Collective::send_recv: return "send/recv";
    }
    return "?";
}

CollectiveCost collective_time(Collective c, double S, int64_t n, int64_t per_domain, const Fabric& fabric) {
    if (n <= 1 || S <= 0) return {0.0, Tier::scale_up, "none"};
    Fabric f = fabric;
    if (c == Collective::all_to_all) {  // many small flows: a lower share of either tier's bandwidth
        f.up_Bps *= fabric.a2a;
        f.out_Bps *= fabric.a2a;
    }
    const int64_t G = std::clamp<int64_t>(per_domain, 1, n);
    if (G == n) {  // the whole group is inside one scale-up domain
        CollectiveCost best = flat(c, S, n, f.up_Bps, f.up_latency_s, Tier::scale_up);
        if (f.in_switch && c == Collective::all_reduce) {
            const double t = kInSwitchLatency_s + S / (kInSwitchAlgbw * f.up_line_Bps);
            if (t < best.time_s) best = {t, Tier::scale_up, "in-switch"};
        }
        return best;
    }
    if (c == Collective::send_recv) return {f.out_latency_s + S / f.out_Bps, Tier::scale_out, "p2p"};
    // Flat across domains: every rank's NIC carries its ring share; G rings share a domain's G NICs,
    // so the ring runs at min(NVLink, G × NIC) per rank-channel (hardware-and-formulas B.1.4). Not for
    // an all-to-all, which is no ring: each rank's (n − G)/n of its buffer bound for other domains leaves
    // over the domain's NICs beside every other rank's own, one NIC's worth per rank (below).
    const double flat_bw = std::min(f.up_Bps, static_cast<double>(G) * f.out_Bps);
    CollectiveCost best = c == Collective::all_to_all && G > 1
                              ? CollectiveCost{std::numeric_limits<double>::infinity(), Tier::scale_out, "none"}
                              : flat(c, S, n, G == 1 ? f.out_Bps : flat_bw, f.out_latency_s, Tier::scale_out);
    // NCCL runs reduce-scatter and all-gather as rings only (src/graph/tuning.cc: every algorithm but
    // ring is skipped for them); the two-level form below is its tree / NVLS-tree all-reduce.
    if (G > 1 && c != Collective::reduce_scatter && c != Collective::all_gather) {
        const double N = static_cast<double>((n + G - 1) / G);  // domains in the group
        const double g = static_cast<double>(G);
        double t_up = 0, t_out = 0, lat = 0;
        if (c == Collective::all_to_all) {
            // (G-1)/n of each rank's buffer stays inside its domain, the rest leaves over its NIC.
            t_up = (g - 1) / static_cast<double>(n) * S / f.up_Bps;
            t_out = (static_cast<double>(n) - g) / static_cast<double>(n) * S / f.out_Bps;
            lat = (g - 1) * f.up_latency_s + (N - 1) * f.out_latency_s;
        } else {  // all-reduce: RS inside, all-reduce on S/G across (one rail per GPU), AG inside, pipelined
            t_up = 2.0 * ring_factor(Collective::reduce_scatter, G) * S / f.up_Bps;
            t_out = ring_factor(c, static_cast<int64_t>(N)) * (S / g) / f.out_Bps;
            lat = 2.0 * (g - 1) * f.up_latency_s + tree_steps(c, static_cast<int64_t>(N)) * f.out_latency_s;
        }
        const double t = std::max(t_up, t_out) + lat;
        if (t < best.time_s) best = {t, Tier::scale_out, "hierarchical"};
        // NCCL's NVLSTree (2.18+): the domain's switch reduces and multicasts its part (one send of S per
        // rank, as the in-switch all-reduce inside a domain), a tree across domains on S/G; its latency is
        // the switch's, not a chain's through the G ranks.
        if (c == Collective::all_reduce && f.in_switch) {
            const double t_nvls = std::max(S / (kInSwitchAlgbw * f.up_line_Bps), t_out) + kInSwitchLatency_s +
                                  tree_steps(c, static_cast<int64_t>(N)) * f.out_latency_s;
            if (t_nvls < best.time_s) best = {t_nvls, Tier::scale_out, "nvls-tree"};
        }
    }
    return best;
}

}  // namespace shardplan
