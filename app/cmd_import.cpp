// `shardplan import`: a Megatron-LM launch script, torchtitan TOML or DeepSpeed JSON read back into the
// case it runs, written as JSON to stdout (`... | shardplan plan --case -`).
#include <iostream>
#include <memory>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/import.h"
#include "shardplan/presets.h"

namespace shardplan::app {

Run setup_import(CLI::App& cmd) {
    struct Opts {
        std::string format, file, model, cluster;
        std::optional<int64_t> gpus, seq_len;
    };
    auto o = std::make_shared<Opts>();
    cmd.add_option("file", o->file, "The launch script or argument list, TOML job file or JSON config (- for stdin)")
        ->required();
    cmd.add_option("--format", o->format, "megatron | torchtitan | deepspeed")->required();
    cmd.add_option("--model", o->model, "Model preset, model JSON or Hugging Face config.json (default: the file's own)");
    cmd.add_option("--cluster", o->cluster, "Cluster preset or cluster JSON (default: the built-in default's)");
    cmd.add_option("--gpus", o->gpus, "Number of GPUs (default: torchrun's --nproc-per-node × --nnodes, or the degrees')");
    cmd.add_option("--seq-len", o->seq_len, "Tokens per sequence (a DeepSpeed config has none)");
    return [o]() {
        const Framework f = enum_flag<Framework>(o->format, "--format");
        ImportContext ctx;
        if (!o->model.empty()) ctx.model = model_from_arg(o->model, "--model");
        ctx.cluster = o->cluster.empty() ? default_scenario().cluster : cluster_from_arg(o->cluster, "--cluster");
        if (o->gpus) {
            if (*o->gpus < 1 || *o->gpus > 100'000'000) throw ConfigError("--gpus", "an integer in [1, 100000000]");
            ctx.gpus = *o->gpus;
        }
        if (o->seq_len) {
            if (*o->seq_len < 1 || *o->seq_len > 100'000'000) throw ConfigError("--seq-len", "an integer in [1, 100000000]");
            ctx.seq_len = *o->seq_len;
        }
        const std::string kind = f == Framework::megatron ? "argument" : f == Framework::torchtitan ? "TOML" : "JSON";
        const std::string text = read_text_file(o->file, o->file == "-" ? "stdin" : o->file, kind);
        const Imported im = import_launch(f, text, ctx, o->file == "-" ? "stdin" : o->file);
        for (const std::string& n : im.notes) std::cerr << "# " << n << "\n";
        if (im.ignored > 0)
            std::cerr << "# " << im.ignored << " other " << (f == Framework::megatron ? "arguments" : "keys")
                      << " do not change the plan and were passed over\n";
        std::cout << imported_to_json(im, std::string(enum_name(f)) + " " + o->file).dump(2) << "\n";
        return 0;
    };
}

}  // namespace shardplan::app
