/// Launch configurations read back: Megatron-LM arguments (a launch script or a plain argument list),
/// a torchtitan TOML job file or a DeepSpeed JSON config → the case it runs (model, cluster, layout).
/// It answers "what will my launch script do?" with the same plan as any other case, and makes
/// export → import a round trip (docs/export.md).
///
///   ImportContext ctx;  ctx.cluster = preset_cluster("dgx-h100");  ctx.model = preset_model("llama3-70b");
///   Case c = import_launch(Framework::megatron, script_text, ctx, "FILE");
///
/// Which arguments and keys each framework defines (name, type, choices) is one table per framework,
/// read by the importer and by the tests that check every exported flag against it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shardplan/export.h"
#include "shardplan/io.h"

namespace shardplan {

/// How a framework's own parser takes a value: a bare switch, an integer, a number, one word (from
/// `choices` when given, separated by '|'), or a list of words (argparse nargs='*'). For TOML and JSON
/// keys: flag = boolean, text = string, list = array of strings.
enum class ArgKind { flag, integer, number, text, list };

struct LaunchKey {
    std::string_view name;     // "--tensor-model-parallel-size", "parallelism.tensor_parallel_degree"
    ArgKind kind;
    std::string_view choices;  // "full|selective", empty = any
};

/// The arguments and keys shardplan writes or reads, as each framework defines them: Megatron-LM
/// megatron/training/arguments.py, torchtitan torchtitan/config/job_config.py, DeepSpeed's config JSON
/// (docs/config-json.md). Sorted by name.
std::span<const LaunchKey> launch_keys(Framework f);
const LaunchKey* find_launch_key(Framework f, std::string_view name);

/// What the configuration does not say and the caller supplies.
struct ImportContext {
    std::optional<ModelSpec> model;   // --model; else the configuration's own (Megatron flags, torchtitan name)
    ClusterSpec cluster;              // the GPUs it runs on
    std::optional<int64_t> gpus;      // else torchrun's --nproc-per-node × --nnodes, or what the degrees imply
    std::optional<int64_t> seq_len;   // DeepSpeed's config has none
};

/// Reads `text` (the file's contents; `field` names it in errors). Throws ConfigError naming the argument
/// or key and what was expected. Framework defaults the configuration relies on are written into the
/// case's `derived` notes (Case::assumed stays empty: they are the framework's, not guesses).
struct Imported {
    Case c;
    std::vector<std::string> notes;  // "layout.dropout: Megatron's default --hidden-dropout 0.1"
    int ignored = 0;                 // arguments or keys shardplan does not model
};
Imported import_launch(Framework f, const std::string& text, const ImportContext& ctx, const std::string& field);

/// The case as JSON for `plan --case` (model and cluster by preset name where they are presets).
json imported_to_json(const Imported& im, const std::string& source);

}  // namespace shardplan
