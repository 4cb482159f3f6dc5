// libFuzzer target: the HTTP server as a client meets it, over a real loopback socket. One server runs
// for the whole session with short timeouts; each input is split at 0xFF bytes into writes sent with a
// pause between them (so partial heads, pipelining and bodies split anywhere are reached), then the
// client half-closes and reads whatever comes back. Every 64 inputs a plain request must still be
// answered: a server that stopped serving is a finding. The pure head parser is fuzzed on the same input.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "http.h"
#include "server.h"

namespace {

int g_port = 0;
// The server and its options live until the process ends and are never destroyed: the detached thread
// still runs in them while libFuzzer exits, and a static object's destructor at exit would pull them
// from under it (a heap-use-after-free ASan reported at the end of a session). Held here, they stay
// reachable, so LeakSanitizer does not count them.
shardplan::app::ServerOptions* g_options = nullptr;
shardplan::app::Server* g_server = nullptr;

int connect_loopback() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(g_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();
    return fd;
}

std::string drain(int fd, int ms) {
    std::string out;
    char buf[65536];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) break;
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        if (r <= 0) break;
        out.append(buf, static_cast<size_t>(r));
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_options = new shardplan::app::ServerOptions;
    shardplan::app::ServerOptions& o = *g_options;
    o.port = 0;
    o.threads = 2;
    o.heavy_threads = 1;
    o.request_timeout_s = 0.5;
    o.idle_timeout_s = 0.5;
    o.max_connections = 16;
    o.limits.max_body_bytes = 64 * 1024;
    o.limits.max_search_layouts = 200'000;
    o.limits.max_trace_passes = 2'000;
    g_server = new shardplan::app::Server(o);
    g_port = g_server->bind();
    if (g_port <= 0) std::abort();
    std::thread([] { g_server->run(); }).detach();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    (void)shardplan::app::parse_request_head(input);
    const int fd = connect_loopback();
    size_t pos = 0;
    while (pos <= input.size()) {
        const size_t cut = input.find('\xFF', pos);
        const std::string part = input.substr(pos, cut == std::string::npos ? std::string::npos : cut - pos);
        if (!part.empty()) (void)::send(fd, part.data(), part.size(), MSG_NOSIGNAL);
        if (cut == std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        pos = cut + 1;
    }
    ::shutdown(fd, SHUT_WR);
    const std::string answer = drain(fd, 300);
    ::close(fd);
    if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) std::abort();  // anything sent back is HTTP
    static int n = 0;
    if (++n % 64 == 0) {  // still serving?
        const int c = connect_loopback();
        const std::string req = "GET /api/presets HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        (void)::send(c, req.data(), req.size(), MSG_NOSIGNAL);
        const std::string ok = drain(c, 2000);
        ::close(c);
        if (ok.rfind("HTTP/1.1 200", 0) != 0) std::abort();
    }
    return 0;
}
