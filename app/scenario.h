/// The flags every planning command shares (--case, --model, --cluster, degrees, training settings),
/// and how they resolve into one Case: the case file (or the built-in default scenario) first, then
/// each flag given on the command line over it. dp is re-derived from gpus / (tp·cp·pp) unless --dp
/// is given. Throws ConfigError naming the flag for anything it cannot read.
#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "shardplan/io.h"

namespace shardplan::app {

struct ScenarioFlags {
    std::string case_file, model, cluster, recompute, precision, schedule, grad_dtype, order, sequence_parallel;
    std::optional<int64_t> gpus, tp, cp, pp, dp, ep, etp, vpp, micro_batch, global_batch, seq_len, zero;
};

/// Registers the shared flags on a subcommand. `with_degrees` = false for commands that choose them.
void add_scenario_flags(CLI::App& cmd, ScenarioFlags& f, bool with_degrees = true);

Case resolve_scenario(const ScenarioFlags& f);
/// Model, cluster and training settings only (seq_len, global batch, precision, grad dtype): what a
/// search starts from. Degree flags are left for the caller to read as pins.
Case resolve_base(const ScenarioFlags& f);

/// Reads a model given as a preset name or a JSON file path.
ModelSpec model_from_arg(const std::string& arg, const std::string& field);
/// Reads a cluster given as a preset name or a JSON file path (a cluster object or calibrated profile).
ClusterSpec cluster_from_arg(const std::string& arg, const std::string& field);

/// --color auto|always|never → whether to emit ANSI colours on stdout.
bool use_color(const std::string& mode);

}  // namespace shardplan::app
