// The one resolver of overrides: the command line's flags and a search request's pins.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "shardplan/api.h"
#include "shardplan/error.h"
#include "shardplan/presets.h"
#include "shardplan/resolve.h"

using namespace shardplan;

namespace {
std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}
Case llama70b_on(int64_t gpus) {
    Case c;
    c.model = preset_model("llama3-70b");
    c.cluster = preset_cluster("dgx-h100");
    c.cluster.gpus = gpus;
    c.layout.tp = 8;
    c.layout.pp = 4;
    c.layout.dp = 0;
    c.layout.global_batch = 256;
    return c;
}
}  // namespace

// The same pins as flags and as a request give the same search space.
TEST(Resolve, FlagsAndPinsAreOneSearchSpace) {
    Overrides flags;
    flags.tp = 8;
    flags.pp = 4;
    flags.micro_batch = 2;
    flags.zero = 1;
    flags.recompute = "selective";
    flags.schedule = "interleaved";
    flags.sequence_parallel = "on";
    flags.order = "tp-cp-ep-pp-dp";
    flags.no_crossing = true;
    flags.headroom = 0.1;
    const Overrides pins = overrides_from_json(nlohmann::json::parse(
        R"({"tp": 8, "pp": 4, "micro_batch": 2, "zero": 1, "recompute": "selective", "schedule": "interleaved",
            "sequence_parallel": true, "order": "tp-cp-ep-pp-dp", "no_crossing": true, "headroom": 0.1})"));
    for (const SearchSpace& sp : {search_space(flags, Naming::flags), search_space(pins, Naming::pins)}) {
        EXPECT_EQ(sp.tp, 8);
        EXPECT_EQ(sp.pp, 4);
        EXPECT_FALSE(sp.cp);
        EXPECT_EQ(sp.micro_batch, 2);
        EXPECT_EQ(sp.zero, 1);
        EXPECT_EQ(sp.recompute, Recompute::selective);
        EXPECT_EQ(sp.schedule, Schedule::interleaved);
        EXPECT_EQ(sp.sequence_parallel, true);
        ASSERT_TRUE(sp.order);
        EXPECT_EQ((*sp.order)[3], Axis::pp);
        EXPECT_TRUE(sp.no_crossing);
        EXPECT_DOUBLE_EQ(sp.headroom, 0.1);
    }
}

// One check, named the way the user wrote the field.
TEST(Resolve, EachRefusalNamesTheFlagOrThePin) {
    Overrides o;
    o.micro_batch = 0;
    EXPECT_EQ(error_of([&] { search_space(o, Naming::flags); }), "--micro-batch: expected an integer in [1, 100000000], got 0");
    EXPECT_EQ(error_of([&] { search_space(o, Naming::pins); }), "pins.micro_batch: expected an integer in [1, 100000000], got 0");
    o = {};
    o.headroom = 1.5;
    EXPECT_EQ(error_of([&] { search_space(o, Naming::flags); }),
              "--headroom: expected a share in [0, 1] of the memory a layout needs, got 1.5");
    EXPECT_EQ(error_of([&] { search_space(o, Naming::pins); }),
              "pins.headroom: expected a share in [0, 1] of the memory a layout needs, got 1.5");
    EXPECT_EQ(error_of([&] { overrides_from_json(nlohmann::json::parse(R"({"headroom": "some"})")); }),
              "pins.headroom: expected a number in [0, 1]");
    o = {};
    o.sequence_parallel = "maybe";
    EXPECT_EQ(error_of([&] { search_space(o, Naming::flags); }), "--sequence-parallel: expected true or false, got \"maybe\"");
    o = {};
    o.tp_recompute_allgather = "no";
    EXPECT_EQ(error_of([&] { apply_overrides(llama70b_on(128), o, Naming::flags); }),
              "--tp-recompute-allgather: expected true or false, got \"no\"");
    o.tp_recompute_allgather = "false";
    EXPECT_FALSE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.tp_recompute_allgather);
    EXPECT_TRUE(llama70b_on(128).layout.tp_recompute_allgather);  // Megatron's way and nanotron's default
    // FP8 weights held alone: Megatron-Bridge's FP8 recipes by default, which a new precision follows, and
    // the flag over both.
    o = {};
    o.framework = "Megatron-Bridge";
    o.precision = "fp8";
    EXPECT_TRUE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.fp8_params);
    o.precision = "nvfp4";
    EXPECT_FALSE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.fp8_params);
    o.precision = "fp8";
    o.fp8_params = "false";
    EXPECT_FALSE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.fp8_params);
    o.fp8_params = "8bit";
    EXPECT_EQ(error_of([&] { apply_overrides(llama70b_on(128), o, Naming::flags); }),
              "--fp8-params: expected true or false, got \"8bit\"");
    // FSDP's fp32 shards follow a framework named torchtitan, and the flag overrides it.
    o = {};
    EXPECT_FALSE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.fp32_shards);
    o.framework = "torchtitan";
    EXPECT_TRUE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.fp32_shards);
    o.fp32_shards = "false";
    EXPECT_FALSE(apply_overrides(llama70b_on(128), o, Naming::flags).layout.fp32_shards);
    o.fp32_shards = "fp32";
    EXPECT_EQ(error_of([&] { apply_overrides(llama70b_on(128), o, Naming::flags); }),
              "--fp32-shards: expected true or false, got \"fp32\"");
    // The layout's 0 global batch means "not stated"; typed, it is refused rather than read as that.
    o = {};
    o.global_batch = 0;
    EXPECT_EQ(error_of([&] { apply_overrides(llama70b_on(128), o, Naming::flags); }),
              "--global-batch: expected a positive integer, got 0");
    o = {};
    o.zero = 4;
    EXPECT_EQ(error_of([&] { apply_overrides(llama70b_on(128), o, Naming::pins); }), "pins.zero: expected 0, 1, 2 or 3, got 4");
    EXPECT_NE(error_of([] { overrides_from_json(nlohmann::json::parse(R"({"tpp": 8})")); }).find("pins.tpp: expected a known dimension"),
              std::string::npos);
    EXPECT_EQ(error_of([] { overrides_from_json(nlohmann::json::parse(R"({"tp": "8"})")); }), "pins.tp: expected an integer");
    // A request's search answers with the same message.
    const ApiResponse r = handle_api("POST", "/api/search",
                                     R"({"model": "llama3-8b", "cluster": "dgx-h100", "layout": {}, "pins": {"micro_batch": 0}})");
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("pins.micro_batch: expected an integer in [1, 100000000], got 0"), std::string::npos) << r.body;
}

// dp follows the other degrees and the GPU count unless it is given; the schedule follows vpp and
// sequence parallelism follows tp unless they are given.
TEST(Resolve, DerivationsFollowTheOverrides) {
    Case c = llama70b_on(128);
    c.layout.dp = 4;  // stated by the case
    Overrides o;
    o.gpus = 256;  // 256 / (8·4) = 8
    EXPECT_EQ(apply_overrides(c, o, Naming::flags).layout.dp, 8);
    o.dp = 2;  // given: kept, check_layout judges it
    EXPECT_EQ(apply_overrides(c, o, Naming::flags).layout.dp, 2);
    o = {};
    EXPECT_EQ(apply_overrides(c, o, Naming::flags).layout.dp, 4);  // nothing changed: the case's own
    o.tp = 6;  // 128 / (6·4) does not divide
    EXPECT_NE(error_of([&] { apply_overrides(c, o, Naming::flags); }).find("--dp: expected"), std::string::npos);
    o = {};
    o.vpp = 5;
    EXPECT_EQ(apply_overrides(c, o, Naming::flags).layout.schedule, Schedule::interleaved);
    o.schedule = "zb";
    EXPECT_EQ(apply_overrides(c, o, Naming::flags).layout.schedule, Schedule::zb);
    o = {};
    o.tp = 1;
    EXPECT_FALSE(apply_overrides(c, o, Naming::flags).layout.sequence_parallel);
    o.sequence_parallel = "true";
    EXPECT_TRUE(apply_overrides(c, o, Naming::flags).layout.sequence_parallel);
}

// A framework named on top of a case brings its ways (framework_defaults); a flag given beside it wins.
// recompute_layers and recompute_method go with full recomputation only, and are no search pins.
TEST(Resolve, FrameworkBringsItsDefaultsAndRecomputeLayersNeedFull) {
    // What a set of flags makes of Llama 3 70B on 128 GPUs.
    const auto resolved = [](const Overrides& o) { return apply_overrides(llama70b_on(128), o, Naming::flags).layout; };
    Overrides o;
    o.framework = "nanotron";
    const Layout nano = resolved(o);
    EXPECT_EQ(nano.kernels, Kernels::eager);
    EXPECT_EQ(nano.stage_split, StageSplit::cost);
    EXPECT_EQ(nano.grad_buckets, GradBuckets::copies);
    EXPECT_EQ(nano.grad_accumulation, GradAccumulation::eager);
    EXPECT_EQ(nano.cross_entropy, CrossEntropy::sharded);
    o.grad_accumulation = "fused";  // a flag beside the framework wins
    EXPECT_EQ(resolved(o).grad_accumulation, GradAccumulation::fused);
    o.cross_entropy = "upcast";
    EXPECT_EQ(resolved(o).cross_entropy, CrossEntropy::upcast);
    o.cross_entropy = "";
    o.stage_split = "even";
    EXPECT_EQ(resolved(o).stage_split, StageSplit::even);
    // The attention kernel too: NeMo brings cuDNN's fused kernel, and --attention-kernel beside it wins.
    Overrides a;
    a.framework = "NeMo";
    EXPECT_EQ(resolved(a).attention_kernel, AttentionKernel::fused);
    a.attention_kernel = "flash";
    EXPECT_EQ(resolved(a).attention_kernel, AttentionKernel::flash);
    // HAI-LLM dispatches with DeepEP; --moe-dispatcher beside it wins.
    Overrides h;
    h.framework = "HAI-LLM";
    EXPECT_EQ(resolved(h).moe_dispatcher, Dispatcher::deepep);
    h.moe_dispatcher = "hybridep";
    EXPECT_EQ(resolved(h).moe_dispatcher, Dispatcher::hybridep);
    h.moe_dispatcher = "nccl";
    EXPECT_EQ(error_of([&] { resolved(h); }), "--moe-dispatcher: expected one of alltoall, deepep, hybridep, got \"nccl\"");
    // torchtitan launches with expandable segments; elsewhere the classic allocator; --allocator wins.
    Overrides tt;
    tt.framework = "torchtitan";
    EXPECT_EQ(resolved(tt).allocator, Allocator::expandable);
    EXPECT_EQ(nano.allocator, Allocator::classic);
    tt.allocator = "classic";
    EXPECT_EQ(resolved(tt).allocator, Allocator::classic);
    tt.allocator = "pooled";
    EXPECT_EQ(error_of([&] { resolved(tt); }), "--allocator: expected one of classic, expandable, got \"pooled\"");
    // Megatron-LM keeps fp32 gradients with bf16, 16-bit ones with fp16: --precision moves a default
    // gradient dtype with it, and --grad-dtype beside it still wins.
    Overrides mp;
    mp.framework = "Megatron-LM";
    const Case megatron = apply_overrides(llama70b_on(128), mp, Naming::flags);
    EXPECT_EQ(megatron.layout.grad_dtype, GradDtype::fp32);
    Overrides fp16;
    fp16.precision = "fp16";
    EXPECT_EQ(apply_overrides(megatron, fp16, Naming::flags).layout.grad_dtype, GradDtype::bf16);
    fp16.grad_dtype = "fp32";
    EXPECT_EQ(apply_overrides(megatron, fp16, Naming::flags).layout.grad_dtype, GradDtype::fp32);
    // torchtitan reduces gradients in fp32; --grad-dtype beside the framework wins.
    Overrides t;
    t.framework = "torchtitan";
    EXPECT_EQ(resolved(t).grad_dtype, GradDtype::fp32);
    t.grad_dtype = "bf16";
    EXPECT_EQ(resolved(t).grad_dtype, GradDtype::bf16);
    // Megatron-Bridge's recipes overlap TP and EP traffic; a flag beside the framework wins, and one
    // that cannot run is refused with Megatron's reason.
    Overrides b;
    b.framework = "Megatron-Bridge";
    const Layout bridge = resolved(b);
    EXPECT_TRUE(bridge.tp_comm_overlap);
    EXPECT_TRUE(bridge.ep_comm_overlap);
    b.tp_comm_overlap = "false";
    EXPECT_FALSE(resolved(b).tp_comm_overlap);
    b.tp_comm_overlap = "true";
    b.sequence_parallel = "false";
    b.tp = 8;
    EXPECT_EQ(error_of([&] { resolved(b); }),
              "--tp-comm-overlap: expected only with sequence_parallel true (it overlaps SP's all-gathers and reduce-scatters)");
    // Without the flag, the recipes' overlap where it cannot run is off (NeMo's callback turns it off), and
    // so is their EP overlap at PP 4 without interleaving.
    b.tp_comm_overlap = "";
    b.ep = 2;
    EXPECT_FALSE(resolved(b).tp_comm_overlap);
    EXPECT_FALSE(resolved(b).ep_comm_overlap);
    Overrides e;
    e.ep = 2;
    e.pp = 2;
    e.ep_comm_overlap = "true";
    EXPECT_NE(error_of([&] { apply_overrides(llama70b_on(128), e, Naming::pins); }).find("pins.ep_comm_overlap: expected only with the interleaved schedule"),
              std::string::npos);
    Overrides r;
    r.recompute_layers = 4;
    EXPECT_EQ(error_of([&] { apply_overrides(llama70b_on(128), r, Naming::flags); }),
              "--recompute-layers: expected only with recompute full, got recompute none");
    r.recompute = "full";
    r.recompute_method = "block";
    const Layout block = apply_overrides(llama70b_on(128), r, Naming::flags).layout;
    EXPECT_EQ(block.recompute_method, RecomputeMethod::block);
    EXPECT_EQ(block.recompute_layers, 4);
    EXPECT_NE(error_of([&] { overrides_from_json(json{{"recompute_layers", 2}}, "pins"); }).find("pins.recompute_layers: expected a known"),
              std::string::npos);
}
