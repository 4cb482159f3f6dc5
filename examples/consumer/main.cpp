// A program built against an installed shardplan (tests/package_test.sh builds it both ways):
//   find_package(shardplan) + target_link_libraries(... shardplan::shardplan), or
//   g++ -std=c++20 main.cpp $(pkg-config --cflags --libs shardplan)
// It plans Llama 3 70B on 512 H100s and reads the same layout back from its JSON form.
#include <cstdio>

#include <shardplan/shardplan.h>

int main() {
    using namespace shardplan;
    const ModelSpec model = preset_model("llama3-70b");
    ClusterSpec cluster = preset_cluster("dgx-h100");
    cluster.gpus = 512;
    Layout layout;
    layout.tp = 8;
    layout.pp = 4;
    layout.dp = 16;
    layout.vpp = 5;
    layout.schedule = Schedule::interleaved;
    layout.global_batch = 512;
    layout.seq_len = 8192;
    layout.recompute = Recompute::selective;
    const Plan p = evaluate(model, cluster, layout);
    std::printf("%s: %s, %.0f tokens/s per GPU, %.1f GB per GPU\n", to_string(layout).c_str(),
                p.feasible() ? "fits" : "does not fit", p.throughput.tokens_per_s_per_gpu, p.memory.total_bytes() / 1e9);
    const Layout again = layout_from_json(to_json(layout));  // the JSON boundary round-trips
    return p.feasible() && to_string(again) == to_string(layout) ? 0 : 1;
}
