/// Input errors. A ConfigError names the field (a dotted JSON path or a CLI flag) and what was expected.
/// The library throws it only while reading and validating inputs at the boundary; everything past the
/// boundary returns values (an infeasible layout is a Plan with a Rejection, never an exception).
/// Only the adapters (CLI main, HTTP handler) catch it: exit code 2 / HTTP 400, one line.
///
///   throw ConfigError("layout.tp", "a positive integer, got -4");
///   // what(): "layout.tp: expected a positive integer, got -4"
#pragma once
#include <stdexcept>
#include <string>

namespace shardplan {

class ConfigError : public std::runtime_error {
public:
    ConfigError(std::string field, std::string expected)
        : std::runtime_error(field + ": expected " + expected), field_(std::move(field)),
          expected_(std::move(expected)) {}
    const std::string& field() const { return field_; }
    const std::string& expected() const { return expected_; }

private:
    std::string field_;
    std::string expected_;
};

}  // namespace shardplan
