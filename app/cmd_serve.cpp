// `shardplan serve`: the web planner and its JSON API.
#include <csignal>
#include <cstdio>
#include <memory>

#include "commands.h"
#include "http.h"
#include "server.h"
#include "shardplan/error.h"

namespace shardplan::app {

namespace {
Server* g_server = nullptr;
void on_signal(int) {
    if (g_server) g_server->stop();
}
}  // namespace

Run setup_serve(CLI::App& cmd) {
    auto o = std::make_shared<ServerOptions>();
    auto max_body = std::make_shared<int64_t>(1 << 20);
    cmd.add_option("--host", o->host, "Address to listen on (default 127.0.0.1: this machine only)");
    cmd.add_option("--port", o->port, "Port (default 8080; 0 picks a free one)");
    cmd.add_option("--threads", o->threads, "Worker threads for plans (default: two per core, at least 4)");
    cmd.add_option("--heavy-threads", o->heavy_threads, "Worker threads for searches and traces (default 2)");
    cmd.add_option("--allow-host", o->allowed_hosts,
                   "A Host name to answer to besides loopback names (repeatable; e.g. the name a proxy forwards)");
    cmd.add_option("--max-body", *max_body, "Largest request body in bytes (default 1 MiB; larger get 413)");
    return [o, max_body]() {
        if (o->port < 0 || o->port > 65535) throw ConfigError("--port", "an integer in [0, 65535]");
        if (o->threads < 0 || o->threads > 256)
            throw ConfigError("--threads", "an integer in [0, 256] (0: two per core)");
        if (o->heavy_threads < 1 || o->heavy_threads > 64) throw ConfigError("--heavy-threads", "an integer in [1, 64]");
        if (*max_body < 1024 || *max_body > (int64_t(1) << 30)) throw ConfigError("--max-body", "bytes in [1024, 2^30]");
        o->limits.max_body_bytes = static_cast<size_t>(*max_body);
        if (!is_loopback(o->host))
            std::fprintf(stderr, "shardplan: warning: listening on %s, reachable from other machines; the API has no "
                                 "authentication\n", o->host.c_str());
        Server server(*o);
        const int port = server.bind();
        if (port < 0) throw ConfigError("--port", "a free port on " + o->host + ", cannot bind " + std::to_string(o->port));
        g_server = &server;
        std::signal(SIGINT, on_signal);
        std::signal(SIGTERM, on_signal);
        std::printf("shardplan serving http://%s:%d/\n", o->host.find(':') != std::string::npos ? ("[" + o->host + "]").c_str()
                                                                                                 : o->host.c_str(), port);
        std::fflush(stdout);
        server.run();
        g_server = nullptr;
        return 0;
    };
}

}  // namespace shardplan::app
