#include "server.h"

#include <httplib.h>

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
    s.set_keep_alive_max_count(1000000);  // reconnect storms overflow the listen backlog (5 in this build)
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

int Server::bind() {
    if (impl_->opt.port == 0) return impl_->svr.bind_to_any_port(impl_->opt.host.c_str());
    return impl_->svr.bind_to_port(impl_->opt.host.c_str(), impl_->opt.port) ? impl_->opt.port : -1;
}

void Server::run() { impl_->svr.listen_after_bind(); }
void Server::stop() { impl_->svr.stop(); }

}  // namespace shardplan::app
