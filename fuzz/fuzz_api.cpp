// libFuzzer target: the HTTP request handler, in-process. The first byte picks the method, bytes up to
// the first newline are the path, the rest is the body.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "shardplan/api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    static const char* methods[] = {"GET", "POST", "PUT", "HEAD"};
    const std::string method = methods[data[0] % 4];
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    const size_t nl = rest.find('\n');
    const std::string path = nl == std::string::npos ? rest : rest.substr(0, nl);
    const std::string body = nl == std::string::npos ? std::string() : rest.substr(nl + 1);
    // The production limits: a search or trace as large as the server allows must finish within the
    // fuzzer's timeout and memory limit too (that is how the 2 GB trace was found).
    const shardplan::ApiLimits limits;
    const shardplan::ApiResponse r = shardplan::handle_api(method, path, body, limits);
    if (r.status != 200 && r.status != 400 && r.status != 404 && r.status != 405 && r.status != 413 && r.status != 503)
        std::abort();
    return 0;
}
