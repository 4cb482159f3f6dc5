#include "server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shardplan::app {

struct Server::Impl {
    ServerOptions opt;
    httplib::Server svr;
};

bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

Server::Server(const ServerOptions& o) : impl_(std::make_unique<Impl>()) {
    impl_->opt = o;
    httplib::Server& s = impl_->svr;
    const int threads = o.threads;
    s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    s.set_payload_max_length(o.limits.max_body_bytes);  // longer bodies get 413 before they are read
    s.set_read_timeout(o.timeout_s, 0);
    s.set_write_timeout(o.timeout_s, 0);
    s.set_keep_alive_max_count(1000000);  // a client reconnecting every 5 requests (the default) costs a handshake each
    s.set_keep_alive_timeout(2);
    s.set_tcp_nodelay(true);  // answers are small: without it Nagle and delayed ACKs add 40 ms to each
    const ApiLimits limits = o.limits;
    auto route = [limits](const httplib::Request& req, httplib::Response& res) {
        const ApiResponse r = handle_api(req.method, req.path, req.body, limits);
        res.status = r.status;
        res.set_content(r.body, r.content_type.c_str());
        res.set_header("X-Content-Type-Options", "nosniff");
        res.set_header("Cache-Control", "no-store");
    };
    s.Get(".*", route);
    s.Post(".*", route);
    s.Put(".*", route);
    s.Delete(".*", route);
    s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
        if (res.status == 413)
            res.set_content(R"js({"error":"body: expected a smaller request (too large)"})js", "application/json");
    });
}

Server::~Server() = default;

namespace {

/// cpp-httplib 0.11 listens with a backlog of 5: when 64 clients (re)connect at once the kernel drops
/// their SYNs and each retries one, three, seven seconds later, which is the whole latency tail under
/// load. Linux lets listen() be called again on a listening socket to widen its queue; the library does
/// not expose the descriptor, so find it: the one listening socket bound to our port.
void widen_listen_backlog(int port) {
    for (int fd = 3; fd < 1024; ++fd) {
        int listening = 0;
        socklen_t len = sizeof listening;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
        sockaddr_storage addr{};
        socklen_t alen = sizeof addr;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0) continue;
        int bound = -1;
        if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
        if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
        if (bound == port) ::listen(fd, SOMAXCONN);
    }
}

}  // namespace

int Server::bind() {
    const int port = impl_->opt.port == 0 ? impl_->svr.bind_to_any_port(impl_->opt.host.c_str())
                                          : (impl_->svr.bind_to_port(impl_->opt.host.c_str(), impl_->opt.port)
                                                 ? impl_->opt.port
                                                 : -1);
    if (port > 0) widen_listen_backlog(port);
    return port;
}

void Server::run() { impl_->svr.listen_after_bind(); }
void Server::stop() { impl_->svr.stop(); }

}  // namespace shardplan::app
