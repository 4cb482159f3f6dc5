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
