// Numeric robustness: 10^6 GPUs, 10^13 parameters, 10^7-token sequences, 10^6 experts. Every number in
// every report must be finite, and nothing may overflow (the UBSan build checks the integer side).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/report.h"
#include "shardplan/table.h"

using namespace shardplan;

namespace {

void all_finite(const nlohmann::json& j, const std::string& path, int& numbers) {
    if (j.is_number()) {
        ++numbers;
        ASSERT_TRUE(std::isfinite(j.get<double>())) << path << " = " << j.dump();
        ASSERT_GE(j.get<double>(), -1e-9) << path;  // no quantity shardplan reports is negative
    } else if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it) all_finite(it.value(), path + "." + it.key(), numbers);
    } else if (j.is_array()) {
        for (size_t i = 0; i < j.size(); ++i) all_finite(j[i], path + "[" + std::to_string(i) + "]", numbers);
    }
}

void check(const ModelSpec& m, const ClusterSpec& c, const Layout& l) {
    const Plan p = evaluate(m, c, l);
    ASSERT_FALSE(p.rejection) << p.rejection->field << ": " << p.rejection->expected;
    int numbers = 0;
    all_finite(plan_to_json(p), "plan", numbers);
    EXPECT_GT(numbers, 50);
    EXPECT_GT(p.time.step_s, 0);
    EXPECT_FALSE(format_plan(p, false).empty());
    EXPECT_FALSE(to_csv(plan_table(p)).empty());
}

}  // namespace

TEST(Extremes, AMillionGpus) {
    ClusterSpec c = preset_cluster("nvl72");
    c.gpus = 1'048'576;
    Layout l;
    l.tp = 8;
    l.pp = 16;
    l.dp = 8192;
    l.global_batch = 131072;
    l.seq_len = 8192;
    check(preset_model("llama3-405b"), c, l);
}

TEST(Extremes, TenTrillionParameters) {
    ModelSpec m = preset_model("llama3-405b");
    m.layers = 640;
    m.hidden = 36864;
    m.heads = 288;
    m.ffn_hidden = 147456;
    ASSERT_GT(double(model_params_total(m)), 1e13);
    ClusterSpec c = preset_cluster("gb300-nvl72");
    c.gpus = 262144;
    Layout l;
    l.tp = 16;
    l.pp = 64;
    l.dp = 256;
    l.global_batch = 16384;
    l.seq_len = 8192;
    l.recompute = Recompute::full;
    check(m, c, l);
}

TEST(Extremes, TenMillionTokenSequences) {
    ClusterSpec c = preset_cluster("nvl72");
    c.gpus = 8192;
    Layout l;
    l.tp = 8;
    l.cp = 1024;
    l.dp = 1;
    l.global_batch = 1;
    l.seq_len = 10'485'760;
    l.recompute = Recompute::full;
    check(preset_model("llama3-8b"), c, l);
}

TEST(Extremes, AMillionExperts) {
    ModelSpec m = preset_model("qwen3-30b-a3b");
    m.layers = 4;
    m.moe->experts = 1'048'576;
    m.moe->expert_ffn_hidden = 64;
    ClusterSpec c = preset_cluster("gb200-nvl72");
    c.gpus = 4096;
    Layout l;
    l.dp = 4096;
    l.ep = 4096;
    l.global_batch = 4096;
    l.seq_len = 4096;
    check(m, c, l);
}

TEST(Extremes, AGlobalBatchNear2To63) {
    // Any integer below 2^63 is a global batch a request may give. Layer passes × micro-batches × calls
    // per pass then pass 2^63: the call counts are held at INT64_MAX instead of overflowing (fuzz_api
    // found 641,686,018,427,387,904 on an /api/search whose best layout had CP 2).
    const ModelSpec m = preset_model("mixtral-8x7b");
    ClusterSpec c = preset_cluster("dgx-h100");
    c.gpus = 64;
    Layout l;
    l.tp = l.cp = l.pp = 2;
    l.dp = 8;
    l.ep = 4;
    l.seq_len = 8192;
    for (const int64_t gb : {int64_t{641'686'018'427'387'904}, std::numeric_limits<int64_t>::max() - 7}) {
        l.global_batch = gb;  // both divisible by dp · micro-batch = 8
        check(m, c, l);
        const Plan p = evaluate(m, c, l);
        for (const CommTerm& t : p.comm) {
            EXPECT_GT(t.calls_per_step, 0) << enum_name(t.axis);
            EXPECT_TRUE(std::isfinite(t.time_s)) << enum_name(t.axis);
        }
        if (gb > (int64_t{1} << 62))  // 16 layers × 2^60 micro-batches per stage × 4 TP calls: saturated
            for (const CommTerm& t : p.comm)
                if (t.axis == Axis::tp) EXPECT_EQ(t.calls_per_step, std::numeric_limits<int64_t>::max());
    }
}

TEST(Extremes, DegreesThatWouldOverflowAreRejectedNotWrapped) {
    Layout l;
    l.tp = l.cp = l.pp = l.dp = 100'000'000;  // the product is 10^32
    ClusterSpec c = preset_cluster("dgx-h100");
    const Plan p = evaluate(preset_model("llama3-8b"), c, l);
    ASSERT_TRUE(p.rejection);
    EXPECT_EQ(p.rejection->code, "degrees_product");
}
