/// The HTTP API as a pure function: (method, path, body) → (status, content type, body). The server
/// (`shardplan serve`, app/cmd_serve.cpp) only moves bytes between cpp-httplib and this function, so
/// tests and the fuzzer call it in-process, and the CLI and the page share one code path.
///
///   GET  /api/presets        models, GPUs and clusters (as `presets --json`)
///   POST /api/plan           a case (model, cluster, layout) → `plan --json`
///   POST /api/search         a case, plus {"top", "pareto", "pins": {...}} → `search --json`
///   POST /api/trace          a case → its simulated step as a Chrome trace (as `shardplan trace`)
///   GET  /, /app.js, /style.css   the page, embedded in the binary
/// Bad input is 400 with {"error": "field: expected ..."}; a body over the limit is 413; any other
/// path is 404 (nothing outside the embedded assets is ever served).
///
///   ApiResponse r = handle_api("POST", "/api/plan", R"({"model": "llama3-8b", ...})");
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace shardplan {

struct ApiResponse {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
};

struct ApiLimits {
    size_t max_body_bytes = 1 << 20;  // 1 MiB: a case is a few kB
    int max_top = 50;
    int64_t max_search_layouts = 20'000'000;  // a bigger search is refused (400) instead of tying up a worker
    int64_t max_trace_passes = 40'000;  // micro-batches × virtual stages of a /api/trace timeline (≤ 80 MB)
    double max_search_s = 10;                 // a search still running then is stopped: 400
};

/// `cancel`, when given, is watched by long work (the search): the server sets it when the client has
/// gone, and the answer (503, nobody reads it) comes back early.
ApiResponse handle_api(const std::string& method, const std::string& path, const std::string& body,
                       const ApiLimits& limits = {}, const std::atomic<bool>* cancel = nullptr);

/// Requests that may take seconds or hundreds of MB (search, trace): the server runs them on a small pool
/// of their own, so they never hold up a plan.
bool api_is_heavy(const std::string& path);

/// An embedded page asset by path ("/" is "/index.html"); nullptr if there is none.
struct Asset {
    const char* path;
    const char* content_type;
    const unsigned char* data;
    size_t size;
};
const Asset* find_asset(const std::string& path);

}  // namespace shardplan
