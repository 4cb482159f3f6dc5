/// The subcommand table: each command registers its flags on a CLI11 subcommand and returns a
/// function that runs it. main() dispatches, maps ConfigError to exit code 2 and one line on stderr.
#pragma once
#include <cstdio>
#include <functional>

#include <CLI/CLI.hpp>

namespace shardplan::app {

using Run = std::function<int()>;

struct Command {
    const char* name;
    const char* help;
    Run (*setup)(CLI::App& cmd);
};

Run setup_plan(CLI::App& cmd);
Run setup_presets(CLI::App& cmd);
Run setup_validate(CLI::App& cmd);
Run setup_calibrate(CLI::App& cmd);
Run setup_search(CLI::App& cmd);
Run setup_model(CLI::App& cmd);
Run setup_export(CLI::App& cmd);
Run setup_import(CLI::App& cmd);
Run setup_sweep(CLI::App& cmd);
Run setup_serve(CLI::App& cmd);
Run setup_trace(CLI::App& cmd);

/// The whole command line: parse, dispatch, and map ConfigError to exit code 2 with one line on `err`
/// (main() passes stderr; the CLI fuzzer passes a sink).
int run_cli(int argc, const char* const* argv, std::FILE* err);

}  // namespace shardplan::app
