/// The flags every planning command shares (--case, --model, --cluster, degrees, training settings),
/// and how they resolve into one Case: the case file (or the built-in default scenario) first, then
/// each flag given on the command line over it. dp is re-derived from gpus / (tp·cp·pp) unless --dp
/// is given. Throws ConfigError naming the flag for anything it cannot read.
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "shardplan/enums.h"
#include "shardplan/error.h"
#include "shardplan/export.h"
#include "shardplan/io.h"
#include "shardplan/resolve.h"
#include "shardplan/search.h"
#include "shardplan/table.h"

namespace shardplan::app {

/// The flags: where the case comes from, and the Overrides (resolve.h) the library applies on top of it.
struct ScenarioFlags : Overrides {
    std::string case_file, model, cluster;
};

/// A flag naming one value of an enum (--schedule zb, --format json, --export megatron): the value, or a
/// ConfigError on the flag listing the choices and what was given.
template <typename E>
E enum_flag(const std::string& value, const char* flag) {
    if (auto e = parse_enum<E>(value)) return *e;
    throw ConfigError(flag, "one of " + enum_choices<E>() + ", got \"" + value + "\"");
}

/// Registers the shared flags on a subcommand. `with_degrees` = false for commands that choose them;
/// `with_sizes` = false for sweep, which takes --gpus, --seq-len and --global-batch as lists.
void add_scenario_flags(CLI::App& cmd, ScenarioFlags& f, bool with_degrees = true, bool with_sizes = true);

Case resolve_scenario(const ScenarioFlags& f);
/// Model, cluster and training settings only (seq_len, global batch, precision, grad dtype): what a
/// search starts from. Degree flags are left for the caller to read as pins.
Case resolve_base(const ScenarioFlags& f);

/// The flags with `framework` set to `f`'s name (export.h), for an export of a plan that names none: its
/// defaults fill what the flags and the case leave unset, so the configuration runs what is planned.
ScenarioFlags for_framework(ScenarioFlags flags, Framework f);
/// The stderr line an export prints when it planned the layout as `f` runs it: "# planned as Megatron-LM
/// runs it (--framework Megatron-LM): 966 tokens/s per GPU, 61.2 GB per GPU".
std::string planned_as(const Case& c, Framework f);

/// The global batch a search or sweep header names: "global batch 512", or, when none is set, what each
/// layout is planned with instead, one micro-batch per replica (global_batch(), layout.h).
std::string global_batch_text(const Layout& l);

/// Every degree and setting flag given pins that dimension of a search; the case's own degrees do not.
SearchSpace search_space_from_flags(const ScenarioFlags& f);

/// --color auto|always|never → whether to emit ANSI colours on stdout.
bool use_color(const std::string& mode);

/// --format table|json|csv|markdown, with --json as the short form of --format json.
OutputFormat output_format(const std::string& format, bool json);
/// Registers --format and --json on a command.
void add_format_flags(CLI::App& cmd, std::string& format, bool& json);
/// --threads of the search commands, checked: 0 (all cores) to 256.
int search_threads(int threads);

}  // namespace shardplan::app
