// shardplan: the command-line adapter over the planner library.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "commands.h"
#include "shardplan/error.h"

namespace {

const shardplan::app::Command kCommands[] = {
    {"plan", "Memory, communication and time of one layout (the default scenario without flags)",
     shardplan::app::setup_plan},
    {"search", "Find the fastest layouts that fit, and count why the others were rejected", shardplan::app::setup_search},
    {"sweep", "The best layout at each GPU count, sequence length or global batch; CSV and SVG", shardplan::app::setup_sweep},
    {"export", "The layout as Megatron-LM arguments, a torchtitan TOML or a DeepSpeed JSON", shardplan::app::setup_export},
    {"import", "A Megatron-LM launch script, torchtitan TOML or DeepSpeed JSON read back as a case (JSON)",
     shardplan::app::setup_import},
    {"model", "Parameter counts of a model preset, model file or Hugging Face config.json", shardplan::app::setup_model},
    {"trace", "One simulated step as a Chrome trace (Perfetto, chrome://tracing)", shardplan::app::setup_trace},
    {"serve", "The web planner and its JSON API on http://127.0.0.1:8080/", shardplan::app::setup_serve},
    {"validate", "Predict published runs and compare with what they measured", shardplan::app::setup_validate},
    {"calibrate", "Fit the efficiency constants to your measured runs; write a cluster profile",
     shardplan::app::setup_calibrate},
    {"presets", "List the built-in models, GPUs and clusters", shardplan::app::setup_presets},
};

// A value CLI11 could not convert to its option's type, as "--gpus: expected an integer, got "x"".
template <size_t N>
std::string conversion_message(const CLI::App& app, CLI::App* const (&subs)[N], const std::string& what) {
    const std::string prefix = "Could not convert: ";
    const auto eq = what.find(" = ");
    if (what.rfind(prefix, 0) != 0 || eq == std::string::npos) return what;
    const std::string name = what.substr(prefix.size(), eq - prefix.size());
    const std::string value = what.substr(eq + 3);
    const CLI::Option* opt = nullptr;
    for (const CLI::App* sub : subs)
        if (sub->parsed() && !opt) opt = sub->get_option_no_throw(name);
    if (!opt) opt = app.get_option_no_throw(name);
    const std::string type = opt ? opt->get_type_name() : "";
    const char* expected = type == "UINT" || type == "INT" ? "an integer"
                           : type == "FLOAT"                ? "a number"
                                                            : "a value of its type";
    return name + ": expected " + expected + ", got \"" + value + "\"";
}

}  // namespace

namespace shardplan::app {

int run_cli(int argc, const char* const* argv, std::FILE* err) {
    CLI::App app{"shardplan: plan LLM training layouts across GPUs (TP, CP, PP, DP, EP)", "shardplan"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "shardplan 0.1.0");
    shardplan::app::Run runs[std::size(kCommands)];
    CLI::App* subs[std::size(kCommands)];
    for (size_t i = 0; i < std::size(kCommands); ++i) {
        subs[i] = app.add_subcommand(kCommands[i].name, kCommands[i].help);
        runs[i] = kCommands[i].setup(*subs[i]);
    }
    // A missing or unknown command: name the ones there are (CLI11 says only "A subcommand is required").
    const std::string first = argc > 1 ? argv[1] : "";
    if (first.empty() || first[0] != '-') {
        bool known = false;
        std::string names;
        for (const auto& c : kCommands) {
            known = known || first == c.name;
            names += names.empty() ? c.name : std::string(", ") + c.name;
        }
        if (!known) {
            std::fprintf(err, "shardplan: command: expected one of %s%s\n", names.c_str(),
                         first.empty() ? "" : (", got \"" + shardplan::printable(first, 80) + "\"").c_str());
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e, std::cout, std::cerr);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e, std::cout, std::cerr);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e, std::cout, std::cerr);
    } catch (const CLI::ConversionError& e) {
        // CLI11 says "Could not convert: --gpus = x"; name the option and what it takes instead.
        std::fprintf(err, "shardplan: %s\n", shardplan::printable(conversion_message(app, subs, e.what()), 400).c_str());
        return 2;
    } catch (const CLI::ParseError& e) {
        // CLI11 quotes what it was given: one short printable line, whatever that was.
        std::fprintf(err, "shardplan: %s\n", shardplan::printable(e.what(), 400).c_str());
        return 2;
    }
    try {
        for (size_t i = 0; i < std::size(kCommands); ++i)
            if (subs[i]->parsed()) return runs[i]();
    } catch (const shardplan::ConfigError& e) {
        std::fprintf(err, "shardplan: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(err, "shardplan: internal error: %s\n", shardplan::printable(e.what(), 400).c_str());
        return 1;
    }
    return 0;
}

}  // namespace shardplan::app

#ifndef SHARDPLAN_NO_MAIN
int main(int argc, char** argv) { return shardplan::app::run_cli(argc, argv, stderr); }
#endif
