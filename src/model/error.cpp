// One printable line out of any input text (include/shardplan/error.h).
#include "shardplan/error.h"

#include <algorithm>

#include <fmt/format.h>

namespace shardplan {

size_t text_width(std::string_view text) {
    return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

std::string printable(std::string_view s, size_t max_bytes) {
    std::string out;
    out.reserve(std::min(s.size(), max_bytes) + 4);
    size_t i = 0;
    for (; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        const bool control = c < 0x20 || c == 0x7F;
        const size_t width = control ? 4 : 1;
        if (out.size() + width > max_bytes) break;
        if (control) out += fmt::format("\\x{:02X}", c);
        else out += static_cast<char>(c);
    }
    if (i == s.size()) return out;
    // Cut: drop a trailing UTF-8 sequence the limit left incomplete.
    size_t lead = out.size();
    while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
    if (lead > 0) {
        const auto b = static_cast<unsigned char>(out[lead - 1]);
        const size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        if (out.size() - (lead - 1) < need) out.resize(lead - 1);
    }
    return out + "...";
}

}  // namespace shardplan
