// Speed of the planner: one layout, and whole search spaces (README "Speed"). Run: make bench
#include <benchmark/benchmark.h>

#include "shardplan/presets.h"
#include "shardplan/search.h"

using namespace shardplan;

namespace {

struct Scenario {
    const char* model;
    const char* cluster;
    int64_t gpus, global_batch, seq_len;
    Precision precision;
};

const Scenario kScenarios[] = {
    {"gpt3-175b", "dgx-a100", 4096, 2048, 2048, Precision::bf16},
    {"llama3-405b", "dgx-h100", 16384, 2048, 8192, Precision::bf16},
    {"deepseek-v3", "h800", 2048, 15360, 4096, Precision::fp8},
    {"llama3-405b", "nvl72", 16384, 2048, 8192, Precision::bf16},
};

void BM_EvaluateOneLayout(benchmark::State& state) {
    const ModelSpec m = preset_model("gpt3-175b");
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 4096;
    Layout l;
    l.tp = 8;
    l.pp = 16;
    l.dp = 32;
    l.global_batch = 2048;
    l.seq_len = 2048;
    for (auto _ : state) benchmark::DoNotOptimize(evaluate(m, c, l));
}
BENCHMARK(BM_EvaluateOneLayout);

void BM_SearchWholeSpace(benchmark::State& state) {
    const Scenario& s = kScenarios[state.range(0)];
    const ModelSpec m = preset_model(s.model);
    ClusterSpec c = preset_cluster(s.cluster);
    c.gpus = s.gpus;
    Layout base;
    base.global_batch = s.global_batch;
    base.seq_len = s.seq_len;
    base.precision = s.precision;
    int64_t layouts = 0;
    for (auto _ : state) {
        const SearchResult r = search(m, c, base, SearchSpace{}, {.top = 5});
        layouts += r.evaluated;
        benchmark::DoNotOptimize(r.best);
    }
    state.SetLabel(std::string(s.model) + " on " + std::to_string(s.gpus) + " " + s.cluster);
    state.counters["layouts"] = benchmark::Counter(static_cast<double>(layouts) / static_cast<double>(state.iterations()));
    state.counters["layouts_per_s"] = benchmark::Counter(static_cast<double>(layouts), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SearchWholeSpace)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
