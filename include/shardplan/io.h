/// The boundary: JSON ↔ the three input value types, and the case format of
/// ../shared/validation/README.md (one case = model + cluster + layout + what was measured).
/// Every reader validates as it goes and throws ConfigError naming the JSON path of the first bad
/// field ("layout.tp: expected a positive integer, got \"8\""); nothing downstream re-checks types.
///
///   Case c = case_from_json(read_json_file("run.json", "--case"));
///   nlohmann::json j = to_json(c.layout);          // resolved inputs, echoed in every report
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardplan/hardware.h"
#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan {

using json = nlohmann::json;

/// What a published run measured. Read for comparison only; never while predicting.
struct Measured {
    std::optional<double> tokens_per_s_per_gpu, step_time_s, mfu_pct, hfu_pct, tflops_per_gpu, peak_tflops_for_mfu,
        memory_gb_per_gpu;
    std::string tflops_kind, memory_kind;
    /// The pipeline stage whose GPU the memory was read on (0: the one with the embedding); unset, the
    /// fullest (a maximum across ranks). From `memory_stage`, or a `memory_note` naming rank 0 (global
    /// rank 0 is the first stage under every rank order, pp outermost or not: its pp coordinate is 0).
    std::optional<int64_t> memory_stage;
};

struct Case {
    std::string id;
    std::string source;
    ModelSpec model;
    ClusterSpec cluster;
    Layout layout;
    Measured measured;
    /// Fields the source did not state and the case's author assumed ("derived": ["layout.recompute: [assumed] ..."]).
    std::vector<std::string> assumed;
    bool is_assumed(const std::string& field) const;
    /// Layout fields the case leaves null, each as it was planned: the micro-batch at 1 sequence (the
    /// layout's default), the global batch from the measured step (tokens/s per GPU × GPUs × step time
    /// over the sequence length) or, with no step to read, one micro-batch a DP rank. validate reports them
    /// per case, so no unstated field is planned silently.
    std::vector<std::string> unstated;
};

/// Reads and parses a JSON file; `field` names it in errors ("--case: expected readable JSON ...").
/// Only a regular file of at most kMaxJsonFileBytes is read: a device (/dev/zero), a FIFO, a socket or a
/// directory is refused before anything is read from it, and so is a symbolic link to one.
/// "-" reads standard input, with the same limit.
json read_json_file(const std::string& file, const std::string& field);
/// The text of a file (or "-": standard input) under the same rules; `kind` names what it should be
/// ("JSON", "TOML") in errors.
std::string read_text_file(const std::string& file, const std::string& field, const std::string& kind);
std::string read_text_stream(std::istream& in, const std::string& field, const std::string& kind, const std::string& shown);
inline constexpr long long kMaxJsonFileBytes = 64LL << 20;
/// Arrays and objects nest at most this deep in any JSON shardplan reads (a case needs 4): deeper
/// input is refused before it is parsed, so no reader, copy or message recurses without bound.
inline constexpr int kMaxJsonDepth = 64;
/// Parses JSON text; a syntax error, nesting deeper than kMaxJsonDepth, a duplicate key in an object or
/// a number that overflows a double is a ConfigError on `field` ("valid JSON[ in <where>], ..."). Shared
/// by read_json_file and the HTTP request body.
json parse_json_text(const std::string& text, const std::string& field, const std::string& where = "");
/// A JSON value as an error message shows it: numbers and short strings as written, longer strings cut,
/// arrays and objects by kind ("an array"). Never longer than about 50 bytes.
std::string describe_json(const json& v);

/// Where a case may read the model files it names. The CLI passes one (paths relative to `base_dir`,
/// the case file's folder); the HTTP API passes none, so a request's model is a preset name or an
/// inline object and the server never opens a file a request names.
struct FileAccess {
    std::string base_dir;
};

/// A preset name, a model file path ("*.json", only with `files`), a Hugging Face config object, or an
/// object in the case format's "model" shape. `path` prefixes error fields.
ModelSpec model_from_json(const json& j, const std::string& path = "model", const FileAccess* files = nullptr);
/// A JSON file holding a shardplan model object or a Hugging Face config.json.
ModelSpec model_from_file(const std::string& file, const std::string& field);
/// A preset name, or {"gpu": id | {...}, "gpus", "gpus_per_node", "scale_up_domain", "efficiency": {...}}.
ClusterSpec cluster_from_json(const json& j, const std::string& path = "cluster");
/// A layout; `dp` left out (or null) reads as 0, "not stated".
/// `generation`: the cluster's GPU generation, for framework defaults that differ by GPU; `moe`: whether
/// the model routes to experts, for those that differ for MoE models.
Layout layout_from_json(const json& j, const std::string& path = "layout", const std::string& generation = "",
                        bool moe = false);
/// The one rule for an unstated dp (0): the GPUs the other degrees leave, gpus ÷ (tp·cp·pp); a
/// ConfigError on `field` when they do not divide. A stated dp is kept as it is (check_layout judges it).
/// case_from_json applies it, so a case file, a request body and the CLI derive dp the same way.
void derive_dp(Layout& l, const ClusterSpec& c, const std::string& field);
Efficiency efficiency_from_json(const json& j, Efficiency base, const std::string& path);
Measured measured_from_json(const json& j, const std::string& path = "measured");
/// With `files`, a model may be given as a file path (relative to files->base_dir); without, only as a
/// preset name or an object.
Case case_from_json(const json& j, const std::string& path = "", const FileAccess* files = nullptr);

json to_json(const ModelSpec& m);
json to_json(const ClusterSpec& c);
json to_json(const Layout& l);
json to_json(const Efficiency& e);
/// Every built-in model, GPU (with its value of each constant) and cluster, and the constants table
/// (constants.h: key, C++ field, unit, ranges, fitted, meaning, source): `presets --json`, GET /api/presets.
json presets_json();
json constants_json();

}  // namespace shardplan
