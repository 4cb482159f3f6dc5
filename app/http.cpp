// HTTP/1.1 request heads and answer heads (app/http.h).
#include "http.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "shardplan/enums.h"

namespace shardplan::app {

namespace {

bool is_tchar(char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isalnum(u) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

HeadParse fail(int status, std::string error) {
    HeadParse p;
    p.status = status;
    p.error = std::move(error);
    return p;
}

const char* reason(int status) {
    switch (status) {
        case 100: return "Continue";
        case 200: return "OK";
        case 400: return "Bad Request";
        case 403: return "Forbidden";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 411: return "Length Required";
        case 413: return "Content Too Large";
        case 417: return "Expectation Failed";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        case 505: return "HTTP Version Not Supported";
        default: return "Status";
    }
}

}  // namespace

const std::string* RequestHead::header(std::string_view lower_name) const {
    for (const auto& [k, v] : headers)
        if (k == lower_name) return &v;
    return nullptr;
}

HeadParse parse_request_head(std::string_view buf) {
    // Empty lines before the request line are ignored (RFC 9112 §2.2).
    size_t start = 0;
    while (start + 1 < buf.size() && buf[start] == '\r' && buf[start + 1] == '\n') start += 2;
    const size_t end = buf.find("\r\n\r\n", start);
    if (end == std::string_view::npos || end + 4 > kMaxHeadBytes) {
        if (buf.size() >= kMaxHeadBytes || (end != std::string_view::npos && end + 4 > kMaxHeadBytes))
            return fail(431, fmt::format("head: expected request line and headers of at most {} bytes", kMaxHeadBytes));
        return fail(-1, "");
    }
    HeadParse p;
    p.head_bytes = end + 4;
    RequestHead& h = p.head;
    std::string_view rest = buf.substr(start, end + 2 - start);  // every line ends in CRLF
    auto next_line = [&]() {
        const size_t eol = rest.find("\r\n");
        const std::string_view line = rest.substr(0, eol);
        rest.remove_prefix(eol + 2);
        return line;
    };
    // Request line: METHOD SP target SP HTTP/1.x
    const std::string_view line = next_line();
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
        return fail(400, "request line: expected METHOD SP /path SP HTTP/1.1");
    const std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                           version = line.substr(sp2 + 1);
    if (method.empty() || method.size() > 16 || !std::all_of(method.begin(), method.end(), is_tchar))
        return fail(400, "request line: expected a method token");
    if (version == "HTTP/1.0") h.http10 = true;
    else if (version != "HTTP/1.1") return fail(version.starts_with("HTTP/") ? 505 : 400, "request line: expected HTTP/1.1 or HTTP/1.0");
    if (target.empty() || target.size() > 2048 || (target.front() != '/' && target != "*"))
        return fail(400, "request line: expected a path starting with / of at most 2048 bytes");
    for (char c : target)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7F) return fail(400, "request line: expected a path without control bytes");
    h.method = std::string(method);
    const size_t q = target.find('?');
    h.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) h.query = std::string(target.substr(q + 1));

    bool has_host = false, has_te = false;
    std::optional<std::string> connection;
    while (!rest.empty()) {
        const std::string_view hl = next_line();
        if (hl.front() == ' ' || hl.front() == '\t') return fail(400, "header: expected no folded lines");
        const size_t colon = hl.find(':');
        if (colon == std::string_view::npos || colon == 0) return fail(400, "header: expected name: value");
        const std::string_view name = hl.substr(0, colon);
        if (!std::all_of(name.begin(), name.end(), is_tchar)) return fail(400, "header: expected a token before ':'");
        const std::string_view value = trim(hl.substr(colon + 1));
        for (char c : value)
            if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F)
                return fail(400, "header: expected a value without control bytes");
        if (h.headers.size() >= kMaxHeaders) return fail(431, fmt::format("head: expected at most {} headers", kMaxHeaders));
        std::string key = ascii_lower(name);
        if (key == "content-length") {
            if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return fail(400, "content-length: expected a decimal byte count");
            const uint64_t n = std::stoull(std::string(value));
            if (h.content_length && *h.content_length != n) return fail(400, "content-length: expected one value");
            h.content_length = n;
        } else if (key == "transfer-encoding") {
            has_te = true;
        } else if (key == "host") {
            if (has_host) return fail(400, "host: expected one Host header");
            has_host = true;
        } else if (key == "connection") {
            connection = ascii_lower(value);
        } else if (key == "expect") {
            if (ascii_lower(value) != "100-continue") return fail(417, "expect: expected 100-continue or nothing");
            h.expect_continue = true;
        }
        h.headers.emplace_back(std::move(key), std::string(value));
    }
    // A chunked body would have to be buffered to learn its length: refused before any of it is read.
    if (has_te) return fail(411, "transfer-encoding: expected a Content-Length body instead (chunked bodies are not accepted)");
    if (!h.http10 && !has_host) return fail(400, "host: expected a Host header");
    if (connection) {
        if (connection->find("close") != std::string::npos) h.keep_alive = false;
        else if (h.http10) h.keep_alive = connection->find("keep-alive") != std::string::npos;
    } else if (h.http10) {
        h.keep_alive = false;
    }
    return p;
}

std::string response_head(int status, std::string_view content_type, size_t body_bytes, bool keep_alive,
                          std::string_view extra_headers) {
    return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n"
                       "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n{}\r\n",
                       status, reason(status), content_type, body_bytes, keep_alive ? "keep-alive" : "close", extra_headers);
}

namespace {

/// "Host: [::1]:8080" → "::1"; "LocalHost:80" → "localhost".
std::string host_name(std::string_view host) {
    std::string_view h = host;
    if (!h.empty() && h.front() == '[') {
        const size_t close = h.find(']');
        if (close == std::string_view::npos) return "";
        return ascii_lower(h.substr(1, close - 1));
    }
    const size_t colon = h.rfind(':');
    if (colon != std::string_view::npos && h.find(':') == colon) h = h.substr(0, colon);
    return ascii_lower(h);
}

}  // namespace

bool is_loopback(std::string_view host) {
    const std::string n = ascii_lower(host);
    if (n == "localhost" || n == "::1") return true;
    // 127.0.0.0/8 written as a dotted quad
    if (!n.starts_with("127.")) return false;
    int dots = 0;
    for (char c : n) {
        if (c == '.') ++dots;
        else if (c < '0' || c > '9') return false;
    }
    return dots == 3;
}

bool host_allowed(std::string_view host, bool bound_loopback, const std::vector<std::string>& allowed) {
    const std::string name = host_name(host);
    if (name.empty()) return false;
    for (const std::string& a : allowed)
        if (ascii_lower(a) == name) return true;
    if (bound_loopback) return is_loopback(name);
    return allowed.empty();  // bound to a public address on purpose and no names given: any name
}

bool same_origin(std::string_view origin, std::string_view host) {
    return ascii_lower(origin) == "http://" + ascii_lower(host);
}

}  // namespace shardplan::app
