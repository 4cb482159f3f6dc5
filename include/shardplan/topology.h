/// Where each parallel group lands on the machine. Ranks fill scale-up domains in order (ranks
/// 0..D-1 share domain 0, D the GPUs the job uses of each NVLink/xGMI domain, domain_occupancy); an
/// axis with stride σ and size n forms
/// groups {r0 + j·σ}. A group whose members sit in more than one domain is *crossing*: its traffic
/// leaves NVLink for the NICs (the seed's red group). The strides follow Layout::order.
///
///   auto g = place_groups(cluster, layout);
///   g[0].axis == Axis::tp; g[0].domains_spanned;   // 2 for TP16 on 8-GPU servers: crossing
#pragma once
#include <cstdint>
#include <vector>

#include "shardplan/enums.h"

namespace shardplan {

struct ClusterSpec;
struct Layout;

struct GroupPlacement {
    Axis axis = Axis::tp;
    int64_t size = 1;             // members per group
    int64_t stride = 1;           // rank distance between consecutive members
    int64_t domains_spanned = 1;  // worst group of this axis: scale-up domains its members occupy
    int64_t per_domain = 1;       // members sharing one domain (the intra-domain part of a hierarchical collective)
    bool crosses_domain() const { return domains_spanned > 1; }
};

/// Worst case over all groups of one axis: the most domains any one group {r0 + j·stride} spans,
/// with `world` ranks in domains of `domain` consecutive ranks.
int64_t domains_spanned(int64_t stride, int64_t size, int64_t domain, int64_t world);

/// GPUs a job of `world` ranks uses in each scale-up domain. A job that fills whole domains, or fits in
/// one, uses them whole; otherwise it is placed in equal segments of whole nodes, one per domain, as a
/// topology-aware scheduler places it (Slurm's topology/block plugin with --segment; 256 GB200 GPUs on
/// 72-GPU NVL72 racks run as 4 × 64): the largest multiple of gpus_per_node at most the domain size that
/// divides the job. Where none does, ranks fill whole domains in order.
int64_t domain_occupancy(const ClusterSpec& c, int64_t world);

/// Stride of each dense axis (tp, cp, dp, pp) under the layout's rank order.
int64_t axis_stride(const Layout& l, Axis a);

/// Placement of every group that carries traffic: tp, cp, pp, dp, the dense gradient group dp×cp
/// (reported as dp), and for MoE models ep, etp and edp.
std::vector<GroupPlacement> place_groups(const ClusterSpec& c, const Layout& l);
/// The same into `out`, reusing its storage.
void place_groups(const ClusterSpec& c, const Layout& l, std::vector<GroupPlacement>& out);
/// The placement of axis `a` among `groups`, or nullptr where the layout has no such group.
const GroupPlacement* find_group(const std::vector<GroupPlacement>& groups, Axis a);

}  // namespace shardplan
