/// HTTP/1.1 request heads, parsed strictly and without allocation beyond the head itself: the part of
/// the server that reads bytes from strangers, kept pure so the fuzzer and the tests call it directly.
///
/// What is accepted (docs/security.md): a request line `METHOD SP origin-form SP HTTP/1.x`, header lines
/// `name: value`, at most kMaxHeadBytes in all. A body is announced by Content-Length only (digits, one
/// value); Transfer-Encoding is refused (411), so no chunked body is ever buffered. `Expect:
/// 100-continue` is honoured. Anything else malformed is 400, and the connection closes after it.
///
///   HeadParse p = parse_request_head("POST /api/plan HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
///   // p.status == 0, p.head_bytes == 63, p.head.method == "POST", p.head.content_length == 2
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardplan::app {

inline constexpr size_t kMaxHeadBytes = 16 * 1024;
inline constexpr size_t kMaxHeaders = 64;

struct RequestHead {
    std::string method, path, query;  // path without the query; query without '?'
    bool http10 = false;              // HTTP/1.0: close after the answer unless keep-alive is asked for
    std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
    std::optional<uint64_t> content_length;
    bool keep_alive = true;
    bool expect_continue = false;
    const std::string* header(std::string_view lower_name) const;
};

struct HeadParse {
    int status = 0;           // 0: complete and valid; -1: need more bytes; else the HTTP status to answer
    std::string error;        // "field: expected ..." when status >= 400
    size_t head_bytes = 0;    // bytes of the head including the blank line (status 0)
    RequestHead head;
};

/// Parses the head at the start of `buffer`. Needs no more than kMaxHeadBytes: past that without a
/// blank line it answers 431.
HeadParse parse_request_head(std::string_view buffer);

/// The status line and headers of an answer; `body_bytes` goes into Content-Length (a HEAD answer
/// announces the length of the body it leaves out).
std::string response_head(int status, std::string_view content_type, size_t body_bytes, bool keep_alive,
                          std::string_view extra_headers = "");

/// Whether an address or name is loopback: localhost, ::1 or a dotted 127.x.x.x. The server binds there
/// by default, and then answers only to such Host names.
bool is_loopback(std::string_view host);

/// Whether `host` (a Host header's value, port included or not) names the server as the user bound it:
/// a loopback name or address (localhost, 127.x, [::1]) when bound to loopback, or one of `allowed`.
/// Refusing other names stops DNS rebinding: a hostile page whose name resolves to 127.0.0.1 sends its
/// own name as Host.
bool host_allowed(std::string_view host, bool bound_loopback, const std::vector<std::string>& allowed);

/// Whether a browser's Origin header (absent for non-browser clients) is this server itself:
/// "http://" + the Host the request was sent to.
bool same_origin(std::string_view origin, std::string_view host);

}  // namespace shardplan::app
