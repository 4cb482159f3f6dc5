// The HTTP server over real loopback sockets (issue 19's protocol breaks): raw bytes in, raw bytes out,
// so what is tested is exactly what a client can send. Timeouts are shortened to keep the suite fast.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "http.h"
#include "server.h"
#include "shardplan/api.h"

using namespace shardplan;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kBody = R"({"model":"llama3-8b","cluster":{"preset":"dgx-h100","gpus":8},"layout":{"tp":8,"global_batch":8}})";

std::string post(const std::string& path, const std::string& body, const std::string& extra = "") {
    return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class Socket {
public:
    explicit Socket(int port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    }
    ~Socket() { ::close(fd_); }
    bool send(const std::string& s) { return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }
    /// Everything until the server closes or `timeout_s` passes.
    std::string read_all(double timeout_s = 5) {
        std::string out;
        const auto end = deadline(timeout_s);
        while (Clock::now() < end && receive(out) >= 0) {
        }
        return out;
    }
    /// Reads until `count` answers have come whole (by their Content-Length; the answer at `head_only`
    /// is to a HEAD request and has none of the body its length announces).
    std::vector<std::string> read_answers(size_t count, double timeout_s = 5, size_t head_only = SIZE_MAX) {
        std::vector<std::string> out;
        std::string buf;
        const auto end = deadline(timeout_s);
        while (out.size() < count && Clock::now() < end) {
            const size_t head_end = buf.find("\r\n\r\n");
            if (head_end != std::string::npos) {
                const size_t cl = buf.find("Content-Length: ");
                const size_t len = out.size() == head_only ? 0 : std::stoul(buf.substr(cl + 16));
                if (buf.size() >= head_end + 4 + len) {
                    out.push_back(buf.substr(0, head_end + 4 + len));
                    buf.erase(0, head_end + 4 + len);
                    continue;
                }
            }
            if (receive(buf) < 0) break;
        }
        return out;
    }
    bool connected() const { return connected_; }

private:
    static Clock::time_point deadline(double s) {
        return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    }
    /// Waits up to 50 ms for bytes and appends them: their count, 0 if none came, -1 once the server closed.
    ssize_t receive(std::string& into) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) return 0;
        char chunk[65536];
        const ssize_t r = ::recv(fd_, chunk, sizeof chunk, 0);
        if (r <= 0) return -1;
        into.append(chunk, static_cast<size_t>(r));
        return r;
    }
    int fd_ = -1;
    bool connected_ = false;
};

int status_of(const std::string& answer) { return answer.size() > 12 ? std::stoi(answer.substr(9, 3)) : 0; }

class Serve : public ::testing::Test {
protected:
    void start(app::ServerOptions o = {}) {
        o.port = 0;
        if (o.limits.max_body_bytes == ApiLimits{}.max_body_bytes) o.limits.max_body_bytes = 64 * 1024;
        server_ = std::make_unique<app::Server>(o);
        port_ = server_->bind();
        ASSERT_GT(port_, 0);
        thread_ = std::thread([this] { server_->run(); });
    }
    void TearDown() override {
        if (!server_) return;
        server_->stop();
        thread_.join();
    }
    std::string ask(const std::string& request, double timeout_s = 5) {
        Socket s(port_);
        s.send(request);
        auto a = s.read_answers(1, timeout_s);
        return a.empty() ? "" : a[0];
    }
    std::unique_ptr<app::Server> server_;
    std::thread thread_;
    int port_ = 0;
};

}  // namespace

// Break 12: pipelined requests are all answered, in order (3 sent, 1 answered before).
TEST_F(Serve, PipelinedRequestsAreAnsweredInOrder) {
    start();
    Socket s(port_);
    ASSERT_TRUE(s.send(post("/api/plan", kBody) + "GET /api/presets HTTP/1.1\r\nHost: localhost\r\n\r\n" +
                       post("/api/plan", "{") + "HEAD /api/presets HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    const auto answers = s.read_answers(4, 5, 3);
    ASSERT_EQ(answers.size(), 4u);
    EXPECT_EQ(status_of(answers[0]), 200);
    EXPECT_NE(answers[0].find("\"layout_string\""), std::string::npos);
    EXPECT_EQ(status_of(answers[1]), 200);
    EXPECT_NE(answers[1].find("\"models\""), std::string::npos);
    EXPECT_EQ(status_of(answers[2]), 400);
    // HEAD: GET's status and length, no body (405 before).
    EXPECT_EQ(status_of(answers[3]), 200);
    EXPECT_EQ(answers[3].substr(answers[3].size() - 4), "\r\n\r\n");
}

// Break 12: other methods are 405 with a JSON body and Allow; a POST without a length is 411 with JSON.
TEST_F(Serve, MethodsAndLengthsAnswerWithJson) {
    start();
    for (const char* m : {"OPTIONS", "PATCH", "DELETE", "PUT", "TRACE"}) {
        const std::string a = ask(std::string(m) + " /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
        EXPECT_EQ(status_of(a), 405) << m;
        EXPECT_NE(a.find("Allow: GET, HEAD, POST"), std::string::npos) << a;
        EXPECT_NE(a.find(R"({"error":"method: expected GET, HEAD or POST"})"), std::string::npos) << a;
    }
    const std::string no_length = ask("POST /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    EXPECT_EQ(status_of(no_length), 411);
    EXPECT_NE(no_length.find(R"({"error":"content-length: expected)"), std::string::npos) << no_length;
    EXPECT_EQ(status_of(ask("GET /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")), 405);
    EXPECT_EQ(status_of(ask("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")), 404);
    EXPECT_EQ(status_of(ask("GARBAGE\r\n\r\n")), 400);
    EXPECT_EQ(status_of(ask("GET / HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n")), 505);
    EXPECT_EQ(status_of(ask("GET / HTTP/1.1\r\n\r\n")), 400);  // HTTP/1.1 needs a Host
}

// Break 7: an oversized body is refused on its Content-Length, at once, before any of it is sent;
// a chunked body is refused before any of it is read.
TEST_F(Serve, BodyLimitsAreEnforcedBeforeReading) {
    start();
    const auto t0 = Clock::now();
    const std::string big = ask("POST /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1073741824\r\n\r\n");
    EXPECT_EQ(status_of(big), 413);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 5.0);  // not after the 10 s timeout
    const std::string chunked = ask("POST /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    "40000000\r\n" + std::string(4096, 'x'));
    EXPECT_EQ(status_of(chunked), 411);
    // Expect: 100-continue gets its interim answer, then the real one.
    Socket s(port_);
    s.send("POST /api/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: " +
           std::to_string(kBody.size()) + "\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s.send(kBody);
    const std::string both = s.read_all(1.0);
    EXPECT_EQ(both.rfind("HTTP/1.1 100 Continue\r\n\r\n", 0), 0u) << both.substr(0, 100);
    EXPECT_NE(both.find("HTTP/1.1 200 OK"), std::string::npos);
}

// Break 4: Hosts other than loopback names (DNS rebinding) and writes from other origins are refused.
TEST_F(Serve, ForeignHostsAndOriginsAreRefused) {
    start();
    EXPECT_EQ(status_of(ask("GET / HTTP/1.1\r\nHost: attacker.example:8080\r\n\r\n")), 403);
    EXPECT_EQ(status_of(ask("GET / HTTP/1.1\r\nHost: 127.0.0.1.nip.io\r\n\r\n")), 403);
    EXPECT_EQ(status_of(ask("GET / HTTP/1.1\r\nHost: localhost:" + std::to_string(port_) + "\r\n\r\n")), 200);
    EXPECT_EQ(status_of(ask("GET / HTTP/1.1\r\nHost: [::1]:" + std::to_string(port_) + "\r\n\r\n")), 200);
    const std::string evil = ask(post("/api/plan", kBody, "Origin: http://attacker.example\r\n"));
    EXPECT_EQ(status_of(evil), 403);
    EXPECT_NE(evil.find("origin: expected a request from this server's own page"), std::string::npos);
    EXPECT_EQ(status_of(ask(post("/api/plan", kBody, "Sec-Fetch-Site: cross-site\r\n"))), 403);
    // The page itself: Origin is the server's own address.
    EXPECT_EQ(status_of(ask(post("/api/plan", kBody, "Origin: http://127.0.0.1\r\n"))), 200);
    EXPECT_TRUE(app::host_allowed("localhost", true, {}));
    EXPECT_FALSE(app::host_allowed("127.0.0.1.evil", true, {}));
    EXPECT_TRUE(app::host_allowed("planner.corp:8080", true, {"planner.corp"}));
    EXPECT_TRUE(app::host_allowed("anything", false, {}));  // bound to a public address on purpose
}

// Break 6: a client trickling header lines cannot hold a connection past the whole-request timeout,
// and slow connections cannot shut out new ones.
TEST_F(Serve, SlowClientsCannotHoldTheServer) {
    app::ServerOptions o;
    o.request_timeout_s = 3;
    o.max_connections = 8;
    start(o);
    std::vector<std::unique_ptr<Socket>> slow;
    for (int i = 0; i < 16; ++i) {  // twice the connection limit, each one header line in
        slow.push_back(std::make_unique<Socket>(port_));
        slow.back()->send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    }
    // A normal request still gets through well before the slow ones time out (3 s): the
    // longest-waiting slow connection makes room. (Bounds are generous: these machines are noisy.)
    const auto t0 = Clock::now();
    EXPECT_EQ(status_of(ask(post("/api/plan", kBody))), 200);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.5);
    // A client sending a header line every 300 ms is cut off about 3 s after its first byte.
    Socket trickle(port_);
    const auto t1 = Clock::now();
    trickle.send("GET / HTTP/1.1\r\n");
    bool cut = false;
    for (int i = 0; i < 40 && !cut; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        cut = !trickle.send("X-Slow: 1\r\n");
    }
    const std::string rest = trickle.read_all(0.5);
    const double held = std::chrono::duration<double>(Clock::now() - t1).count();
    EXPECT_TRUE(cut || rest.find("408") != std::string::npos) << rest;
    EXPECT_LT(held, 8.0);  // held forever before
}

// Break 8: searches run on their own pool; a cheap plan is answered while they run.
TEST_F(Serve, PlansAreNotQueuedBehindSearches) {
    app::ServerOptions o;
    o.heavy_threads = 1;
    o.heavy_queue = 2;
    start(o);
    const std::string search = post("/api/search",
        R"({"model":"llama3-405b","cluster":{"preset":"dgx-h100","gpus":4096},"layout":{"global_batch":2048,"seq_len":8192}})");
    std::vector<std::unique_ptr<Socket>> busy;
    for (int i = 0; i < 6; ++i) {
        busy.push_back(std::make_unique<Socket>(port_));
        busy.back()->send(search);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto t0 = Clock::now();
    EXPECT_EQ(status_of(ask(post("/api/plan", kBody))), 200);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 3.0);
    // One running, two waiting, the rest told to come back: 429 with Retry-After, at once.
    int refused = 0;
    for (auto& b : busy) {
        const auto a = b->read_answers(1, 0.3);
        if (!a.empty() && status_of(a[0]) == 429) {
            ++refused;
            EXPECT_NE(a[0].find("Retry-After: 1"), std::string::npos);
        }
    }
    EXPECT_GE(refused, 3);
    busy.clear();  // the clients leave: their searches are cancelled, the server stops promptly
}

// A search stops at its time budget, or when its client leaves, instead of running on for minutes.
TEST(ApiBudget, SearchesStopAtTheirBudgetOrWhenCancelled) {
    const std::string body =
        R"({"model":"llama3-405b","cluster":{"preset":"dgx-h100","gpus":4096},"layout":{"global_batch":2048,"seq_len":8192}})";
    ApiLimits tight;
    tight.max_search_s = 1e-6;
    const ApiResponse late = handle_api("POST", "/api/search", body, tight);
    EXPECT_EQ(late.status, 400);
    EXPECT_NE(late.body.find("time budget"), std::string::npos) << late.body;
    std::atomic<bool> gone{true};
    const ApiResponse cancelled = handle_api("POST", "/api/search", body, {}, &gone);
    EXPECT_EQ(cancelled.status, 503);
}

// The head parser on its own: what it accepts and refuses.
TEST(HttpHead, ParsesStrictly) {
    auto p = app::parse_request_head("POST /api/plan?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}");
    ASSERT_EQ(p.status, 0) << p.error;
    EXPECT_EQ(p.head.path, "/api/plan");
    EXPECT_EQ(p.head.query, "x=1");
    EXPECT_EQ(*p.head.content_length, 2u);
    EXPECT_EQ(p.head_bytes, 59u);
    EXPECT_EQ(app::parse_request_head("GET / HTTP/1.1\r\nHost: a\r\n").status, -1);  // not complete yet
    EXPECT_EQ(app::parse_request_head(std::string(app::kMaxHeadBytes, 'a')).status, 431);
    EXPECT_EQ(app::parse_request_head("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").status, 400);
    EXPECT_EQ(app::parse_request_head("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n").status, 400);
    EXPECT_EQ(app::parse_request_head("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n").status, 400);
    EXPECT_EQ(app::parse_request_head("GET / HTTP/1.1\r\nHost: a\r\nExpect: magic\r\n\r\n").status, 417);
    EXPECT_EQ(app::parse_request_head("GET /a\x01 HTTP/1.1\r\nHost: a\r\n\r\n").status, 400);
    EXPECT_FALSE(app::parse_request_head("GET / HTTP/1.0\r\n\r\n").head.keep_alive);
}
