// The breaks an outside review found (issue 19), each kept fixed: in-process through handle_api()
// and the readers. The socket-level ones (Host/Origin, slow clients, pipelining, body limits) live in
// server_test.cpp; the CLI's special files in cli_test.sh.
#include <gtest/gtest.h>

#include <string>

#include "shardplan/api.h"
#include "shardplan/error.h"
#include "shardplan/io.h"
#include "shardplan/trace.h"

using namespace shardplan;

namespace {

std::string nested(int depth, const std::string& inner) {
    return std::string(static_cast<size_t>(depth), '[') + inner + std::string(static_cast<size_t>(depth), ']');
}

// Every refusal is one short line naming the field: no newline, no NUL, no flood.
void expect_short_error(const ApiResponse& r, int status, const std::string& fragment) {
    EXPECT_EQ(r.status, status) << r.body.substr(0, 300);
    EXPECT_LT(r.body.size(), 600u) << r.body.substr(0, 300);
    const json j = json::parse(r.body);
    const std::string e = j.at("error").get<std::string>();
    EXPECT_NE(e.find(fragment), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_EQ(e.find('\0'), std::string::npos) << e;
}

}  // namespace

// Break 1: etp·ep wrapped to 0 and a modulo by zero killed the server (SIGFPE).
TEST(Hardening, HugeEtpIsRefusedNotDividedBy) {
    expect_short_error(handle_api("POST", "/api/plan",
                                  R"({"model":"mixtral-8x7b","cluster":{"preset":"dgx-h100","gpus":64},)"
                                  R"("layout":{"tp":8,"ep":4,"etp":4611686018427387904,"global_batch":64}})"),
                       400, "layout.etp: expected at most 10^8");
    // Pinned in a search, it finds nothing to evaluate rather than dividing by a wrapped product.
    const ApiResponse s = handle_api("POST", "/api/search",
                                     R"({"model":"mixtral-8x7b","cluster":{"preset":"dgx-h100","gpus":64},)"
                                     R"("layout":{"global_batch":64},"pins":{"etp":4611686018427387904,"ep":4}})");
    EXPECT_TRUE(s.status == 200 || s.status == 400) << s.body;
    if (s.status == 200) EXPECT_EQ(json::parse(s.body)["evaluated"], 0);
}

// Break 2: nesting. Any body is refused past kMaxJsonDepth before anything recurses over it.
TEST(Hardening, DeepNestingIsRefusedBeforeItRecurses) {
    // An ignored key nested 250k deep (500 KB, under the body limit) killed the server.
    const std::string body = R"({"model":"llama3-8b","cluster":"dgx-h100","layout":{},"x":)" + nested(250'000, "1") + "}";
    ApiLimits big;
    big.max_body_bytes = 1 << 20;
    expect_short_error(handle_api("POST", "/api/plan", body, big), 400, "nested at most 64 deep");
    // An HF config inline whose integer field is a deep array: the message printed its dump (40 KB at 50k).
    const std::string hf = R"({"model":{"architectures":["LlamaForCausalLM"],"hidden_size":)" + nested(60'000, "1") +
                           R"(},"cluster":"dgx-h100","layout":{}})";
    expect_short_error(handle_api("POST", "/api/plan", hf, big), 400, "nested at most 64 deep");
    // At a depth the parser accepts, the message names the value by kind, not by its whole text.
    const std::string shallow = R"({"model":{"architectures":["LlamaForCausalLM"],"hidden_size":)" + nested(40, "1") +
                                R"(,"num_hidden_layers":2,"num_attention_heads":2,"vocab_size":10,"intermediate_size":8},)"
                                R"("cluster":"dgx-h100","layout":{}})";
    expect_short_error(handle_api("POST", "/api/plan", shallow, big), 400, "model.hidden_size: expected an integer, got an array");
    // The depth limit itself: 63 levels inside the body parse, 64 do not.
    EXPECT_NO_THROW(parse_json_text(nested(kMaxJsonDepth, "0"), "body"));
    EXPECT_THROW(parse_json_text(nested(kMaxJsonDepth + 1, "0"), "body"), ConfigError);
}

// Break 3: the API opened files a request named (traversal, NUL past the ".json" check, /dev/zero).
TEST(Hardening, TheApiReadsNoFiles) {
    for (const char* model : {R"("/etc/passwd\u0000.json")", R"("../../../../etc/hosts.json")", R"("/dev/zero.json")",
                              R"("/proc/self/fd/0.json")", R"("/work/model.json")"}) {
        const std::string body = std::string(R"({"model":)") + model + R"(,"cluster":"dgx-h100","layout":{}})";
        SCOPED_TRACE(body);
        expect_short_error(handle_api("POST", "/api/plan", body), 400, "model: expected a preset name or an inline model object");
        expect_short_error(handle_api("POST", "/api/search", body), 400, "the server reads no files");
        expect_short_error(handle_api("POST", "/api/trace", body), 400, "the server reads no files");
    }
    // The message is the same whether or not the file exists: nothing about the disk leaks.
    const auto a = handle_api("POST", "/api/plan", R"({"model":"/etc/hostname.json","cluster":"dgx-h100","layout":{}})");
    const auto b = handle_api("POST", "/api/plan", R"({"model":"/nonexistent/x.json","cluster":"dgx-h100","layout":{}})");
    EXPECT_EQ(json::parse(a.body)["error"].get<std::string>().substr(0, 60),
              json::parse(b.body)["error"].get<std::string>().substr(0, 60));
}

// Break 10: messages stay one short printable line whatever the input held.
TEST(Hardening, MessagesArePrintableAndShort) {
    const std::string key(10'000'000, 'k');
    const ApiResponse r = handle_api("POST", "/api/plan",
                                     R"({"model":"llama3-8b","cluster":"dgx-h100","layout":{")" + key + R"(":1}})",
                                     ApiLimits{.max_body_bytes = 16 << 20});
    expect_short_error(r, 400, "layout.kkkk");
    const ConfigError nul("model", std::string("a preset, got \"x\0y\"", 19));
    EXPECT_EQ(std::string(nul.what()), "model: expected a preset, got \"x\\x00y\"");
    EXPECT_EQ(printable("line\nbreak", 100), "line\\x0Abreak");
    // A cut never splits a UTF-8 sequence: "é" is two bytes.
    EXPECT_EQ(printable("aé", 2), "a...");
    EXPECT_EQ(printable("aéb", 3), "aé...");
    // A table pads a name by the columns it takes, one per code point: "TP1·CP2" is 8 bytes and 7 columns,
    // "all-gather ×2" 14 bytes and 13 columns.
    EXPECT_EQ(text_width("TP1·CP2"), 7u);
    EXPECT_EQ(text_width("all-gather ×2"), 13u);
    EXPECT_EQ(text_width(""), 0u);
}

// Break 11: a key given twice is refused instead of silently keeping the last.
TEST(Hardening, DuplicateKeysAreRefused) {
    expect_short_error(handle_api("POST", "/api/plan",
                                  R"({"model":"llama3-8b","cluster":"dgx-h100","layout":{"tp":8,"tp":2}})"),
                       400, "\"tp\" is repeated");
    // The same key in two different objects is fine.
    const ApiResponse ok = handle_api("POST", "/api/plan",
                                      R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},)"
                                      R"("layout":{"tp":8,"global_batch":8}})");
    EXPECT_EQ(ok.status, 200) << ok.body;
}

// Break 5: the largest timeline the API allows is written as text, within its size bound.
TEST(Hardening, TheLargestTraceStaysWithinItsBound) {
    // 40,000 passes: Llama 3 70B, PP4 · VPP5, 2,000 micro-batches of one sequence.
    const std::string body = R"({"model":"llama3-70b","cluster":{"preset":"dgx-h100","gpus":512},)"
                             R"("layout":{"tp":8,"pp":4,"vpp":5,"global_batch":32000,"seq_len":4096,"recompute":"full"}})";
    const ApiResponse r = handle_api("POST", "/api/trace", body);
    ASSERT_EQ(r.status, 200) << r.body.substr(0, 300);
    EXPECT_LE(static_cast<int64_t>(r.body.size()), ApiLimits{}.max_trace_passes * kTraceBytesPerPass);
    EXPECT_GT(r.body.size(), 10'000'000u);  // it is the large one
    // One more micro-batch is refused before anything is simulated.
    std::string over = body;
    over.replace(over.find("32000"), 5, "32064");  // 2,004 micro-batches: interleaving needs groups of pp = 4
    const ApiResponse no = handle_api("POST", "/api/trace", over);
    EXPECT_EQ(no.status, 400);
    EXPECT_NE(no.body.find("a timeline of at most 40000 passes"), std::string::npos) << no.body;
}
