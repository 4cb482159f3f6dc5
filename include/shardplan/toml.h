/// TOML job files (torchtitan's among them) read into JSON with toml++, so the readers of launch
/// configurations walk one kind of tree. Dates and times, which no job file shardplan reads uses, are
/// refused with their line.
///
///   json j = parse_toml("[training]\nseq_len = 8192\n", "FILE");   // {"training": {"seq_len": 8192}}
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace shardplan {

/// Throws ConfigError on `field` ("expected TOML, line 3: ...").
nlohmann::json parse_toml(const std::string& text, const std::string& field);

}  // namespace shardplan
