// Group placement on scale-up domains: the seed's red group.
#include <gtest/gtest.h>

#include "shardplan/presets.h"
#include "shardplan/topology.h"

using namespace shardplan;

namespace {
GroupPlacement tp_group(const char* cluster, int64_t gpus, int64_t tp) {
    ClusterSpec c = preset_cluster(cluster);
    c.gpus = gpus;
    Layout l;
    l.tp = tp;
    l.dp = gpus / tp;
    return place_groups(c, l).front();
}
}  // namespace

TEST(Topology, Tp16On8GpuServersCrosses) {
    // TP innermost: ranks 0..15 form one group; 8 per server → 2 domains.
    const GroupPlacement g = tp_group("dgx-h100", 64, 16);
    EXPECT_EQ(g.axis, Axis::tp);
    EXPECT_TRUE(g.crosses_domain());
    EXPECT_EQ(g.domains_spanned, 2);
    EXPECT_EQ(g.per_domain, 8);
}

TEST(Topology, Tp8On8GpuServersStaysInside) { EXPECT_FALSE(tp_group("dgx-h100", 64, 8).crosses_domain()); }

TEST(Topology, Tp72OnNvl72StaysInside) {
    const GroupPlacement g = tp_group("nvl72", 144, 72);
    EXPECT_FALSE(g.crosses_domain());
    EXPECT_EQ(g.domains_spanned, 1);
}

TEST(Topology, Tp144OnNvl72Crosses) {
    const GroupPlacement g = tp_group("nvl72", 288, 144);
    EXPECT_TRUE(g.crosses_domain());
    EXPECT_EQ(g.domains_spanned, 2);
}

TEST(Topology, IrregularGroupStraddlesDomainBoundary) {
    // TP16 on 72-GPU racks: groups start at 0, 16, 32, 48, 64 → the group 64..79 spans racks 0 and 1.
    EXPECT_EQ(domains_spanned(1, 16, 72, 144), 2);
    // TP8 on 72: 72 = 9·8, every group aligned inside a rack.
    EXPECT_EQ(domains_spanned(1, 8, 72, 144), 1);
}

// A job that does not fill whole domains runs in equal segments of whole nodes, one per domain (Slurm's
// topology/block plugin with --segment): the largest multiple of gpus_per_node, at most the domain, that
// divides the job. NVL72 (4 GPUs a tray): 256 GPUs run as 4 × 64, 128 as 2 × 64, 100 as 5 × 20; 144
// fills two racks, 72 one, 40 fits in one. 8-GPU servers: always whole servers. With 8 per node on 72-GPU
// domains, 96 GPUs run as 2 × 48. So an EP32 group of a 256-GPU job stays inside its rack (ranks 64..95
// are the second rack's first 32), where filling racks in order put ranks 72..95 in the next one.
TEST(Topology, JobsRunInEqualSegmentsPerDomain) {
    ClusterSpec c = preset_cluster("nvl72");
    ASSERT_EQ(c.scale_up_domain, 72);
    ASSERT_EQ(c.gpus_per_node, 4);
    EXPECT_EQ(domain_occupancy(c, 256), 64);
    EXPECT_EQ(domain_occupancy(c, 128), 64);
    EXPECT_EQ(domain_occupancy(c, 100), 20);
    EXPECT_EQ(domain_occupancy(c, 144), 72);
    EXPECT_EQ(domain_occupancy(c, 72), 72);
    EXPECT_EQ(domain_occupancy(c, 40), 72);
    c.gpus_per_node = 8;
    EXPECT_EQ(domain_occupancy(c, 96), 48);
    EXPECT_EQ(domain_occupancy(preset_cluster("dgx-h100"), 512), 8);
    c = preset_cluster("nvl72");
    c.gpus = 256;
    Layout l;
    l.pp = 8;
    l.dp = 32;
    l.ep = 32;
    bool seen = false;
    for (const GroupPlacement& g : place_groups(c, l))
        if (g.axis == Axis::ep) {
            seen = true;
            EXPECT_FALSE(g.crosses_domain());
        }
    EXPECT_TRUE(seen);
}

TEST(Topology, DpGroupStrideFollowsOrder) {
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 128;
    Layout l;
    l.tp = 8;
    l.pp = 2;
    l.dp = 8;  // order tp-cp-ep-dp-pp: dp stride 8, pp stride 64
    EXPECT_EQ(axis_stride(l, Axis::tp), 1);
    EXPECT_EQ(axis_stride(l, Axis::dp), 8);
    EXPECT_EQ(axis_stride(l, Axis::pp), 64);
    const auto groups = place_groups(c, l);
    EXPECT_EQ(groups[3].axis, Axis::dp);
    EXPECT_EQ(groups[3].domains_spanned, 8);  // each DP member on its own server
    l.order = *parse_order("dp-tp-cp-ep-pp");  // DP innermost: the TP group now strides across servers
    EXPECT_EQ(axis_stride(l, Axis::tp), 8);
    EXPECT_TRUE(place_groups(c, l)[0].crosses_domain());
}

TEST(Topology, ParseOrderRejectsMalformed) {
    EXPECT_TRUE(parse_order("tp-cp-ep-dp-pp"));
    EXPECT_TRUE(parse_order("tp-cp-dp-pp"));  // ep placed inside dp
    EXPECT_FALSE(parse_order("tp-tp-cp-dp-pp"));
    EXPECT_FALSE(parse_order("tp-cp-dp"));
    EXPECT_FALSE(parse_order("tp-xx-ep-dp-pp"));
    EXPECT_FALSE(parse_order(""));
}
