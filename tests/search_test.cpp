// The layout search: optimal by the planner's own model, respectful of pins, honest in its counts.
#include <gtest/gtest.h>

#include <random>

#include "shardplan/presets.h"
#include "shardplan/ranges.h"
#include "shardplan/report.h"
#include "shardplan/search.h"

using namespace shardplan;

namespace {

struct Problem {
    ModelSpec model;
    ClusterSpec cluster;
    Layout base;
};

Problem llama70b_on_64() {
    Problem s{preset_model("llama3-70b"), preset_cluster("dgx-h100"), Layout{}};
    s.cluster.gpus = 64;
    s.base.global_batch = 128;
    s.base.seq_len = 4096;
    return s;
}

// The same at 8k tokens and 512 sequences a step, where the top answers are a percent apart.
Problem llama70b_on_64_at_8k() {
    Problem s = llama70b_on_64();
    s.base.global_batch = 512;
    s.base.seq_len = 8192;
    return s;
}

int64_t sum(const std::map<std::string, int64_t>& m) {
    int64_t n = 0;
    for (const auto& [k, v] : m) n += v;
    return n;
}

}  // namespace

TEST(Search, Divisors) {
    EXPECT_EQ(divisors(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
    EXPECT_EQ(divisors(1), (std::vector<int64_t>{1}));
    EXPECT_EQ(divisors(49), (std::vector<int64_t>{1, 7, 49}));
}

TEST(Search, BestBeatsEveryRandomValidLayout) {
    const Problem s = llama70b_on_64();
    const SearchResult r = search(s.model, s.cluster, s.base, SearchSpace{}, {.top = 3});
    ASSERT_FALSE(r.best.empty());
    const double best = r.best.front().throughput.tokens_per_s_per_gpu;
    for (size_t i = 1; i < r.best.size(); ++i)
        EXPECT_GE(r.best[i - 1].throughput.tokens_per_s_per_gpu, r.best[i].throughput.tokens_per_s_per_gpu);
    std::mt19937_64 rng(7);
    auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
    int feasible = 0;
    for (int i = 0; i < 3000; ++i) {
        Layout l = s.base;
        l.tp = pick({1, 2, 4, 8});
        l.pp = pick({1, 2, 4, 8});
        l.cp = pick({1, 2});
        l.dp = 64 / (l.tp * l.pp * l.cp);
        if (l.dp < 1) continue;
        l.micro_batch = pick({1, 2, 4});
        l.zero = static_cast<int>(pick({0, 1, 2, 3}));
        l.recompute = static_cast<Recompute>(pick({0, 1, 2}));
        l.sequence_parallel = l.tp > 1 && pick({0, 1});
        l.schedule = static_cast<Schedule>(pick({0, 1, 2, 3}));
        l.vpp = l.schedule == Schedule::interleaved ? pick({2, 4}) : 1;
        const Plan p = evaluate(s.model, s.cluster, l);
        if (!p.feasible()) continue;
        ++feasible;
        EXPECT_LE(p.throughput.tokens_per_s_per_gpu, best * (1 + 1e-12)) << to_string(l);
    }
    EXPECT_GT(feasible, 100);
}

TEST(Search, PinnedDimensionsAreRespected) {
    const Problem s = llama70b_on_64();
    SearchSpace sp;
    sp.tp = 4;
    sp.zero = 1;
    sp.recompute = Recompute::selective;
    sp.micro_batch = 1;
    const SearchResult r = search(s.model, s.cluster, s.base, sp, {.top = 10, .pareto = true});
    ASSERT_FALSE(r.best.empty());
    for (const std::vector<Plan>* v : {&r.best, &r.pareto})
        for (const Plan& p : *v) {
            EXPECT_EQ(p.layout.tp, 4);
            EXPECT_EQ(p.layout.zero, 1);
            EXPECT_EQ(p.layout.recompute, Recompute::selective);
            EXPECT_EQ(p.layout.micro_batch, 1);
        }
}

TEST(Search, SpaceSizeIsCountedWithoutEvaluating) {
    const Problem s = llama70b_on_64();
    const SearchResult r = search(s.model, s.cluster, s.base, SearchSpace{}, {});
    EXPECT_EQ(search_space_size(s.model, s.cluster, SearchSpace{}), r.evaluated);
    SearchSpace pinned;
    pinned.tp = 8;
    pinned.zero = 1;
    EXPECT_EQ(search_space_size(s.model, s.cluster, pinned), search(s.model, s.cluster, s.base, pinned, {}).evaluated);
}

TEST(Search, RejectionsAddUpToEvaluatedMinusFeasible) {
    const Problem s = llama70b_on_64();
    const SearchResult r = search(s.model, s.cluster, s.base, SearchSpace{}, {});
    EXPECT_GT(r.evaluated, 1000);
    EXPECT_GT(r.feasible, 0);
    EXPECT_EQ(sum(r.rejected), r.evaluated - r.feasible);
    EXPECT_GT(r.rejected.at("does_not_fit"), 0);
}

TEST(Search, SameResultOnOneThreadAndMany) {
    Problem s{preset_model("mixtral-8x7b"), preset_cluster("dgx-h100"), Layout{}};
    s.cluster.gpus = 32;
    s.base.global_batch = 64;
    s.base.seq_len = 4096;
    const SearchResult one = search(s.model, s.cluster, s.base, SearchSpace{}, {.top = 8, .pareto = true, .threads = 1});
    const SearchResult many = search(s.model, s.cluster, s.base, SearchSpace{}, {.top = 8, .pareto = true, .threads = 4});
    EXPECT_EQ(one.evaluated, many.evaluated);
    EXPECT_EQ(one.feasible, many.feasible);
    EXPECT_EQ(one.rejected, many.rejected);
    EXPECT_EQ(one.shortest_miss_bytes, many.shortest_miss_bytes);
    // Whole results, not counts: every reported plan byte for byte as JSON (layout, memory, traffic,
    // times), in the same order, for the best list and the Pareto front alike.
    auto same = [](const std::vector<Plan>& a, const std::vector<Plan>& b, const char* what) {
        ASSERT_EQ(a.size(), b.size()) << what;
        for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(plan_to_json(a[i]).dump(), plan_to_json(b[i]).dump()) << what << " " << i;
    };
    same(one.best, many.best, "best");
    same(one.pareto, many.pareto, "pareto");
    EXPECT_FALSE(one.pareto.empty());
}

TEST(Search, NoCrossingRejectsGroupsThatLeaveTheDomain) {
    const Problem s = llama70b_on_64();
    SearchSpace sp;
    sp.no_crossing = true;
    sp.tp = 16;  // TP16 on 8-GPU servers always crosses
    const SearchResult r = search(s.model, s.cluster, s.base, sp, {});
    EXPECT_EQ(r.feasible, 0);
    EXPECT_GT(r.rejected.at("crosses_domain"), 0);
    EXPECT_EQ(sum(r.rejected), r.evaluated);
}

// A headroom keeps to layouts that leave that share of what they need free, the memory prediction's own
// error (measured memory ran more than 10 % above it on published runs): Llama 3 70B on 64 H100s at 8k
// tokens, whose fastest layout fits with 0.4 GB to spare, gives a slower first answer with 16 GB, every
// answer leaving a tenth, the rest counted as too_little_headroom.
TEST(Search, HeadroomKeepsAShareOfTheMemoryFree) {
    const Problem s = llama70b_on_64();
    Layout base = s.base;
    base.global_batch = 64;
    base.seq_len = 8192;
    const SearchResult tight = search(s.model, s.cluster, base, {}, {.top = 5});
    ASSERT_FALSE(tight.best.empty());
    EXPECT_FALSE(tight.best.front().leaves_headroom(0.1));
    EXPECT_EQ(tight.rejected.count("too_little_headroom"), 0u);
    SearchSpace sp;
    sp.headroom = 0.1;
    const SearchResult roomy = search(s.model, s.cluster, base, sp, {.top = 5, .pareto = true});
    ASSERT_FALSE(roomy.best.empty());
    for (const Plan& p : roomy.best) EXPECT_TRUE(p.leaves_headroom(0.1)) << to_string(p.layout);
    for (const Plan& p : roomy.pareto) EXPECT_TRUE(p.leaves_headroom(0.1)) << to_string(p.layout);
    EXPECT_GT(roomy.rejected.at("too_little_headroom"), 0);
    EXPECT_EQ(roomy.feasible + sum(roomy.rejected), roomy.evaluated);
    EXPECT_EQ(roomy.feasible + roomy.rejected.at("too_little_headroom"), tight.feasible);
    EXPECT_LE(roomy.best.front().throughput.tokens_per_s_per_gpu, tight.best.front().throughput.tokens_per_s_per_gpu);
    // As much free as it needs: half the card or less (ZeRO-3 and full recomputation get there).
    sp.headroom = 1.0;
    const SearchResult half = search(s.model, s.cluster, base, sp, {});
    ASSERT_FALSE(half.best.empty());
    for (const Plan& p : half.best) EXPECT_LE(p.needed_bytes, 0.5 * p.capacity_bytes) << to_string(p.layout);
    EXPECT_GT(half.rejected.at("too_little_headroom"), roomy.rejected.at("too_little_headroom"));
}

// The memory needed (allocated + runtime: the allocator's cache fills what they leave) and throughput both
// rise along the front, no answer beats a point of it needing no more, and its last point is the first
// answer.
void expect_pareto_front(const SearchResult& r) {
    ASSERT_GE(r.pareto.size(), 2u);
    for (size_t i = 1; i < r.pareto.size(); ++i) {
        EXPECT_GT(r.pareto[i].needed_bytes, r.pareto[i - 1].needed_bytes);
        EXPECT_LT(r.pareto[i].margin_bytes(), r.pareto[i - 1].margin_bytes());
        EXPECT_GT(r.pareto[i].throughput.tokens_per_s_per_gpu, r.pareto[i - 1].throughput.tokens_per_s_per_gpu);
    }
    for (const Plan& a : r.best)
        for (const Plan& f : r.pareto)
            EXPECT_FALSE(a.needed_bytes <= f.needed_bytes &&
                         a.throughput.tokens_per_s_per_gpu > f.throughput.tokens_per_s_per_gpu)
                << to_string(a.layout) << " beats " << to_string(f.layout) << " on the front";
    EXPECT_DOUBLE_EQ(r.pareto.back().throughput.tokens_per_s_per_gpu, r.best.front().throughput.tokens_per_s_per_gpu);
}

TEST(Search, ParetoFrontIsNonDominated) {
    const Problem s = llama70b_on_64();
    expect_pareto_front(search(s.model, s.cluster, s.base, SearchSpace{}, {.pareto = true}));
}

TEST(Search, ParetoFrontHoldsTheAnswersTheSimulationPutsAhead) {
    // DeepSeek-V3 on 1,024 GB200 at TP 1, CP 1, ZeRO-1 without recomputation: by the closed forms an
    // interleaved PP 4 · VPP 12 layout led its memory; simulated, DualPipe at PP 8 · EP 64 beats it, and
    // the front, chosen by the closed forms, had ended at 2,214 tokens/s/GPU behind the first answer's
    // 2,243.
    Problem s{preset_model("deepseek-v3"), preset_cluster("gb200-nvl72"), Layout{}};
    s.cluster.gpus = 1024;
    s.base.global_batch = 4096;
    s.base.seq_len = 4096;
    SearchSpace sp;
    sp.tp = 1;
    sp.cp = 1;
    sp.zero = 1;
    sp.recompute = Recompute::none;
    expect_pareto_front(search(s.model, s.cluster, s.base, sp, {.pareto = true}));
}

TEST(Search, NothingFitsIsAnAnswer) {
    Problem s{preset_model("llama3-405b"), preset_cluster("dgx-h100"), Layout{}};
    s.cluster.gpus = 8;
    s.base.global_batch = 8;
    const SearchResult r = search(s.model, s.cluster, s.base, SearchSpace{}, {});
    EXPECT_TRUE(r.best.empty());
    EXPECT_EQ(r.feasible, 0);
    EXPECT_GT(r.shortest_miss_bytes, 0);
}

// Two rank orders that put every group on the same tier plan exactly alike: one answer, the other order
// named with it, so the list holds distinct layouts. Llama 3 70B on 64 H100 at 8k: TP2·CP2 with CP inside
// TP or outside keeps both in the 8-GPU server.
TEST(Search, RankOrdersThatPlanAlikeAreOneAnswer) {
    const Problem s = llama70b_on_64_at_8k();
    const SearchResult r = search(s.model, s.cluster, s.base, SearchSpace{}, {.top = 5});
    ASSERT_EQ(r.best.size(), 5u);
    ASSERT_EQ(r.same_orders.size(), r.best.size());
    size_t folded = 0;
    for (size_t i = 0; i < r.best.size(); ++i) {
        for (size_t k = 0; k < i; ++k) {
            Layout a = r.best[i].layout;
            a.order = r.best[k].layout.order;
            const bool twins = to_string(a) == to_string(r.best[k].layout) && a.micro_batch == r.best[k].layout.micro_batch &&
                               a.zero == r.best[k].layout.zero && a.recompute == r.best[k].layout.recompute &&
                               a.sequence_parallel == r.best[k].layout.sequence_parallel &&
                               r.best[i].throughput.tokens_per_s_per_gpu == r.best[k].throughput.tokens_per_s_per_gpu;
            EXPECT_FALSE(twins) << i << " repeats " << k;
        }
        for (const std::string& o : r.same_orders[i]) {
            EXPECT_NE(o, order_string(r.best[i].layout));
            // Planned under that order, the answer's layout gives the same numbers.
            Layout twin = r.best[i].layout;
            twin.order = *parse_order(o);
            const Plan p = evaluate(s.model, s.cluster, twin);
            EXPECT_EQ(p.throughput.tokens_per_s_per_gpu, r.best[i].throughput.tokens_per_s_per_gpu) << o;
            EXPECT_EQ(p.memory.total_bytes(), r.best[i].memory.total_bytes()) << o;
            ++folded;
        }
    }
    EXPECT_GT(folded, 0u);
    EXPECT_EQ(r.same_orders[0], std::vector<std::string>{"cp-tp-ep-dp-pp"});
    EXPECT_EQ(search_to_json(r, false)["best"][0]["same_orders"], nlohmann::json::array({"cp-tp-ep-dp-pp"}));
}

// Each answer says how far behind the first it is predicted, (t₁ − tᵢ)/tᵢ as validate's ranking measures
// a pair's predicted gap, next to the gap under which two predictions are closer than the model can order
// (kRankingResolution, ranges.h; the search's text and the page say which answers are that close).
TEST(Search, EachAnswerSaysHowFarBehindTheFirstItIs) {
    const Problem s = llama70b_on_64_at_8k();
    const SearchResult r = search(s.model, s.cluster, s.base, SearchSpace{}, {.top = 5});
    ASSERT_EQ(r.best.size(), 5u);
    const nlohmann::json j = search_to_json(r, false);
    EXPECT_DOUBLE_EQ(j["ranking_resolution"].get<double>(), kRankingResolution);
    EXPECT_DOUBLE_EQ(j["best"][0]["gap_to_best"].get<double>(), 0.0);
    for (size_t i = 1; i < r.best.size(); ++i) {
        const double first = r.best[0].throughput.tokens_per_s_per_gpu, own = r.best[i].throughput.tokens_per_s_per_gpu;
        EXPECT_DOUBLE_EQ(j["best"][i]["gap_to_best"].get<double>(), (first - own) / own) << i;
        EXPECT_GE(j["best"][i]["gap_to_best"].get<double>(), j["best"][i - 1]["gap_to_best"].get<double>()) << i;
    }
}

// The first answer is the best: asking for one layout or for a thousand gives the same winner, because
// the loop only shortlists, by ceilings no simulation can beat (kRetimedPool, widened until nothing left
// out could enter), and the simulated pipeline picks.
// GPT-3 175B on 4096 A100 (issue 14): with a shortlist of `top`, the closed forms alone put
// TP8·CP2·PP2·VPP12 (3 micro-batches, an 18 % simulated bubble) first at 133.5 tokens/s/GPU, while
// `--top 50` found faster layouts. The jobs are the benchmark's (bench/search_bench.cpp) and that one,
// and GPT-OSS 120B on 64 B200: with the shortlist the closed forms' best 64, its default answer was
// TP1·PP2·DP32·EP8·VPP16 at 14,458 tokens/s/GPU and `--top 1000` found PP8·DP8·EP8 under DualPipe at
// 14,514, whose closed form (its bubble as the closed forms price it) had left it out of the 64; the
// shortlist is now the 512 highest ceilings, widened until nothing left out could enter.
TEST(Search, TheFirstAnswerIsTheBestOfTheSimulatedShortlist) {
    struct Job { const char* model; const char* cluster; int64_t gpus, gbs, seq; Precision precision; };
    for (const Job& j : {Job{"gpt3-175b", "dgx-a100", 4096, 1536, 2048, Precision::bf16},
                         Job{"gpt3-175b", "dgx-a100", 4096, 2048, 2048, Precision::bf16},
                         Job{"llama3-405b", "dgx-h100", 16384, 2048, 8192, Precision::bf16},
                         Job{"llama3-405b", "nvl72", 16384, 2048, 8192, Precision::bf16},
                         Job{"deepseek-v3", "h800", 2048, 15360, 4096, Precision::fp8},
                         Job{"gpt-oss-120b", "dgx-b200", 64, 1024, 4096, Precision::bf16}}) {
        const ModelSpec m = preset_model(j.model);
        ClusterSpec c = preset_cluster(j.cluster);
        c.gpus = j.gpus;
        Layout base;
        base.seq_len = j.seq;
        base.global_batch = j.gbs;
        base.precision = j.precision;
        const SearchResult one = search(m, c, base, {}, {.top = 1});
        const SearchResult many = search(m, c, base, {}, {.top = 1000});
        ASSERT_EQ(one.best.size(), 1u) << j.model;
        ASSERT_GT(many.best.size(), 100u) << j.model;
        EXPECT_EQ(to_string(one.best[0].layout), to_string(many.best[0].layout)) << j.model;
        for (const Plan& p : many.best)
            EXPECT_LE(p.throughput.tokens_per_s_per_gpu, one.best[0].throughput.tokens_per_s_per_gpu) << j.model;
        // The winner's bubble stays modest: GPT-3 at global batch 1536 is TP8·PP16·VPP6 at micro-batch 1
        // (48 micro-batches, a 4 % simulated bubble), its TP group inside the 8-GPU server.
        EXPECT_LE(one.best[0].time.bubble_s, 0.15 * one.best[0].time.step_s) << j.model;
        for (const GroupPlacement& g : one.best[0].groups)
            if (g.axis == Axis::tp) EXPECT_FALSE(g.crosses_domain()) << j.model;
    }
}
