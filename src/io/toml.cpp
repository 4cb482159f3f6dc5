// TOML job files read into JSON (include/shardplan/toml.h), with toml++ (Debian libtomlplusplus-dev).
#include "shardplan/toml.h"

#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "shardplan/error.h"

namespace shardplan {

namespace {

nlohmann::json to_json(const toml::node& n, const std::string& field) {
    if (const auto* t = n.as_table()) {
        nlohmann::json o = nlohmann::json::object();
        for (const auto& [k, v] : *t) o[std::string(k.str())] = to_json(v, field);
        return o;
    }
    if (const auto* a = n.as_array()) {
        nlohmann::json arr = nlohmann::json::array();
        for (const auto& v : *a) arr.push_back(to_json(v, field));
        return arr;
    }
    if (const auto* s = n.as_string()) return s->get();
    if (const auto* i = n.as_integer()) return i->get();
    if (const auto* d = n.as_floating_point()) return d->get();
    if (const auto* b = n.as_boolean()) return b->get();
    const auto& src = n.source().begin;
    throw ConfigError(field, fmt::format("TOML strings, numbers, booleans, arrays and tables, line {} holds a date or "
                                         "time",
                                         src.line));
}

}  // namespace

nlohmann::json parse_toml(const std::string& text, const std::string& field) {
    try {
        const toml::table t = toml::parse(text);
        return to_json(t, field);
    } catch (const toml::parse_error& e) {
        throw ConfigError(field, fmt::format("TOML, line {}: {}", e.source().begin.line, e.description()));
    }
}

}  // namespace shardplan
