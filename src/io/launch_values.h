/// Launch-file values for the importer (src/io/import.cpp), each checked against the framework's own
/// table of keys (import_keys.cpp: type and choices) as it is read: a Megatron launch script's words,
/// a torchtitan TOML file or DeepSpeed JSON flattened to "table.key". Internal to src/io, not installed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "shardplan/error.h"
#include "shardplan/import.h"

namespace shardplan::launch {

struct Values {
    Framework f;
    std::string field;                       // the file, as errors name it
    std::map<std::string, json> given;       // key → value as written (flags: true)
    int ignored = 0;

    [[noreturn]] void bad(const std::string& key, const std::string& what) const {
        throw ConfigError(field + " " + key, what);
    }
    bool has(const std::string& key) const { return given.count(key) != 0; }
    int64_t integer(const std::string& key, int64_t fallback, int64_t lo = 1) const {
        const auto it = given.find(key);
        if (it == given.end()) return fallback;
        if (!it->second.is_number_integer() || it->second.get<int64_t>() < lo || it->second.get<int64_t>() > 100'000'000)
            bad(key, fmt::format("an integer in [{}, 100000000], got {}", lo, describe_json(it->second)));
        return it->second.get<int64_t>();
    }
    double number(const std::string& key, double fallback) const {
        const auto it = given.find(key);
        if (it == given.end()) return fallback;
        if (!it->second.is_number() || it->second.get<double>() < 0)
            bad(key, "a non-negative number, got " + describe_json(it->second));
        return it->second.get<double>();
    }
    bool flag(const std::string& key, bool fallback = false) const {
        const auto it = given.find(key);
        if (it == given.end()) return fallback;
        if (!it->second.is_boolean()) bad(key, "true or false, got " + describe_json(it->second));
        return it->second.get<bool>();
    }
    std::string text(const std::string& key, const std::string& fallback) const {
        const auto it = given.find(key);
        if (it == given.end()) return fallback;
        if (!it->second.is_string()) bad(key, "a string, got " + describe_json(it->second));
        return it->second.get<std::string>();
    }
    // Records one value, typed as the framework defines the key; unknown keys are counted and left.
    void put(const std::string& key, json v);
};

/// Shell words after joining continued lines and dropping comments; NAME=value assignments are
/// remembered and $NAME / ${NAME} expanded from them (a launch script's usual variables).
std::vector<std::string> shell_words(const std::string& text, const std::string& field);
/// A word as JSON: an integer, else a number, else the string.
json typed_word(const std::string& s);
/// A Megatron launch script's arguments the key table knows (the rest counted in `ignored`).
Values megatron_values(const std::string& text, const std::string& field);
/// A torchtitan or DeepSpeed tree's leaves put as "table.key" (nested at most 4 deep).
void flatten(const json& j, const std::string& prefix, Values& v, int depth);

}  // namespace shardplan::launch
