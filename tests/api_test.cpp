// The HTTP API: in-process through handle_api(), and over a real socket through the server adapter.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include <httplib.h>

#include <atomic>
#include <thread>

#include "server.h"
#include "shardplan/api.h"
#include "shardplan/io.h"

using namespace shardplan;

namespace {
const std::string kCase = R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8},
                             "layout": {"tp": 8, "global_batch": 64, "seq_len": 4096}})";

class LiveServer : public ::testing::Test {
protected:
    void SetUp() override {
        app::ServerOptions o;
        o.port = 0;
        o.threads = 4;
        o.limits.max_body_bytes = 64 * 1024;
        server_ = std::make_unique<app::Server>(o);
        port_ = server_->bind();
        ASSERT_GT(port_, 0);
        thread_ = std::thread([this] { server_->run(); });
    }
    void TearDown() override {
        server_->stop();
        thread_.join();
    }
    httplib::Client client() { return httplib::Client("127.0.0.1", port_); }
    std::unique_ptr<app::Server> server_;
    std::thread thread_;
    int port_ = 0;
};
}  // namespace

TEST(Api, PlanSearchPresetsInProcess) {
    const ApiResponse presets = handle_api("GET", "/api/presets", "");
    ASSERT_EQ(presets.status, 200);
    EXPECT_GE(json::parse(presets.body)["models"].size(), 11u);

    const ApiResponse plan = handle_api("POST", "/api/plan", kCase);
    ASSERT_EQ(plan.status, 200) << plan.body;
    const json p = json::parse(plan.body);
    EXPECT_EQ(p["layout_string"], "TP8·CP1·PP1·DP1·EP1");
    EXPECT_TRUE(p["memory"]["fits"].get<bool>());

    // dp left out is derived from the GPUs the other degrees leave.
    const ApiResponse derived = handle_api("POST", "/api/plan",
        R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 16}, "layout": {"tp": 2, "global_batch": 64}})");
    ASSERT_EQ(derived.status, 200) << derived.body;
    EXPECT_EQ(json::parse(derived.body)["inputs"]["layout"]["dp"], 8);

    const ApiResponse search = handle_api("POST", "/api/search",
        R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"global_batch": 64},
            "top": 3, "pins": {"tp": 2}})");
    ASSERT_EQ(search.status, 200) << search.body;
    const json s = json::parse(search.body);
    ASSERT_EQ(s["best"].size(), 3u);
    for (const auto& b : s["best"]) EXPECT_EQ(b["inputs"]["layout"]["tp"], 2);
}

TEST(Api, BadInputIs400NamingTheField) {
    struct Bad { const char* body; const char* field; };
    for (Bad b : {Bad{"{not json", "body: expected valid JSON"}, {"", "body: expected a JSON object"},
                  {"9999999e999", "body: expected valid JSON with finite numbers"},  // found by fuzz_api
                  {R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 1e999}, "layout": {}})",
                   "body: expected valid JSON with finite numbers"},
                  {"[1,2]", "body: expected a JSON object"},
                  {R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"tp": 3, "dp": 1}})",
                   "layout.dp: expected tp·cp·pp·dp = gpus"},
                  {R"({"model": "nope", "cluster": "dgx-h100", "layout": {}})", "model: expected a model preset"},
                  {R"({"model": "llama3-8b", "cluster": "dgx-h100", "layout": {"global_batch": 0}})",
                   "layout.global_batch: expected a positive integer, got 0"},
                  {R"({"model": "mixtral-8x7b", "cluster": "dgx-h100", "layout": {"etp": 0}})",
                   "layout.etp: expected a positive integer or null, got 0"},
                  {R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": "8"}, "layout": {}})",
                   "cluster.gpus: expected an integer"},
                  // A field beside the case, not in it: the plan had been made on the preset's 1,024 GPUs.
                  {R"({"model": "llama3-8b", "cluster": "dgx-h100", "gpus": 8, "layout": {}})",
                   "gpus: expected a known field of the request (model, cluster, layout)"},
                  // A search's options are not a plan's.
                  {R"({"model": "llama3-8b", "cluster": "dgx-h100", "top": 3})",
                   "top: expected a known field of the request (model, cluster, layout)"}}) {
        const ApiResponse r = handle_api("POST", "/api/plan", b.body);
        EXPECT_EQ(r.status, 400) << b.body;
        EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find(b.field), std::string::npos) << r.body;
    }
    EXPECT_EQ(handle_api("POST", "/api/search", R"({"model": "llama3-8b", "cluster": "dgx-h100", "top": 0})").status, 400);
    EXPECT_EQ(handle_api("POST", "/api/search", R"({"model": "llama3-8b", "cluster": "dgx-h100", "pins": {"tq": 1}})").status, 400);
    const ApiResponse unpinnable = handle_api("POST", "/api/search",
        R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "pins": {"dp": 3}})");
    EXPECT_EQ(unpinnable.status, 400);
    EXPECT_NE(unpinnable.body.find("pins.dp: expected a divisor of the GPU count (8), got 3"), std::string::npos)
        << unpinnable.body;
    const ApiResponse stray = handle_api("POST", "/api/export", R"({"model": "llama3-8b", "cluster": "dgx-h100", "format": "megatron", "top": 1})");
    EXPECT_EQ(stray.status, 400);
    EXPECT_NE(stray.body.find("top: expected a known field of the request (model, cluster, layout, format)"), std::string::npos)
        << stray.body;
    ApiLimits small;
    small.max_search_layouts = 1'000'000;
    const ApiResponse huge = handle_api("POST", "/api/search",
        R"({"model": "llama3-405b", "cluster": {"gpu": "h100-sxm", "gpus": 100000000}, "layout": {"global_batch": 100000000}})",
        small);
    EXPECT_EQ(huge.status, 400);  // refused before it ties up a worker
    EXPECT_NE(huge.body.find("pins: expected a search of at most"), std::string::npos) << huge.body;
    EXPECT_EQ(handle_api("GET", "/api/plan", "").status, 405);
    EXPECT_EQ(handle_api("GET", "/../../etc/passwd", "").status, 404);
    EXPECT_EQ(handle_api("GET", "/web/index.html", "").status, 404);
    EXPECT_EQ(handle_api("POST", "/api/plan", std::string(2 << 20, ' ')).status, 413);
}

TEST(Api, TraceIsTheSimulatedStepOrAReason) {
    // 64 H100, TP8 · PP4 · DP2, 16 sequences: 8 micro-batches of 1F1B, 2 · 8 passes on each of 4 ranks.
    const std::string piped = R"({"model": "llama3-70b", "cluster": {"gpu": "h100-sxm", "gpus": 64},
                                  "layout": {"tp": 8, "pp": 4, "global_batch": 16, "seq_len": 4096, "schedule": "SCHED"}})";
    auto with = [&](const std::string& sched) {
        std::string b = piped;
        return b.replace(b.find("SCHED"), 5, sched);
    };
    const ApiResponse t = handle_api("POST", "/api/trace", with("1f1b"));
    ASSERT_EQ(t.status, 200) << t.body;
    const json j = json::parse(t.body);
    int passes = 0;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == 0 && e["name"] != "optimizer") ++passes;
    EXPECT_EQ(passes, 2 * 8 * 4);
    EXPECT_EQ(j["otherData"]["micro_batches"], 8);

    // DualPipe: the same 8 micro-batches, 4 from each end; every rank runs 8 forwards and 8 backwards.
    const ApiResponse dual = handle_api("POST", "/api/trace", with("dualpipe"));
    ASSERT_EQ(dual.status, 200) << dual.body;
    std::map<char, int> kinds;
    const json dj = json::parse(dual.body);
    for (const auto& e : dj["traceEvents"])
        if (e["ph"] == "X" && e["tid"] == 0 && e["name"] != "optimizer") ++kinds[e["name"].get<std::string>()[0]];
    EXPECT_EQ(kinds['F'], 8 * 4);
    EXPECT_EQ(kinds['B'], 8 * 4);
    ApiLimits small;
    small.max_trace_passes = 16;
    const ApiResponse big = handle_api("POST", "/api/trace", with("1f1b"), small);
    EXPECT_EQ(big.status, 400);
    EXPECT_NE(big.body.find("layout.global_batch: expected a timeline of at most 16 passes"), std::string::npos) << big.body;
    EXPECT_EQ(handle_api("GET", "/api/trace", "").status, 405);
}

TEST(Api, PageAssetsAreEmbedded) {
    const ApiResponse index = handle_api("GET", "/", "");
    ASSERT_EQ(index.status, 200);
    EXPECT_NE(index.content_type.find("text/html"), std::string::npos);
    EXPECT_NE(index.body.find("<script src=\"/app.js\">"), std::string::npos);
    EXPECT_NE(index.body.find("<script src=\"/panels.js\">"), std::string::npos);
    EXPECT_EQ(handle_api("GET", "/app.js", "").status, 200);
    const ApiResponse panels = handle_api("GET", "/panels.js", "");
    EXPECT_EQ(panels.status, 200);
    EXPECT_NE(panels.content_type.find("javascript"), std::string::npos);
    EXPECT_EQ(handle_api("GET", "/style.css", "").status, 200);
    EXPECT_EQ(index.body.find("http://"), std::string::npos);  // no CDN or other outside links
    EXPECT_EQ(index.body.find("https://"), std::string::npos);
}

TEST_F(LiveServer, ServesOverHttp) {
    auto c = client();
    auto presets = c.Get("/api/presets");
    ASSERT_TRUE(presets);
    EXPECT_EQ(presets->status, 200);
    auto plan = c.Post("/api/plan", kCase, "application/json");
    ASSERT_TRUE(plan);
    EXPECT_EQ(plan->status, 200);
    auto bad = c.Post("/api/plan", "{", "application/json");
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400);
    auto big = c.Post("/api/plan", std::string(128 * 1024, 'x'), "application/json");
    ASSERT_TRUE(big);
    EXPECT_EQ(big->status, 413);
    auto page = c.Get("/");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
}

TEST_F(LiveServer, ConcurrentClients) {
    std::atomic<int> ok{0}, bad{0};
    const std::string want = handle_api("POST", "/api/plan", kCase).body;
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            auto c = client();
            for (int i = 0; i < 10; ++i) {
                auto r = c.Post("/api/plan", kCase, "application/json");
                (r && r->status == 200 && r->body == want ? ok : bad)++;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), 80);
    EXPECT_EQ(bad.load(), 0);
}

// One resolver: a case file given to `plan --case X --json` and the same JSON posted to /api/plan give
// the same plan, for every golden case, also with dp left out (derived by the same rule on both sides).
TEST(Api, TheCliAndTheApiResolveACaseTheSameWay) {
    const json cases = read_json_file(std::string(SHARDPLAN_GOLDEN_DIR) + "/cases.json", "golden cases");
    const std::string file = ::testing::TempDir() + "/resolver_case.json";
    auto cli = [&](const json& c) {
        std::ofstream(file) << c.dump();
        const std::string cmd = std::string(SHARDPLAN_BIN) + " plan --json --case " + file + " 2>&1";
        std::string out;
        FILE* p = popen(cmd.c_str(), "r");
        char buf[65536];
        for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        pclose(p);
        return out;
    };
    int compared = 0;
    for (json c : cases) {
        c.erase("id");
        for (const bool drop_dp : {false, true}) {
            if (drop_dp) c["layout"].erase("dp");
            SCOPED_TRACE(c.dump());
            const ApiResponse api = handle_api("POST", "/api/plan", c.dump());
            ASSERT_EQ(api.status, 200) << api.body;
            EXPECT_EQ(json::parse(cli(c)), json::parse(api.body));
            ++compared;
        }
    }
    EXPECT_GE(compared, 20);
}

// The search chooses the degrees: a body whose current degrees do not divide the GPUs still searches.
TEST(Api, SearchIgnoresTheCasesOwnDegrees) {
    const ApiResponse r = handle_api("POST", "/api/search",
        R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm", "gpus": 8}, "layout": {"tp": 3, "pp": 5, "global_batch": 64},
            "top": 1})");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["best"].size(), 1u);
}

TEST(Api, FitListsTheSingleChangesThatMakeALayoutFit) {
    // Llama 3 70B on 64 H100, TP8, ZeRO 0, micro-batch 2 at 8k tokens: 191 GB per GPU against 85.5. Sharding
    // gradients and optimizer state over DP 8 (ZeRO 2) fits and is the fastest fix; so does ZeRO 3.
    const ApiResponse r = handle_api("POST", "/api/fit",
        R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 64},
            "layout": {"tp": 8, "global_batch": 64, "seq_len": 8192, "zero": 0, "micro_batch": 2}})");
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    EXPECT_FALSE(j["fits"].get<bool>());
    ASSERT_FALSE(j["changes"].empty());
    EXPECT_EQ(j["changes"][0]["change"], "ZeRO 0 → 2");
    EXPECT_TRUE(j["changes"][0]["fits"].get<bool>());
    EXPECT_EQ(j["changes"][0]["layout"]["zero"], 2);
    // A fitting change says what it leaves to spare; one that does not, nothing.
    for (const json& c : j["changes"])
        EXPECT_EQ(c["margin_bytes"].get<double>() > 0, c["fits"].get<bool>()) << c["change"];
    // Fitting changes first, fastest first; the rest by memory.
    bool seen_unfit = false;
    double last = 1e300;
    for (const json& c : j["changes"]) {
        if (!c["fits"].get<bool>()) { seen_unfit = true; continue; }
        EXPECT_FALSE(seen_unfit) << c["change"];
        EXPECT_LE(c["tokens_per_s_per_gpu"].get<double>(), last);
        last = c["tokens_per_s_per_gpu"].get<double>();
    }
    // Every change is a single one: a TP change re-derives DP and keeps the GPUs.
    for (const json& c : j["changes"])
        EXPECT_EQ(c["layout"]["tp"].get<int64_t>() * c["layout"]["cp"].get<int64_t>() * c["layout"]["pp"].get<int64_t>() *
                      c["layout"]["dp"].get<int64_t>(), 64) << c["change"];
    EXPECT_EQ(handle_api("GET", "/api/fit", "").status, 405);
    EXPECT_EQ(handle_api("POST", "/api/fit", R"({"model": "llama3-70b", "cluster": "dgx-h100", "layout": {"tp": 3}})").status, 400);
}

TEST(Api, FitOffersFullRecomputationOfOnlyAsManyLayersAsItTakes) {
    // Llama 3 70B, TP8 · PP4 on 64 H100 at 32k tokens: stage 0 (20 layers, 4 micro-batches in flight) needs
    // 119.6 GB. Recomputing its first N layers fits from some N below 20; N − 1 does not, and the change is
    // faster than recomputing all 20.
    const ApiResponse r = handle_api("POST", "/api/fit",
        R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 64},
            "layout": {"tp": 8, "pp": 4, "global_batch": 64, "seq_len": 32768, "zero": 1}})");
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    const json* block = nullptr;
    const json* full = nullptr;
    for (const json& c : j["changes"]) {
        if (c["change"].get<std::string>().ends_with("(block)")) block = &c;
        if (c["change"] == "recompute full") full = &c;
    }
    ASSERT_TRUE(block && full) << r.body;
    EXPECT_TRUE((*block)["fits"].get<bool>());
    const json& l = (*block)["layout"];
    EXPECT_EQ(l["recompute"], "full");
    EXPECT_EQ(l["recompute_method"], "block");
    const int64_t n = l["recompute_layers"].get<int64_t>();
    EXPECT_LT(n, 20);
    EXPECT_GT((*block)["tokens_per_s_per_gpu"].get<double>(), (*full)["tokens_per_s_per_gpu"].get<double>());
    json fewer = l;
    fewer["recompute_layers"] = n - 1;
    const json plan = json::parse(handle_api("POST", "/api/plan",
        json{{"model", "llama3-70b"}, {"cluster", {{"preset", "dgx-h100"}, {"gpus", 64}}}, {"layout", fewer}}.dump()).body);
    if (n > 1) EXPECT_FALSE(plan["memory"]["fits"].get<bool>()) << n - 1 << " layers";
}

TEST(Api, ExportIsTheLaunchConfigurationOrTheReason) {
    const std::string body = R"({"model": "llama3-70b", "cluster": {"preset": "dgx-h100", "gpus": 64},
        "layout": {"tp": 8, "pp": 2, "global_batch": 64, "seq_len": 4096, "zero": 1}, "format": "megatron"})";
    const ApiResponse r = handle_api("POST", "/api/export", body);
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    EXPECT_EQ(j["format"], "megatron");
    EXPECT_NE(j["text"].get<std::string>().find("--tensor-model-parallel-size 8"), std::string::npos);
    // The layout names no framework: planned as Megatron-LM runs it (fp32 gradient reduction, so no
    // --grad-reduce-in-bf16), and the answer says so with that plan's throughput, the CLI's figure.
    EXPECT_EQ(j["planned"]["framework"], "Megatron-LM");
    EXPECT_EQ(j["planned"]["layout_string"], "TP8·CP1·PP2·DP4·EP1");
    EXPECT_EQ(j["text"].get<std::string>().find("--grad-reduce-in-bf16"), std::string::npos);
    json as_run = json::parse(body);
    as_run["layout"]["framework"] = "Megatron-LM";
    as_run.erase("format");
    const json plan = json::parse(handle_api("POST", "/api/plan", as_run.dump()).body);
    EXPECT_DOUBLE_EQ(j["planned"]["tokens_per_s_per_gpu"].get<double>(), plan["throughput"]["tokens_per_s_per_gpu"].get<double>());
    // A setting stated against the framework's way is refused by name, not written and dropped.
    json bf16 = json::parse(body);
    bf16["layout"]["grad_dtype"] = "bf16";
    bf16["layout"]["zero"] = 3;
    bf16["format"] = "torchtitan";
    const ApiResponse stated = handle_api("POST", "/api/export", bf16.dump());
    EXPECT_EQ(stated.status, 400);
    EXPECT_NE(json::parse(stated.body)["error"].get<std::string>().find("it would run grad_dtype \"fp32\" (not \"bf16\")"),
              std::string::npos) << stated.body;
    std::string titan = body;
    titan.replace(titan.find("megatron"), 8, "torchtitan");
    const ApiResponse refused = handle_api("POST", "/api/export", titan);
    EXPECT_EQ(refused.status, 400);
    EXPECT_NE(refused.body.find("ZeRO-1/2 have no equivalent"), std::string::npos) << refused.body;
    std::string unknown = body;
    unknown.replace(unknown.find("megatron"), 8, "nemo");
    EXPECT_EQ(json::parse(handle_api("POST", "/api/export", unknown).body)["error"],
              "format: expected one of megatron, torchtitan, deepspeed, got \"nemo\"");
}

// /api/model reads a model as `shardplan model --json` does: a preset, a model object or a Hugging Face
// config.json sent inline (how the page reads the file a visitor loads); never a file the body names.
TEST(Api, ModelReadsAnInlineHuggingFaceConfig) {
    const std::string gemma = R"({"model": {"architectures": ["Gemma3ForConditionalGeneration"],
      "text_config": {"head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "num_attention_heads": 32,
                      "num_hidden_layers": 62, "num_key_value_heads": 16, "sliding_window": 1024}}})";
    const ApiResponse r = handle_api("POST", "/api/model", gemma);
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    EXPECT_EQ(j["params_total"], 27'009'346'304);  // tests/hf_families_test.cpp
    EXPECT_EQ(j["model"]["sandwich_norms"], true);
    EXPECT_EQ(j["model"]["window_layers"], 52);
    // The model object it returns plans as sent back (what the page does with it).
    json back = j["model"];
    back.erase("params_total");
    back.erase("params_active");
    const json plan_body = {{"model", back}, {"cluster", {{"preset", "dgx-h100"}, {"gpus", 64}}},
                            {"layout", {{"tp", 8}, {"global_batch", 64}, {"seq_len", 8192}}}};
    const ApiResponse p = handle_api("POST", "/api/plan", plan_body.dump());
    ASSERT_EQ(p.status, 200) << p.body;
    EXPECT_EQ(json::parse(p.body)["inputs"]["model"]["params_total"], 27'009'346'304);
    EXPECT_EQ(json::parse(handle_api("POST", "/api/model", R"({"model": "gemma3-27b", "seq_len": 8192})").body)["seq_len"], 8192);
    for (const auto& [body, error] : std::vector<std::pair<std::string, std::string>>{
             {R"({"model": "/etc/passwd.json"})", "model: expected a preset name or an inline model object (the server reads no files)"},
             {R"({"model": "llama3-8b", "gpus": 8})", "gpus: expected a known field of the request: model, seq_len"},
             {R"({"seq_len": 8})", "body: expected a JSON object with model"},
             {R"({"model": "llama3-8b", "seq_len": "long"})", "seq_len: expected an integer"},
             {R"({"model": {"architectures": ["FalconForCausalLM"]}})", "model.architectures: expected a supported architecture"}}) {
        const ApiResponse bad = handle_api("POST", "/api/model", body);
        EXPECT_EQ(bad.status, 400) << body;
        EXPECT_EQ(json::parse(bad.body)["error"].get<std::string>().rfind(error, 0), 0u) << bad.body;
    }
    EXPECT_EQ(handle_api("GET", "/api/model", "").status, 405);
}
