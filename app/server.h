/// The HTTP adapter: a poll() loop in front of handle_api(). It moves bytes, and bounds what strangers
/// can make it hold (docs/security.md):
/// - every request's head and body must arrive within request_timeout_s of its first byte (a slow
///   client cannot hold a connection by trickling header lines), an idle keep-alive connection closes
///   after idle_timeout_s, and a reader that takes no bytes for write_timeout_s is dropped;
/// - at most max_connections are open; at the limit the one that has waited longest for its request
///   is closed to make room, so slow connections cannot shut out new ones;
/// - a body is announced by Content-Length and refused (413) before any of it is read when it is over
///   the limit; chunked bodies are refused (411);
/// - plans run on `threads` workers, searches and traces on `heavy_threads` of their own with a short
///   queue (429 with Retry-After when full), each search within limits.max_search_s (then 400), and
///   cancelled when its client leaves;
/// - Hosts other than the bound address or loopback names are refused (DNS rebinding), and so are
///   writes from another Origin;
/// - pipelined requests are answered in order; HEAD is GET without the body; other methods are 405.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "shardplan/api.h"

namespace shardplan::app {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;           // 0 = any free port
    int threads = 0;           // plan workers; 0 = two per core (at least 4)
    int heavy_threads = 2;     // search and trace workers
    int heavy_queue = 8;       // searches and traces waiting for one; more get 429
    int max_connections = 256;
    double request_timeout_s = 10;  // head and body of one request, from its first byte
    double idle_timeout_s = 5;      // a keep-alive connection with no request
    double write_timeout_s = 10;    // without any progress writing an answer
    std::vector<std::string> allowed_hosts;  // Host names accepted beside loopback (--allow-host)
    ApiLimits limits;
};

class Server {
public:
    explicit Server(const ServerOptions& o);
    ~Server();
    /// Binds and listens; returns the port (useful with port 0), or -1 if the address cannot be bound.
    int bind();
    /// Serves until stop(); call bind() first.
    void run();
    /// From any thread or a signal handler.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};



}  // namespace shardplan::app
