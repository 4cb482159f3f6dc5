// The HTTP adapter (app/server.h): one poll() loop owns every socket; workers only run handle_api().
#include "server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "http.h"

namespace shardplan::app {

using Clock = std::chrono::steady_clock;

namespace {

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

std::string error_body(const std::string& message) { return nlohmann::json{{"error", message}}.dump(); }

/// A request handed to a worker, and its answer.
struct Job {
    uint64_t conn = 0;
    std::string method, path, body;
    std::atomic<bool> cancel{false};
    ApiResponse response;
};

/// A fixed set of threads over a bounded queue.
class Pool {
public:
    Pool(int threads, size_t max_waiting, std::function<void(std::shared_ptr<Job>)> run)
        : max_waiting_(max_waiting), run_(std::move(run)) {
        for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) t.join();
    }
    bool push(std::shared_ptr<Job> j) {
        {
            std::lock_guard<std::mutex> g(m_);
            if (q_.size() >= max_waiting_) return false;
            q_.push_back(std::move(j));
        }
        cv_.notify_one();
        return true;
    }

private:
    void loop() {
        for (;;) {
            std::shared_ptr<Job> j;
            {
                std::unique_lock<std::mutex> g(m_);
                cv_.wait(g, [this] { return stop_ || !q_.empty(); });
                if (q_.empty()) return;
                j = std::move(q_.front());
                q_.pop_front();
            }
            run_(std::move(j));
        }
    }
    size_t max_waiting_;
    std::function<void(std::shared_ptr<Job>)> run_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<Job>> q_;
    bool stop_ = false;
    std::vector<std::thread> threads_;
};

enum class State { reading, processing, writing };

struct Conn {
    int fd = -1;
    uint64_t id = 0;
    State state = State::reading;
    std::string in;                 // bytes received and not yet consumed (pipelined requests stay here)
    std::optional<HeadParse> head;  // the current request's head, once complete
    std::string out, out_body;  // the answer's head and body, written one after the other (a body is never copied)
    size_t out_off = 0;         // into out, then into out_body
    bool close_after = false;
    bool idle = true;               // no byte of the next request yet
    Clock::time_point deadline;
    Clock::time_point waiting_since;  // for eviction: when this connection started waiting for a request
    std::shared_ptr<Job> job;
};

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

struct Server::Impl {
    ServerOptions opt;
    int listen_fd = -1;
    int wake[2] = {-1, -1};
    std::atomic<bool> stopping{false};
    bool bound_loopback = true;
    std::mutex done_m;
    std::vector<std::shared_ptr<Job>> done;
    std::map<uint64_t, Conn> conns;
    uint64_t next_id = 1;

    void finish(std::shared_ptr<Job> j) {
        // HEAD is GET without the body; the API itself knows GET and POST.
        const bool head = j->method == "HEAD";
        j->response = handle_api(head ? "GET" : j->method, j->path, j->body, opt.limits, &j->cancel);
        {
            std::lock_guard<std::mutex> g(done_m);
            done.push_back(std::move(j));
        }
        const char b = 1;
        (void)!::write(wake[1], &b, 1);
    }

    void respond(Conn& c, int status, const std::string& content_type, std::string body, bool head_only,
                 const std::string& extra = "") {
        if (stopping) c.close_after = true;
        c.out = response_head(status, content_type, body.size(), !c.close_after, extra);
        c.out_body = head_only ? std::string() : std::move(body);
        c.out_off = 0;
        c.state = State::writing;
        c.deadline = Clock::now() + seconds(opt.write_timeout_s);
    }
    void refuse(Conn& c, int status, const std::string& message, const std::string& extra = "") {
        c.close_after = true;  // the rest of what this client sent cannot be trusted to frame a request
        respond(c, status, "application/json", error_body(message), false, extra);
    }

    /// Reads whatever requests the buffer holds, up to the first that needs work; true to keep the connection.
    void consume(Conn& c, Pool& light, Pool& heavy) {
        while (c.state == State::reading && !c.in.empty()) {
            if (c.idle) {  // the first byte of a request starts its clock
                c.idle = false;
                c.deadline = Clock::now() + seconds(opt.request_timeout_s);
            }
            if (!c.head) {
                HeadParse p = parse_request_head(c.in);
                if (p.status == -1) return;
                if (p.status != 0) return refuse(c, p.status, p.error);
                const RequestHead& h = p.head;
                if (!h.keep_alive) c.close_after = true;
                const std::string* host = h.header("host");
                if (host && !host_allowed(*host, bound_loopback, opt.allowed_hosts))
                    return refuse(c, 403, "host: expected this server's own name (localhost, 127.0.0.1 or an --allow-host name)");
                if (h.method != "GET" && h.method != "HEAD" && h.method != "POST")
                    return refuse(c, 405, "method: expected GET, HEAD or POST", "Allow: GET, HEAD, POST\r\n");
                if (h.method == "POST") {
                    const std::string* origin = h.header("origin");
                    const std::string* site = h.header("sec-fetch-site");
                    if ((origin && (!host || !same_origin(*origin, *host))) || (site && *site == "cross-site"))
                        return refuse(c, 403, "origin: expected a request from this server's own page (cross-origin writes are refused)");
                    if (!h.content_length) return refuse(c, 411, "content-length: expected the body's length in bytes");
                }
                const uint64_t n = h.content_length.value_or(0);
                if (n > opt.limits.max_body_bytes)
                    return refuse(c, 413, "body: expected at most " + std::to_string(opt.limits.max_body_bytes) + " bytes");
                if (h.expect_continue && c.in.size() == p.head_bytes && n > 0) {
                    static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                    (void)!::send(c.fd, cont, sizeof cont - 1, MSG_NOSIGNAL);
                }
                c.head = std::move(p);
            }
            const HeadParse& p = *c.head;
            const size_t need = p.head_bytes + p.head.content_length.value_or(0);
            if (c.in.size() < need) return;
            auto j = std::make_shared<Job>();
            j->conn = c.id;
            j->method = p.head.method;
            j->path = p.head.path;
            j->body = c.in.substr(p.head_bytes, need - p.head_bytes);
            c.in.erase(0, need);
            c.head.reset();
            c.state = State::processing;
            c.job = j;
            if (!(api_is_heavy(j->path) ? heavy : light).push(j)) {
                c.job.reset();
                c.state = State::reading;
                respond(c, 429, "application/json",
                        error_body("request: expected fewer searches and traces at once; try again shortly"), false,
                        "Retry-After: 1\r\n");
            }
        }
    }

    void close_conn(std::map<uint64_t, Conn>::iterator it) {
        if (it->second.job) it->second.job->cancel = true;
        ::close(it->second.fd);
        conns.erase(it);
    }

    void on_readable(Conn& c, Pool& light, Pool& heavy, bool& dead) {
        char buf[65536];
        for (;;) {
            // Never hold more than one request's worth: a head and the largest body allowed.
            const size_t cap = kMaxHeadBytes + opt.limits.max_body_bytes + 1;
            if (c.in.size() >= cap) break;
            const ssize_t r = ::recv(c.fd, buf, std::min(sizeof buf, cap - c.in.size()), 0);
            if (r > 0) {
                c.in.append(buf, static_cast<size_t>(r));
                continue;
            }
            if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) dead = true;
            break;
        }
        consume(c, light, heavy);
        if (dead && c.state == State::reading) return;
        if (dead) dead = c.state != State::writing;  // still answer what was asked before the client half-closed
    }

    void on_writable(Conn& c, Pool& light, Pool& heavy, bool& dead) {
        while (c.out_off < c.out.size() + c.out_body.size()) {
            const bool in_head = c.out_off < c.out.size();
            const std::string& part = in_head ? c.out : c.out_body;
            const size_t off = in_head ? c.out_off : c.out_off - c.out.size();
            const int more = in_head && !c.out_body.empty() ? MSG_MORE : 0;
            const ssize_t w = ::send(c.fd, part.data() + off, part.size() - off, MSG_NOSIGNAL | more);
            if (w > 0) {
                c.out_off += static_cast<size_t>(w);
                c.deadline = Clock::now() + seconds(opt.write_timeout_s);
                continue;
            }
            if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
            dead = true;
            return;
        }
        if (c.close_after) {
            dead = true;
            return;
        }
        c.out.clear();
        c.out_body = std::string();
        c.state = State::reading;
        c.idle = true;
        c.waiting_since = Clock::now();
        c.deadline = Clock::now() + seconds(opt.idle_timeout_s);
        consume(c, light, heavy);  // a pipelined request may be waiting already
        if (c.state == State::writing) on_writable(c, light, heavy, dead);
    }

    void accept_all() {
        for (;;) {
            const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) return;
            if (static_cast<int>(conns.size()) >= opt.max_connections) {
                // Make room: close the connection that has waited longest for a request of its own.
                auto oldest = conns.end();
                for (auto it = conns.begin(); it != conns.end(); ++it)
                    if (it->second.state == State::reading &&
                        (oldest == conns.end() || it->second.waiting_since < oldest->second.waiting_since))
                        oldest = it;
                if (oldest == conns.end()) {
                    ::close(fd);  // every connection is being answered: this one waits for the client's retry
                    continue;
                }
                close_conn(oldest);
            }
            const int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // answers are small: no Nagle delay
            Conn c;
            c.fd = fd;
            c.id = next_id++;
            c.waiting_since = Clock::now();
            c.deadline = c.waiting_since + seconds(opt.request_timeout_s);
            c.idle = true;
            conns.emplace(c.id, std::move(c));
        }
    }
};

Server::Server(const ServerOptions& o) : impl_(std::make_unique<Impl>()) { impl_->opt = o; }

Server::~Server() {
    if (impl_->listen_fd >= 0) ::close(impl_->listen_fd);
    for (int fd : impl_->wake)
        if (fd >= 0) ::close(fd);
}

int Server::bind() {
    Impl& s = *impl_;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(s.opt.port);
    if (::getaddrinfo(s.opt.host.c_str(), port.c_str(), &hints, &res) != 0 || !res) return -1;
    int fd = -1;
    for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        const int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(res);
    if (fd < 0) return -1;
    set_nonblocking(fd);
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    if (::pipe2(s.wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        ::close(fd);
        return -1;
    }
    s.listen_fd = fd;
    s.bound_loopback = is_loopback(s.opt.host);
    return bound;
}

void Server::run() {
    Impl& s = *impl_;
    const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int light_threads = s.opt.threads > 0 ? s.opt.threads : std::max(4, 2 * hw);
    auto run_job = [&s](std::shared_ptr<Job> j) { s.finish(std::move(j)); };
    Pool light(light_threads, 4096, run_job);
    Pool heavy(std::max(1, s.opt.heavy_threads), static_cast<size_t>(std::max(0, s.opt.heavy_queue)), run_job);
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    while (!s.stopping) {
        fds.clear();
        ids.clear();
        fds.push_back({s.wake[0], POLLIN, 0});
        fds.push_back({s.listen_fd, POLLIN, 0});
        const auto now = Clock::now();
        auto next_deadline = now + std::chrono::seconds(1);
        for (auto& [id, c] : s.conns) {
            short ev = 0;
            if (c.state == State::reading) ev = POLLIN;
            if (c.state == State::writing) ev = POLLOUT;
            if (c.state == State::processing) ev = POLLRDHUP;  // only to notice the client leaving
            else next_deadline = std::min(next_deadline, c.deadline);
            fds.push_back({c.fd, ev, 0});
            ids.push_back(id);
        }
        const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count();
        const int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(0, wait_ms) + 1));
        if (n < 0 && errno != EINTR) break;
        if (s.stopping) break;
        if (fds[0].revents) {
            char b[256];
            while (::read(s.wake[0], b, sizeof b) > 0) {
            }
        }
        std::vector<std::shared_ptr<Job>> done;
        {
            std::lock_guard<std::mutex> g(s.done_m);
            done.swap(s.done);
        }
        for (auto& j : done) {
            auto it = s.conns.find(j->conn);
            if (it == s.conns.end() || it->second.job != j) continue;  // the client left meanwhile
            Conn& c = it->second;
            c.job.reset();
            ApiResponse& r = j->response;
            std::string extra;
            if (r.status == 405) extra = j->path.starts_with("/api/") && j->path != "/api/presets" ? "Allow: POST\r\n" : "Allow: GET, HEAD\r\n";
            if (r.status == 503) extra = "Retry-After: 1\r\n";
            s.respond(c, r.status, r.content_type, std::move(r.body), j->method == "HEAD", extra);
            bool dead = false;
            s.on_writable(c, light, heavy, dead);
            if (dead) s.close_conn(it);
        }
        for (size_t i = 2; i < fds.size(); ++i) {
            auto it = s.conns.find(ids[i - 2]);
            if (it == s.conns.end()) continue;
            Conn& c = it->second;
            const short re = fds[i].revents;
            bool dead = false;
            if (c.state == State::processing) {
                if (re & (POLLRDHUP | POLLHUP | POLLERR)) dead = true;  // cancels the search it was waiting for
            } else if (re & (POLLERR | POLLNVAL)) {
                dead = true;
            } else if (c.state == State::reading && (re & (POLLIN | POLLHUP | POLLRDHUP))) {
                s.on_readable(c, light, heavy, dead);
                if (!dead && c.state == State::writing) s.on_writable(c, light, heavy, dead);
            } else if (c.state == State::writing && (re & POLLOUT)) {
                s.on_writable(c, light, heavy, dead);
            }
            if (!dead && c.state != State::processing && Clock::now() >= c.deadline) {
                // Out of time: a request that has started gets a 408 if the socket will take it.
                if (c.state == State::reading && !c.idle) {
                    const std::string r = response_head(408, "application/json", 0, false);
                    (void)!::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL);
                }
                dead = true;
            }
            if (dead) s.close_conn(it);
        }
        if (fds[1].revents & POLLIN) s.accept_all();
    }
    for (auto it = s.conns.begin(); it != s.conns.end();) {
        auto next = std::next(it);
        s.close_conn(it);
        it = next;
    }
    // The pools join their workers as they go out of scope; a worker finishing now only queues its answer.
}

void Server::stop() {
    impl_->stopping = true;
    if (impl_->wake[1] >= 0) {
        const char b = 0;
        (void)!::write(impl_->wake[1], &b, 1);
    }
}

}  // namespace shardplan::app
