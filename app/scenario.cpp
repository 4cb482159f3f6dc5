#include "scenario.h"

#include <unistd.h>

#include <filesystem>

#include "shardplan/error.h"
#include "shardplan/presets.h"

namespace shardplan::app {

void add_scenario_flags(CLI::App& cmd, ScenarioFlags& f, bool with_degrees, bool with_sizes) {
    cmd.add_option("--case", f.case_file, "A case JSON file (../shared/validation format); flags override its fields");
    cmd.add_option("--model", f.model, "Model preset name, model JSON file or Hugging Face config.json");
    cmd.add_option("--cluster", f.cluster, "Cluster preset name, cluster JSON file or calibrated profile");
    if (with_sizes) cmd.add_option("--gpus", f.gpus, "Number of GPUs");
    if (with_degrees) {
        cmd.add_option("--tp", f.tp, "Tensor-parallel degree");
        cmd.add_option("--cp", f.cp, "Context-parallel degree");
        cmd.add_option("--pp", f.pp, "Pipeline-parallel degree");
        cmd.add_option("--dp", f.dp, "Data-parallel degree (default: gpus / (tp·cp·pp))");
        cmd.add_option("--ep", f.ep, "Expert-parallel degree (MoE)");
        cmd.add_option("--etp", f.etp, "Expert tensor-parallel degree (default: tp)");
        cmd.add_option("--vpp", f.vpp, "Virtual pipeline chunks per rank (interleaved schedule)");
        cmd.add_option("--micro-batch", f.micro_batch, "Sequences per micro-batch");
        cmd.add_option("--zero", f.zero, "ZeRO stage 0-3 (1 = distributed optimizer, 3 = FSDP)");
        cmd.add_option("--recompute", f.recompute, "none | selective | full");
        cmd.add_option("--sequence-parallel", f.sequence_parallel, "true | false (default: on when tp > 1)");
        cmd.add_option("--schedule", f.schedule, "gpipe | 1f1b | interleaved | zb | dualpipe");
        cmd.add_option("--grad-dtype", f.grad_dtype, "bf16 | fp32 (Megatron keeps fp32 main gradients)");
        cmd.add_option("--order", f.order, "Rank order, innermost first (default tp-cp-ep-dp-pp)");
    }
    if (with_sizes) {
        cmd.add_option("--global-batch", f.global_batch, "Sequences per step");
        cmd.add_option("--seq-len", f.seq_len, "Tokens per sequence");
    }
    cmd.add_option("--precision", f.precision, "bf16 | fp16 | fp8 | mxfp8 | nvfp4");
}

ModelSpec model_from_arg(const std::string& arg, const std::string& field) {
    if (has_model_preset(arg)) return preset_model(arg, field);
    if (arg.ends_with(".json")) return model_from_file(arg, field);  // shardplan model or Hugging Face config
    return preset_model(arg, field);                                  // throws the list of presets
}

ClusterSpec cluster_from_arg(const std::string& arg, const std::string& field) {
    if (arg.size() > 5 && arg.ends_with(".json")) return cluster_from_json(read_json_file(arg, field), "cluster");
    return preset_cluster(arg, field);
}

Case resolve_base(const ScenarioFlags& f) {
    ScenarioFlags base;
    base.case_file = f.case_file;
    base.model = f.model;
    base.cluster = f.cluster;
    base.gpus = f.gpus;
    base.global_batch = f.global_batch;
    base.seq_len = f.seq_len;
    base.precision = f.precision;
    base.grad_dtype = f.grad_dtype;
    base.dp = 1;  // degrees are the search's to choose: keep resolve_scenario from deriving them
    Case c = resolve_scenario(base);
    c.layout.dp = 1;
    return c;
}

Case resolve_scenario(const ScenarioFlags& f) {
    Case c;
    const bool from_defaults = f.case_file.empty() && f.model.empty() && f.cluster.empty();
    if (!f.case_file.empty()) {
        const FileAccess files{std::filesystem::path(f.case_file).parent_path().string()};
        c = case_from_json(read_json_file(f.case_file, "--case"), "", &files);
    } else {
        const Scenario s = default_scenario();
        c.model = s.model;
        c.cluster = s.cluster;
        c.layout = from_defaults ? s.layout : Layout{};
        if (!from_defaults) c.layout.dp = 0;  // not stated: derived below
        if (!from_defaults) c.layout.seq_len = s.layout.seq_len;
    }
    if (!f.model.empty()) c.model = model_from_arg(f.model, "--model");
    if (!f.cluster.empty()) c.cluster = cluster_from_arg(f.cluster, "--cluster");
    if (f.gpus) {
        if (*f.gpus <= 0 || *f.gpus > 100'000'000) throw ConfigError("--gpus", "an integer in [1, 100000000]");
        c.cluster.gpus = *f.gpus;
    }
    Layout& l = c.layout;
    const bool tp_given = f.tp.has_value();
    if (f.tp) l.tp = *f.tp;
    if (f.cp) l.cp = *f.cp;
    if (f.pp) l.pp = *f.pp;
    if (f.ep) l.ep = *f.ep;
    if (f.etp) l.etp = *f.etp;
    if (f.vpp) l.vpp = *f.vpp;
    if (f.micro_batch) l.micro_batch = *f.micro_batch;
    if (f.global_batch) l.global_batch = *f.global_batch;
    if (f.seq_len) l.seq_len = *f.seq_len;
    if (f.zero) {
        if (*f.zero < 0 || *f.zero > 3) throw ConfigError("--zero", "0, 1, 2 or 3, got " + std::to_string(*f.zero));
        l.zero = static_cast<int>(*f.zero);
    }
    // dp: as stated (--dp, or the case), else derived by the library's one rule (derive_dp). A flag that
    // changes the other degrees or the GPU count makes a stated dp stale: it is derived again.
    if (f.dp) l.dp = *f.dp;
    else if (f.tp || f.cp || f.pp || f.gpus || !f.cluster.empty()) l.dp = 0;
    if (l.dp == 0) {
        // Each degree is checked where it came from (a flag or the case file) before they multiply.
        struct Degree { const char* flag; const char* field; bool given; int64_t v; };
        for (const Degree d : {Degree{"--tp", "layout.tp", f.tp.has_value(), l.tp}, {"--cp", "layout.cp", f.cp.has_value(), l.cp},
                               {"--pp", "layout.pp", f.pp.has_value(), l.pp}})
            if (d.v <= 0 || d.v > 100'000'000)
                throw ConfigError(d.given ? d.flag : d.field, "an integer in [1, 100000000], got " + std::to_string(d.v));
        derive_dp(l, c.cluster, "--dp");
    }
    if (!f.recompute.empty()) l.recompute = enum_flag<Recompute>(f.recompute, "--recompute");
    if (!f.precision.empty()) l.precision = enum_flag<Precision>(f.precision, "--precision");
    if (!f.grad_dtype.empty()) l.grad_dtype = enum_flag<GradDtype>(f.grad_dtype, "--grad-dtype");
    if (!f.schedule.empty()) l.schedule = enum_flag<Schedule>(f.schedule, "--schedule");
    else if (f.vpp && *f.vpp > 1) l.schedule = Schedule::interleaved;
    else if (f.vpp && *f.vpp == 1 && l.schedule == Schedule::interleaved) l.schedule = Schedule::one_f_one_b;
    if (!f.sequence_parallel.empty()) {
        const std::string& v = f.sequence_parallel;
        if (v == "true" || v == "on" || v == "1") l.sequence_parallel = true;
        else if (v == "false" || v == "off" || v == "0") l.sequence_parallel = false;
        else throw ConfigError("--sequence-parallel", "true or false, got \"" + v + "\"");
    } else if (tp_given) {
        l.sequence_parallel = l.tp > 1;
    }
    if (!f.order.empty()) {
        auto o = parse_order(f.order);
        if (!o) throw ConfigError("--order", "a permutation of tp, cp, ep, dp, pp joined by '-', got \"" + f.order + "\"");
        l.order = *o;
    }
    return c;
}

bool use_color(const std::string& mode) {
    if (mode == "always") return true;
    if (mode == "never") return false;
    if (mode != "auto") throw ConfigError("--color", "auto, always or never, got \"" + mode + "\"");
    return isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
}

SearchSpace search_space_from_flags(const ScenarioFlags& f) {
    SearchSpace sp;
    // Every degree flag pins that dimension; the scenario's own degrees are ignored.
    sp.tp = f.tp;
    sp.cp = f.cp;
    sp.pp = f.pp;
    sp.dp = f.dp;
    sp.ep = f.ep;
    sp.etp = f.etp;
    sp.vpp = f.vpp;
    sp.micro_batch = f.micro_batch;
    if (f.zero) {
        if (*f.zero < 0 || *f.zero > 3) throw ConfigError("--zero", "0, 1, 2 or 3");
        sp.zero = static_cast<int>(*f.zero);
    }
    for (auto [value, name] : {std::pair{f.tp, "--tp"}, {f.cp, "--cp"}, {f.pp, "--pp"}, {f.dp, "--dp"},
                               {f.ep, "--ep"}, {f.etp, "--etp"}, {f.vpp, "--vpp"}, {f.micro_batch, "--micro-batch"}})
        if (value && *value <= 0) throw ConfigError(name, "a positive integer");
    if (!f.recompute.empty()) sp.recompute = enum_flag<Recompute>(f.recompute, "--recompute");
    if (!f.schedule.empty()) sp.schedule = enum_flag<Schedule>(f.schedule, "--schedule");
    if (!f.sequence_parallel.empty()) {
        if (f.sequence_parallel != "true" && f.sequence_parallel != "false")
            throw ConfigError("--sequence-parallel", "true or false");
        sp.sequence_parallel = f.sequence_parallel == "true";
    }
    if (!f.order.empty()) {
        sp.order = parse_order(f.order);
        if (!sp.order) throw ConfigError("--order", "a permutation of tp, cp, ep, dp, pp joined by '-'");
    }
    return sp;
}

int search_threads(int threads) {
    if (threads < 0 || threads > 256) throw ConfigError("--threads", "an integer in [0, 256]");
    return threads;
}

OutputFormat output_format(const std::string& format, bool json) {
    return json ? OutputFormat::as_json : enum_flag<OutputFormat>(format, "--format");
}

void add_format_flags(CLI::App& cmd, std::string& format, bool& json) {
    cmd.add_option("--format", format, "table | json | csv | markdown (default table)");
    cmd.add_flag("--json", json, "Short for --format json (docs/json.md)");
}

}  // namespace shardplan::app
