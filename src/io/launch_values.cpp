// Launch-file values read and checked against the framework's key table (src/io/launch_values.h).
#include "launch_values.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

namespace shardplan::launch {

void Values::put(const std::string& key, json v) {
    const LaunchKey* k = find_launch_key(f, key);
    if (!k) {
        ++ignored;
        return;
    }
    if (given.count(key)) bad(key, "one value, it is given twice");
    auto in_choices = [&](const std::string& s) {
        if (k->choices.empty()) return true;
        for (size_t a = 0, b; a <= k->choices.size(); a = b + 1) {
            b = k->choices.find('|', a);
            if (b == std::string_view::npos) b = k->choices.size();
            if (k->choices.substr(a, b - a) == s) return true;
        }
        return false;
    };
    const bool ok = [&] {
        switch (k->kind) {
            case ArgKind::flag: return v.is_boolean();
            case ArgKind::integer: return v.is_number_integer() && (k->choices.empty() || in_choices(std::to_string(v.get<int64_t>())));
            case ArgKind::number: return v.is_number();
            case ArgKind::text: return v.is_string() && in_choices(v.get<std::string>());
            case ArgKind::list:
                if (!v.is_array()) return false;
                for (const json& e : v)
                    if (e.is_string() && !in_choices(e.get<std::string>())) return false;
                return true;
        }
        return false;
    }();
    if (!ok) {
        const char* kinds[] = {"true or false", "an integer", "a number", "a word", "a list"};
        bad(key, fmt::format("{}{}{}, got {}", kinds[static_cast<int>(k->kind)], k->choices.empty() ? "" : " of ",
                             std::string(k->choices), describe_json(v)));
    }
    given[key] = std::move(v);
}

// ---- Megatron: words of a launch script ------------------------------------------------------------------

std::vector<std::string> shell_words(const std::string& text, const std::string& field) {
    std::vector<std::string> words;
    std::map<std::string, std::string> vars;
    std::string w;
    bool in_word = false;
    auto expand = [&](const std::string& s) {
        std::string out;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] != '$' || i + 1 >= s.size()) {
                out += s[i];
                continue;
            }
            size_t j = i + 1;
            const bool braced = s[j] == '{';
            if (braced) ++j;
            const size_t start = j;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
            const std::string name = s.substr(start, j - start);
            if (name.empty() || (braced && (j >= s.size() || s[j] != '}'))) {
                out += s[i];
                continue;
            }
            const auto it = vars.find(name);
            out += it != vars.end() ? it->second : s.substr(i, j - i + (braced ? 1 : 0));
            i = j - (braced ? 0 : 1);
        }
        return out;
    };
    auto finish = [&] {
        if (!in_word) return;
        in_word = false;
        const size_t eq = w.find('=');
        if (eq != std::string::npos && eq > 0 && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_') &&
            w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == eq) {
            vars[w.substr(0, eq)] = expand(w.substr(eq + 1));
        } else {
            words.push_back(expand(w));
        }
        w.clear();
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
            while (i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) ++i;
            finish();
            continue;
        }
        if (c == '#' && !in_word) {
            while (i < text.size() && text[i] != '\n') ++i;
            continue;
        }
        if (c == '"' || c == '\'') {
            const size_t close = text.find(c, i + 1);
            if (close == std::string::npos) throw ConfigError(field, "shell words with closed quotes");
            w += text.substr(i + 1, close - i - 1);
            in_word = true;
            i = close;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c)) || c == ';' || c == '(' || c == ')') {
            finish();
            continue;
        }
        w += c;
        in_word = true;
    }
    finish();
    return words;
}

json typed_word(const std::string& s) {
    int64_t i = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
    if (ec == std::errc() && p == s.data() + s.size()) return i;
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end && *end == '\0') return d;
    return s;
}

Values megatron_values(const std::string& text, const std::string& field) {
    Values v{Framework::megatron, field, {}, 0};
    const std::vector<std::string> words = shell_words(text, field);
    for (size_t i = 0; i < words.size(); ++i) {
        const std::string& word = words[i];
        if (!word.starts_with("--") || word.size() < 3) continue;
        std::string name = word;
        std::optional<std::string> inline_value;
        if (const size_t eq = word.find('='); eq != std::string::npos) {
            name = word.substr(0, eq);
            inline_value = word.substr(eq + 1);
        }
        const LaunchKey* k = find_launch_key(Framework::megatron, name);
        auto next_is_value = [&] { return i + 1 < words.size() && !words[i + 1].starts_with("--"); };
        if (!k) {  // not modelled: skip it and the value it appears to take
            ++v.ignored;
            if (!inline_value && next_is_value()) ++i;
            continue;
        }
        if (k->kind == ArgKind::flag) {
            v.put(name, true);
        } else if (k->kind == ArgKind::list) {
            json list = json::array();
            if (inline_value) list.push_back(*inline_value);
            while (!inline_value && next_is_value()) list.push_back(words[++i]);
            v.put(name, list);
        } else {
            if (!inline_value && !next_is_value()) v.bad(name, "a value after it");
            const std::string value = inline_value ? *inline_value : words[++i];
            if (value.find('$') != std::string::npos)
                v.bad(name, "a value, got " + value + " (a shell variable the file does not set)");
            v.put(name, k->kind == ArgKind::text ? json(value) : typed_word(value));
        }
    }
    return v;
}

// ---- torchtitan and DeepSpeed: nested keys flattened to "table.key" --------------------------------------

void flatten(const json& j, const std::string& prefix, Values& v, int depth) {
    for (const auto& [key, value] : j.items()) {
        const std::string name = prefix.empty() ? key : prefix + "." + key;
        if (value.is_object() && depth < 4 && !find_launch_key(v.f, name)) {
            flatten(value, name, v, depth + 1);
            continue;
        }
        v.put(name, value);
    }
}

}  // namespace shardplan::launch
