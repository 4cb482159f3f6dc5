/// Time of one collective on the cluster's two tiers, from an alpha-beta model (docs/model.md §5):
/// t = steps·α + S·factor / B, with B the achieved bandwidth of the tier the group uses. Like NCCL's
/// tuner, every applicable algorithm is priced and the fastest wins:
///   ring       inside one domain, or flat across domains (NIC-bound)
///   tree       log-latency variant (double binary tree), bandwidth ≈ 0.9 × ring
///   in-switch  NVLink SHARP all-reduce where the switch reduces (algbw ≈ 0.6 × link rate)
///   hierarchical  reduce-scatter inside each domain, then across domains, then all-gather
/// S is the full logical buffer as nccl-tests defines it (for all-to-all: one rank's send buffer).
///
///   Fabric f = make_fabric(cluster);
///   auto c = collective_time(Collective::all_reduce, 1e9, 8, 8, f);   // 8 ranks, all in one domain
///   c.time_s; c.tier == Tier::scale_up; c.algorithm;                  // "in-switch"
#pragma once
#include <cstdint>

#include "shardplan/enums.h"

namespace shardplan {

struct ClusterSpec;

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };

struct Fabric {
    double up_Bps = 0;        // achieved scale-up bandwidth per GPU per direction
    double up_line_Bps = 0;   // scale-up line rate (the in-switch model is relative to it)
    double out_Bps = 0;       // achieved NIC bandwidth per GPU per direction
    double up_latency_s = 0;  // α per step inside a domain
    double out_latency_s = 0; // α per step across domains
    bool in_switch = false;   // NVLS available inside the domain
    double a2a = 1.0;         // share of the achieved bandwidth an all-to-all reaches
};

Fabric make_fabric(const ClusterSpec& c);

struct CollectiveCost {
    double time_s = 0;
    Tier tier = Tier::scale_up;
    const char* algorithm = "none";
};

/// Bytes one rank puts on the wire for this collective of a full buffer S over n ranks (ring):
/// all-reduce 2(n-1)/n·S, reduce-scatter and all-gather (n-1)/n·S, all-to-all (n-1)/n·S, p2p S.
double wire_bytes(Collective c, double S, int64_t n);

/// `n` ranks spread over domains with `per_domain` members in each (per_domain == n: inside one domain).
CollectiveCost collective_time(Collective c, double S, int64_t n, int64_t per_domain, const Fabric& f);

const char* collective_name(Collective c);

}  // namespace shardplan
