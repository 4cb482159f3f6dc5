// Alpha-beta collective costs and the MoE dispatchers, hand-computed.
#include <gtest/gtest.h>

#include <algorithm>

#include "shardplan/collectives.h"
#include "shardplan/comm.h"
#include "shardplan/layout.h"
#include "shardplan/model.h"

using namespace shardplan;

namespace {
Fabric fabric(bool in_switch = false) {
    Fabric f;
    f.up_line_Bps = 450e9;
    f.up_Bps = 360e9;   // 0.8 × 450
    f.out_Bps = 45e9;   // 0.9 × 50
    f.up_latency_s = 2e-6;
    f.out_latency_s = 6e-6;
    f.in_switch = in_switch;
    return f;
}
}  // namespace

TEST(Collectives, RingAllReduceInsideDomain) {
    // 8 ranks, 1 GB: ring = 2·7·2 µs + 2·7/8 · 1e9 / 360e9 = 28 µs + 4.8611 ms.
    // tree = 2·7·2 µs + 4.8611 ms / 0.9 = 5.429 ms (a chain through the domain's ranks) → ring wins.
    const auto c = collective_time(Collective::all_reduce, 1e9, 8, 8, fabric());
    EXPECT_NEAR(c.time_s, 28e-6 + 1.75e9 / 360e9, 1e-9);
    EXPECT_EQ(c.tier, Tier::scale_up);
    EXPECT_STREQ(c.algorithm, "ring");
}

// NCCL's tree is a double binary tree across nodes and a chain through the GPUs of one (its tuning.cc
// prices the tree's latency at 2·((nRanks/nNodes − 1)·intra + log2(nNodes)·inter)), so a small all-reduce
// inside one domain gains nothing from it. 8 ranks, 2 MB: ring 2·7·2 µs + 1.75 · 2e6 / 360e9 = 28 µs +
// 9.722 µs = 37.722 µs; the chain 28 µs + 9.722 / 0.9 µs = 38.802 µs (as a binary tree, 2·3·2 µs + 10.802
// µs = 22.802 µs, it had won). One rank a domain, the tree is one: 16 ranks on 16 servers, 64 kB: ring
// 2·15·6 µs + 1.875 · 64e3 / 45e9 = 180 µs + 2.667 µs; tree 2·4·6 µs + 2.667 / 0.9 µs = 50.963 µs.
TEST(Collectives, TreeInsideADomainIsAChain) {
    const auto in = collective_time(Collective::all_reduce, 2e6, 8, 8, fabric());
    EXPECT_STREQ(in.algorithm, "ring");
    EXPECT_NEAR(in.time_s, 28e-6 + 1.75 * 2e6 / 360e9, 1e-12);
    const auto across = collective_time(Collective::all_reduce, 64e3, 16, 1, fabric());
    EXPECT_STREQ(across.algorithm, "tree");
    EXPECT_NEAR(across.time_s, 48e-6 + 1.875 * 64e3 / 45e9 / 0.9, 1e-12);
}

// AWS's EFA at its 22 µs a step (hardware.h, kEfaScaleOutLatency_s): an 8-byte all-reduce over two
// p5.48xlarge nodes, 16 H100 with NVLink SHARP inside each, is NVLS-tree: the in-switch all-reduce inside,
// 25 µs + 8 / (0.6 · 450e9) ≈ 25 µs, then the tree across the two nodes, 2·⌈log2 2⌉ = 2 steps of 22 µs:
// 69 µs, what nccl-tests measured there (aws/aws-k8s-tester PR #585); at InfiniBand's 6 µs, 37 µs.
TEST(Collectives, EfaLatencyReadsNcclTestsOnTwoP5Nodes) {
    Fabric f = fabric(true);
    f.out_latency_s = 22e-6;
    const auto efa = collective_time(Collective::all_reduce, 8, 16, 8, f);
    EXPECT_STREQ(efa.algorithm, "nvls-tree");
    EXPECT_NEAR(efa.time_s, 69e-6, 1e-8);
    EXPECT_NEAR(collective_time(Collective::all_reduce, 8, 16, 8, fabric(true)).time_s, 37e-6, 1e-8);
}

TEST(Collectives, InSwitchBeatsRingForLargeBuffers) {
    // NVLS: 25 µs + 1e9 / (0.6 · 450e9) = 3.7287 ms < ring 4.889 ms.
    const auto c = collective_time(Collective::all_reduce, 1e9, 8, 8, fabric(true));
    EXPECT_NEAR(c.time_s, 25e-6 + 1e9 / 270e9, 1e-9);
    EXPECT_STREQ(c.algorithm, "in-switch");
}

TEST(Collectives, OneRankPerDomainIsNicBound) {
    // 16 ranks, one per server, reduce-scatter 1 GB: ring 15·6 µs + 15/16 · 1e9 / 45e9 = 20.923 ms;
    // tree 4·6 µs + 20.833 ms / 0.9 is slower.
    const auto c = collective_time(Collective::reduce_scatter, 1e9, 16, 1, fabric());
    EXPECT_NEAR(c.time_s, 90e-6 + 15.0 / 16.0 * 1e9 / 45e9, 1e-9);
    EXPECT_EQ(c.tier, Tier::scale_out);
}

TEST(Collectives, HierarchicalAllReduceAcrossTwoServers) {
    // 16 ranks, 8 per server. Hierarchical: intra 2·7/8·S/360e9 = 4.861 ms, inter 2·1/2·(S/8)/45e9 = 2.778 ms,
    // pipelined → max = 4.861 ms + latency 2·7·2 µs + 2·1·6 µs = 40 µs.
    // Flat ring at min(360, 8·45 = 360) GB/s: 2·15/16·S/360e9 = 5.208 ms + 30·6 µs. Hierarchical wins.
    const auto c = collective_time(Collective::all_reduce, 1e9, 16, 8, fabric());
    EXPECT_NEAR(c.time_s, 1.75e9 / 360e9 + 40e-6, 1e-9);
    EXPECT_STREQ(c.algorithm, "hierarchical");
}

// NCCL runs reduce-scatter and all-gather as rings only (src/graph/tuning.cc skips every other
// algorithm for them), so across servers they get no two-level form: 16 ranks, 8 per server, 1 GB.
// Ring at min(360, 8·45 = 360) GB/s: 15/16 · 1e9 / 360e9 = 2.6042 ms + 15·6 µs = 2.6942 ms. (A two-level
// form would have priced it max(7/8 · S/360e9 = 2.431 ms, 1/2 · (S/8)/45e9 = 1.389 ms) + 7·2 + 6 µs =
// 2.451 ms, 9 % less.) All-reduce keeps its tree-like two-level form (above).
TEST(Collectives, ReduceScatterAndAllGatherAcrossServersAreRings) {
    for (Collective c : {Collective::reduce_scatter, Collective::all_gather}) {
        const auto t = collective_time(c, 1e9, 16, 8, fabric());
        EXPECT_NEAR(t.time_s, 15.0 / 16.0 * 1e9 / 360e9 + 15 * 6e-6, 1e-9);
        EXPECT_STREQ(t.algorithm, "ring");
        EXPECT_EQ(t.tier, Tier::scale_out);
    }
}

TEST(Collectives, TrivialGroupsCostNothing) {
    EXPECT_EQ(collective_time(Collective::all_reduce, 1e9, 1, 1, fabric()).time_s, 0.0);
    EXPECT_EQ(collective_time(Collective::all_gather, 0, 8, 8, fabric()).time_s, 0.0);
    EXPECT_EQ(wire_bytes(Collective::all_reduce, 1e9, 1), 0.0);
    EXPECT_NEAR(wire_bytes(Collective::all_reduce, 1e9, 4), 1.5e9, 1);
}

TEST(Collectives, AllToAllAcrossDomainsLeavesOverEachRanksOwnNic) {
    // 64 ranks, 8 per server, all-to-all of 1 GB per rank, a2a share 1: 56/64 of each rank's buffer is
    // bound for other servers and leaves over the server's NICs beside the other 7 ranks' own, 45 GB/s
    // each: 0.875e9 / 45e9 = 19.444 ms; 7/64 stays on NVLink (0.304 ms), in parallel; latency
    // 7·2 µs + 7·6 µs = 56 µs. No flat ring at 8 × 45 GB/s: an all-to-all is no ring (it priced this
    // 8× too fast, 2.4 ms).
    Fabric f = fabric();
    f.a2a = 1.0;
    const auto c = collective_time(Collective::all_to_all, 1e9, 64, 8, f);
    EXPECT_NEAR(c.time_s, 0.875e9 / 45e9 + 56e-6, 1e-9);
    EXPECT_STREQ(c.algorithm, "hierarchical");
    EXPECT_EQ(c.tier, Tier::scale_out);
}

// The MoE dispatchers, by hand (comm.h). 8 experts, top-2, one micro-batch of 1,000 tokens of h = 1,024:
// a copy of each token is 2 · 1,000 · 1,024 = 2.048 MB. EP 8 over 4 domains of 2 GPUs, one expert per
// GPU. NCCL's all-to-all sends both copies: S = 4.096 MB, 6/8 of it to other domains. DeepEP sends a
// token once to each GPU holding one of its experts: 8 · (1 − C(7,2)/C(8,2)) = 2 GPUs, 7/8 of them
// others, 1.75 copies over NVLink; and once to each other domain reached: its experts fall in
// 4 · (1 − C(6,2)/C(8,2)) = 4 · 13/28 domains, 3/4 of them others, 39/28 copies over the NIC:
// max(1.75 · 2.048e6 / 360e9, 39/28 · 2.048e6 / 45e9) + 1 · 2 µs + 3 · 6 µs. Group-limited routing with
// 4 groups and 1 group per token keeps each token's experts in one domain: 3/4 copy over the NIC.
TEST(Collectives, FlexDispatcherSendsATokenOncePerGpuAndPerDomain) {
    EXPECT_NEAR(expert_parts_hit(8, 2, 4.0), 4.0 * 13.0 / 28.0, 1e-12);
    EXPECT_NEAR(expert_parts_hit(8, 2, 8.0), 2.0, 1e-12);
    EXPECT_DOUBLE_EQ(expert_parts_hit(8, 2, 1.0), 1.0);
    ModelSpec m;
    m.hidden = 1024;
    MoeSpec e;
    e.experts = 8;
    e.top_k = 2;
    m.moe = e;
    Layout l;
    l.tp = 1;
    l.micro_batch = 1;
    l.seq_len = 1000;
    const GroupPlacement g{Axis::ep, 8, 1, 4, 2};
    Fabric f = fabric();
    f.a2a = 1.0;
    const double unit = 2.048e6;
    const Traffic nccl = ep_traffic(m, l, g, f);
    EXPECT_DOUBLE_EQ(nccl.buffer_bytes, 2 * unit);
    EXPECT_NEAR(nccl.time_s, collective_time(Collective::all_to_all, 2 * unit, 8, 2, f).time_s, 1e-15);
    l.moe_dispatcher = Dispatcher::deepep;
    const Traffic deepep = ep_traffic(m, l, g, f);
    const double remote = 39.0 / 28.0;
    EXPECT_NEAR(deepep.time_s, std::max(1.75 * unit / 360e9, remote * unit / 45e9) + 2e-6 + 18e-6, 1e-12);
    EXPECT_NEAR(deepep.wire_bytes, (2.0 * 1.0 / 8.0 + remote) * unit, 1e-3);  // its domain's other GPU, other domains
    EXPECT_STREQ(deepep.algorithm, "deepep");
    EXPECT_LT(deepep.time_s, nccl.time_s);
    m.moe->router_groups = 4;
    m.moe->group_topk = 1;
    EXPECT_NEAR(ep_traffic(m, l, g, f).time_s, 0.75 * unit / 45e9 + 20e-6, 1e-12);
    // Inside one domain only the per-GPU copies count: EP 4 on 4 GPUs, 2 experts each, 4 · 13/28 GPUs
    // touched, 3/4 of them others, over NVLink.
    const GroupPlacement one{Axis::ep, 4, 1, 1, 4};
    m.moe->router_groups = 1;
    m.moe->group_topk = 0;
    EXPECT_NEAR(ep_traffic(m, l, one, f).time_s, 4.0 * 13.0 / 28.0 * 0.75 * unit / 360e9 + 3 * 2e-6, 1e-12);
}

// layout.zero3_comm per_tensor (comm.h): DeepSpeed 2021's ZeRO-3 moves each GPU's share at 21 GB/s at most,
// whatever the links. 1 GB gathered over 16 ranks, 8 to a domain: the ring runs at min(360, 8 · 45) =
// 360 GB/s, 15 · 6 µs + 15/16 · 1e9 / 360e9 = 2.694 ms; per tensor 15/16 · 1e9 / 21e9 = 44.643 ms. A link
// slower than that engine keeps the link's time: one rank a domain at 10 GB/s, 15 · 6 µs + 93.75 ms.
TEST(Collectives, PerTensorZero3MovesAtDeepSpeedsOwnRate) {
    const GroupPlacement g{Axis::dp, 16, 1, 2, 8};
    const Traffic ring = dp_gather_traffic(1e9, g, fabric());
    EXPECT_NEAR(ring.time_s, 90e-6 + 0.9375e9 / 360e9, 1e-9);
    const Traffic engine = per_tensor_zero3(ring);
    EXPECT_NEAR(engine.time_s, 0.9375e9 / 21e9, 1e-9);
    EXPECT_DOUBLE_EQ(engine.wire_bytes, ring.wire_bytes);  // the same bytes, more slowly
    Fabric slow = fabric();
    slow.out_Bps = 10e9;
    const GroupPlacement spread{Axis::dp, 16, 8, 16, 1};
    const Traffic nic = dp_gather_traffic(1e9, spread, slow);
    EXPECT_NEAR(nic.time_s, 90e-6 + 0.9375e9 / 10e9, 1e-9);
    EXPECT_DOUBLE_EQ(per_tensor_zero3(nic).time_s, nic.time_s);
}

// Which frameworks run ZeRO-3 per tensor: DeepSpeed, or Megatron-LM (whose ZeRO-3 runs were DeepSpeed's),
// named with a year up to 2021; a later year, no year, FSDP and NeMo's recipes are bucketed.
TEST(Collectives, PerTensorZero3IsDeepSpeedUpTo2021) {
    for (const char* f : {"Megatron-LM (2021)", "DeepSpeed 0.3.16 (2021)", "Megatron-DeepSpeed 2020"})
        EXPECT_EQ(framework_defaults(f).zero3_comm, Zero3Comm::per_tensor) << f;
    for (const char* f : {"Megatron-LM (2022)", "DeepSpeed", "Megatron-DeepSpeed (BigScience, 2022)", "torchtitan",
                          "Composer / llm-foundry (PyTorch FSDP)", "NeMo (2021)", "Megatron-LM r0.2021", ""})
        EXPECT_EQ(framework_defaults(f).zero3_comm, Zero3Comm::bucketed) << f;
}
