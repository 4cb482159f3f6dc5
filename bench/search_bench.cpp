// Speed of the planner: one layout, and whole search spaces (README "Speed"). Run: make bench
#include <benchmark/benchmark.h>

#include "shardplan/api.h"
#include "shardplan/presets.h"
#include "shardplan/search.h"
#include "shardplan/simulate.h"

using namespace shardplan;

namespace {

struct SearchCase {
    const char* model;
    const char* cluster;
    int64_t gpus, global_batch, seq_len;
    Precision precision;
};

const SearchCase kScenarios[] = {
    {"gpt3-175b", "dgx-a100", 4096, 2048, 2048, Precision::bf16},
    {"llama3-405b", "dgx-h100", 16384, 2048, 8192, Precision::bf16},
    {"deepseek-v3", "h800", 2048, 15360, 4096, Precision::fp8},
    {"llama3-405b", "nvl72", 16384, 2048, 8192, Precision::bf16},
};

// GPT-3 175B, TP8·PP16·DP32 on 4096 A100, 2048 × 2048 tokens: 64 micro-batches of 1F1B.
Layout gpt3_layout() {
    Layout l;
    l.tp = 8;
    l.pp = 16;
    l.dp = 32;
    l.global_batch = 2048;
    l.seq_len = 2048;
    return l;
}

// What the search does per layout: the closed forms.
void BM_EvaluateOneLayout(benchmark::State& state) {
    const ModelSpec m = preset_model("gpt3-175b");
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 4096;
    const Layout l = gpt3_layout();
    Plan p;
    for (auto _ : state) {
        evaluate_into(m, c, l, p, {.pipeline = PipelineMethod::closed_form});
        benchmark::DoNotOptimize(p.time.step_s);
    }
}
BENCHMARK(BM_EvaluateOneLayout);

// What `plan` does: the same, then the pipeline simulated (twice: with and without sends).
void BM_PlanWithSimulatedPipeline(benchmark::State& state) {
    const ModelSpec m = preset_model("gpt3-175b");
    ClusterSpec c = preset_cluster("dgx-a100");
    c.gpus = 4096;
    const Layout l = gpt3_layout();
    for (auto _ : state) benchmark::DoNotOptimize(evaluate(m, c, l));
}
BENCHMARK(BM_PlanWithSimulatedPipeline)->Unit(benchmark::kMicrosecond);

// The built-in default (Llama 3 405B on 16,384 NVL72 GPUs, TP8·PP16·VPP4·DP128) and a long interleaved
// step (PP16 · VPP8 · 384 micro-batches, 98,304 passes), simulated once without recording passes.
void BM_SimulatePipeline(benchmark::State& state) {
    PipelineSpec s;
    if (state.range(0) == 0) {
        const auto d = default_scenario();
        SimulatedStep step;
        evaluate_traced(d.model, d.cluster, d.layout, step);
        s = step.spec;
    } else {
        s.pp = 16;
        s.vpp = 8;
        s.micro_batches = 384;
        s.schedule = Schedule::interleaved;
        s.ranks.assign(16, StageTimes{.fwd_s = 8.0, .bwd_s = 16.0, .wgrad_s = 4.0});  // per chunk F 1, B 1.5, W 0.5
    }
    s.record_ops = false;
    for (auto _ : state) benchmark::DoNotOptimize(simulate_pipeline(s).makespan_s);
    state.counters["passes"] = static_cast<double>(s.micro_batches * s.pp * s.vpp);
}
BENCHMARK(BM_SimulatePipeline)->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

// The page's timeline request for DeepSeek-V3 on 1,024 H100 at PP4 · VPP12 (4,096 sequences: 16
// micro-batches, 1,536 chunk passes per rank direction): POST /api/trace answered whole, as the server sends
// it (uncompressed JSON; issue 17 measured 8.2 s for it under Brotli).
void BM_TraceRequest(benchmark::State& state) {
    const std::string body = R"({"model": "deepseek-v3", "cluster": {"preset": "dgx-h100", "gpus": 1024},
        "layout": {"tp": 1, "pp": 4, "vpp": 12, "ep": 64, "global_batch": 4096, "seq_len": 4096, "recompute": "full"}})";
    size_t bytes = 0;
    for (auto _ : state) {
        const ApiResponse r = handle_api("POST", "/api/trace", body);
        if (r.status != 200) state.SkipWithError(r.body.c_str());
        bytes = r.body.size();
        benchmark::DoNotOptimize(bytes);
    }
    state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_TraceRequest)->Unit(benchmark::kMillisecond);

void BM_SearchWholeSpace(benchmark::State& state) {
    const SearchCase& s = kScenarios[state.range(0)];
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
