/// Input errors. A ConfigError names the field (a dotted JSON path or a CLI flag) and what was expected.
/// The library throws it only while reading and validating inputs at the boundary; everything past the
/// boundary returns values (an infeasible layout is a Plan with a Rejection, never an exception).
/// Only the adapters (CLI main, HTTP handler, Python module) catch it: exit code 2 / HTTP 400, one line.
///
/// The message is always one short printable line, whatever the input held: control characters (NUL,
/// newlines, escapes) are written as \xNN, and the field and the expectation are each cut at a
/// character boundary (kMaxFieldBytes, kMaxExpectedBytes) with "..." — a 50 MB key or a NUL in a name
/// can neither flood a terminal nor cut the message short (docs/security.md).
///
///   throw ConfigError("layout.tp", "a positive integer, got -4");
///   // what(): "layout.tp: expected a positive integer, got -4"
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace shardplan {

/// `s` as one printable line of at most `max_bytes` (plus "..."): control bytes become \xNN, and the
/// cut never splits a UTF-8 sequence.
std::string printable(std::string_view s, size_t max_bytes);
/// The columns `text` takes in a terminal table: its UTF-8 code points ("·", "×" one each), as fmt pads
/// by them. Every text table sizes a column of names by it.
size_t text_width(std::string_view text);

class ConfigError : public std::runtime_error {
public:
    static constexpr size_t kMaxFieldBytes = 120;
    static constexpr size_t kMaxExpectedBytes = 300;
    ConfigError(const std::string& field, const std::string& expected)
        : ConfigError(Parts{printable(field, kMaxFieldBytes), printable(expected, kMaxExpectedBytes)}) {}
    const std::string& field() const { return field_; }
    const std::string& expected() const { return expected_; }

private:
    struct Parts {
        std::string field, expected;
    };
    explicit ConfigError(Parts p)
        : std::runtime_error(p.field + ": expected " + p.expected), field_(std::move(p.field)),
          expected_(std::move(p.expected)) {}
    std::string field_;
    std::string expected_;
};

}  // namespace shardplan
