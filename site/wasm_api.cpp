// The static site's planner: shardplan's HTTP API function compiled to WebAssembly. The page's requests
// to /api/... are answered in the browser (site/static.js routes fetch() here), so the same page runs
// from any static file server with no shardplan process behind it.
#include <cstdlib>
#include <cstring>
#include <string>

#include "shardplan/api.h"

extern "C" {

/// "STATUS\n" + the response body, in a buffer the caller frees with shardplan_free.
char* shardplan_api(const char* method, const char* path, const char* body) {
    shardplan::ApiLimits limits;
    limits.max_search_s = 60;  // the visitor's own machine: a longer search than a shared server allows
    const shardplan::ApiResponse r = shardplan::handle_api(method, path, body ? body : "", limits);
    const std::string out = std::to_string(r.status) + "\n" + r.body;
    char* buffer = static_cast<char*>(std::malloc(out.size() + 1));
    if (buffer) std::memcpy(buffer, out.c_str(), out.size() + 1);
    return buffer;
}

void shardplan_free(char* p) { std::free(p); }

}  // extern "C"
