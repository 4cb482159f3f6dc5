/// The HTTP adapter: cpp-httplib in front of handle_api(). A bounded worker pool, a request body limit
/// (413 before the body is read), read and write timeouts, and loopback unless told otherwise.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "shardplan/api.h"

namespace shardplan::app {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0 = any free port
    int threads = 64;  // one per keep-alive connection a browser or a load test keeps open
    ApiLimits limits;
    int timeout_s = 10;  // read and write timeouts per connection
};

class Server {
public:
    explicit Server(const ServerOptions& o);
    ~Server();
    /// Binds; returns the port (useful with port 0), or -1 if the address cannot be bound.
    int bind();
    /// Serves until stop(); call bind() first.
    void run();
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

bool is_loopback(const std::string& host);

}  // namespace shardplan::app
