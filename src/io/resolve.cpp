// Overrides on top of a case, from flags or a request's pins (include/shardplan/resolve.h).
#include "shardplan/resolve.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "shardplan/compute.h"
#include "shardplan/error.h"
#include "shardplan/presets.h"

namespace shardplan {

namespace {

constexpr int64_t kMaxDegree = 100'000'000;

template <typename E>
E named(const std::string& value, const std::string& key, Naming n) {
    if (auto e = parse_enum<E>(value)) return *e;
    throw ConfigError(override_name(key, n), "one of " + enum_choices<E>() + ", got \"" + value + "\"");
}

bool on_off(const std::string& v, const std::string& key, Naming n) {
    if (v == "true" || v == "on" || v == "1") return true;
    if (v == "false" || v == "off" || v == "0") return false;
    throw ConfigError(override_name(key, n), "true or false, got \"" + v + "\"");
}

// A number as typed on the command line ("1.25"); its range is check_layout's (layout.cpp).
double number(const std::string& v, const std::string& key, Naming n) {
    size_t used = 0;
    double x = 0;
    try {
        x = std::stod(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != v.size() || !std::isfinite(x))
        throw ConfigError(override_name(key, n), "a number, got \"" + v + "\"");
    return x;
}

int zero_stage(int64_t z, Naming n) {
    if (z < 0 || z > 3) throw ConfigError(override_name("zero", n), fmt::format("0, 1, 2 or 3, got {}", z));
    return static_cast<int>(z);
}

std::array<Axis, 5> rank_order(const std::string& s, Naming n) {
    auto o = parse_order(s);
    if (!o) throw ConfigError(override_name("order", n), "a permutation of tp, cp, ep, dp, pp joined by '-', got \"" + s + "\"");
    return *o;
}

/// The integer overrides, each with its key, checked to be in [1, 10^8] before anything multiplies them.
struct IntField {
    const char* key;
    std::optional<int64_t> Overrides::*field;
};
constexpr IntField kPositive[] = {{"gpus", &Overrides::gpus}, {"tp", &Overrides::tp}, {"cp", &Overrides::cp},
                                  {"pp", &Overrides::pp}, {"dp", &Overrides::dp}, {"ep", &Overrides::ep},
                                  {"etp", &Overrides::etp}, {"vpp", &Overrides::vpp},
                                  {"micro_batch", &Overrides::micro_batch}, {"recompute_layers", &Overrides::recompute_layers}};

void check_positive(const Overrides& o, Naming n) {
    for (const IntField& f : kPositive)
        if (const auto& v = o.*f.field; v && (*v <= 0 || *v > kMaxDegree))
            throw ConfigError(override_name(f.key, n), fmt::format("an integer in [1, {}], got {}", kMaxDegree, *v));
    // The layout's 0 means "not stated" (one micro-batch a DP rank); a 0 typed is a mistake, not that.
    if (o.global_batch && *o.global_batch <= 0)
        throw ConfigError(override_name("global_batch", n), fmt::format("a positive integer, got {}", *o.global_batch));
}

}  // namespace

std::string override_name(const std::string& key, Naming n) {
    if (n == Naming::pins) return "pins." + key;
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
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

namespace {
json layer_json(const LayerParams& p) {
    return {{"attention", p.attn}, {"mlp", p.mlp}, {"router", p.router}, {"experts", p.experts},
            {"norms_and_biases", p.replicated}, {"total", p.total()}};
}
}  // namespace

json model_report_json(const ModelSpec& m, int64_t seq_len) {
    if (seq_len <= 0 || seq_len > 1'000'000'000) throw ConfigError("seq_len", "a positive integer up to 10^9");
    const int64_t n_moe = moe_layers_in(m, 0, m.layers);
    return {{"name", m.name}, {"params_total", model_params_total(m)}, {"params_active", model_params_active(m)},
            {"layers", {{"dense", m.layers - n_moe}, {"moe", n_moe}}},
            {"per_layer", {{"dense", layer_json(layer_params(m, false))},
                           {"moe", n_moe > 0 ? layer_json(layer_params(m, true)) : json(nullptr)}}},
            {"embedding", embedding_params(m)}, {"head", head_params(m)},
            {"model_flops_per_token", model_flops_per_token(m, seq_len)}, {"seq_len", seq_len}, {"model", to_json(m)}};
}

Case apply_overrides(Case c, const Overrides& o, Naming n) {
    check_positive(o, n);
    if (o.gpus) c.cluster.gpus = *o.gpus;
    Layout& l = c.layout;
    if (o.tp) l.tp = *o.tp;
    if (o.cp) l.cp = *o.cp;
    if (o.pp) l.pp = *o.pp;
    if (o.ep) l.ep = *o.ep;
    if (o.etp) l.etp = *o.etp;
    if (o.vpp) l.vpp = *o.vpp;
    if (o.micro_batch) l.micro_batch = *o.micro_batch;
    if (o.global_batch) l.global_batch = *o.global_batch;
    if (o.seq_len) l.seq_len = *o.seq_len;
    if (o.zero) l.zero = zero_stage(*o.zero, n);
    // dp: as given, else derived by the library's one rule (derive_dp). A change of the other degrees
    // or of the GPU count makes the case's dp stale: it is derived again.
    if (o.dp) l.dp = *o.dp;
    else if (o.tp || o.cp || o.pp || o.gpus) l.dp = 0;
    if (l.dp == 0) {
        // Each degree is named where it came from (an override or the case) before they multiply.
        struct Degree { const char* key; bool given; int64_t v; };
        for (const Degree d : {Degree{"tp", o.tp.has_value(), l.tp}, {"cp", o.cp.has_value(), l.cp},
                               {"pp", o.pp.has_value(), l.pp}})
            if (d.v <= 0 || d.v > kMaxDegree)
                throw ConfigError(d.given ? override_name(d.key, n) : std::string("layout.") + d.key,
                                  fmt::format("an integer in [1, {}], got {}", kMaxDegree, d.v));
        derive_dp(l, c.cluster, override_name("dp", n));
    }
    if (!o.recompute.empty()) l.recompute = named<Recompute>(o.recompute, "recompute", n);
    if (!o.precision.empty()) {
        // A gradient dtype, buffer or accumulation that was the framework's default for the old precision
        // follows the new one (Megatron-LM: fp32 with bf16, 16-bit with fp16; DeepSpeed: its BF16 optimizer
        // with bf16 only), as do the MoE recipe's graph, expert and dispatch settings (Megatron-Bridge's
        // MXFP8 one); one set otherwise stays.
        const std::string& gen = c.cluster.gpu.generation;
        const bool moe = c.model.moe.has_value();
        const FrameworkDefaults was = framework_defaults(l.framework, gen, l.precision, moe);
        l.precision = named<Precision>(o.precision, "precision", n);
        const FrameworkDefaults now = framework_defaults(l.framework, gen, l.precision, moe);
        if (l.grad_dtype == was.grad_dtype) l.grad_dtype = now.grad_dtype;
        if (l.grad_buckets == was.grad_buckets) l.grad_buckets = now.grad_buckets;
        if (l.grad_accumulation == was.grad_accumulation) l.grad_accumulation = now.grad_accumulation;
        if (l.cuda_graphs == was.cuda_graphs) l.cuda_graphs = now.cuda_graphs;
        if (l.expert_gemms == was.expert_gemms) l.expert_gemms = now.expert_gemms;
        if (l.moe_dispatcher == was.moe_dispatcher) l.moe_dispatcher = now.moe_dispatcher;
        if (l.ep_comm_overlap == was.ep_comm_overlap) l.ep_comm_overlap = now.ep_comm_overlap;
        if (l.fp8_params == was.fp8_params) l.fp8_params = now.fp8_params;
        if (l.fp32_shards == was.fp32_shards) l.fp32_shards = now.fp32_shards;
        if (l.tp_comm_overlap == was.tp_comm_overlap) l.tp_comm_overlap = now.tp_comm_overlap;
    }
    if (!o.grad_dtype.empty()) l.grad_dtype = named<GradDtype>(o.grad_dtype, "grad_dtype", n);
    if (!o.schedule.empty()) l.schedule = named<Schedule>(o.schedule, "schedule", n);
    else if (o.vpp && *o.vpp > 1) l.schedule = Schedule::interleaved;
    else if (o.vpp && *o.vpp == 1 && l.schedule == Schedule::interleaved) l.schedule = Schedule::one_f_one_b;
    if (!o.sequence_parallel.empty()) l.sequence_parallel = on_off(o.sequence_parallel, "sequence_parallel", n);
    else if (o.tp) l.sequence_parallel = l.tp > 1;
    if (!o.order.empty()) l.order = rank_order(o.order, n);
    if (!o.recompute_modules.empty()) {
        if (o.recompute.empty()) l.recompute = Recompute::selective;
        if (l.recompute != Recompute::selective)
            throw ConfigError(override_name("recompute_modules", n),
                              fmt::format("only with recompute selective, got recompute {}", enum_name(l.recompute)));
        l.recompute_modules = 0;
        std::string list = o.recompute_modules;
        for (size_t start = 0; start <= list.size();) {
            const size_t comma = std::min(list.find(',', start), list.size());
            l.recompute_modules |= module_bit(named<RecomputeModule>(list.substr(start, comma - start), "recompute_modules", n));
            start = comma + 1;
        }
    } else if (!o.recompute.empty() && l.recompute != Recompute::selective) {
        l.recompute_modules = 0;  // a case's modules do not outlive its selective recomputation
    }
    if (!o.recompute.empty() && l.recompute != Recompute::full) {  // a case's N does not outlive full
        l.recompute_method = RecomputeMethod::uniform;
        l.recompute_layers = 1;
    }
    if (!o.recompute_method.empty() || o.recompute_layers) {
        const char* key = o.recompute_layers ? "recompute_layers" : "recompute_method";
        if (l.recompute != Recompute::full)
            throw ConfigError(override_name(key, n), fmt::format("only with recompute full, got recompute {}", enum_name(l.recompute)));
        if (!o.recompute_method.empty()) l.recompute_method = named<RecomputeMethod>(o.recompute_method, "recompute_method", n);
        if (o.recompute_layers) l.recompute_layers = *o.recompute_layers;
    }
    if (!o.framework.empty()) {
        if (o.framework.size() > 200) throw ConfigError(override_name("framework", n), "a framework name of at most 200 characters");
        l.framework = o.framework;
        const GradDtype given = l.grad_dtype;  // --grad-dtype, applied above, stays
        apply_framework_defaults(framework_defaults(l.framework, c.cluster.gpu.generation, l.precision, c.model.moe.has_value()),
                                 l);
        if (!o.grad_dtype.empty()) l.grad_dtype = given;
    }
    if (!o.moe_dispatcher.empty()) l.moe_dispatcher = named<Dispatcher>(o.moe_dispatcher, "moe_dispatcher", n);
    if (!o.expert_gemms.empty()) l.expert_gemms = named<ExpertGemms>(o.expert_gemms, "expert_gemms", n);
    if (!o.zero3_comm.empty()) l.zero3_comm = named<Zero3Comm>(o.zero3_comm, "zero3_comm", n);
    if (!o.cuda_graphs.empty()) l.cuda_graphs = named<CudaGraphs>(o.cuda_graphs, "cuda_graphs", n);
    if (!o.pipeline_pacing.empty()) l.pipeline_pacing = named<PipelinePacing>(o.pipeline_pacing, "pipeline_pacing", n);
    if (!o.pipeline_sends.empty()) l.pipeline_sends = named<PipelineSends>(o.pipeline_sends, "pipeline_sends", n);
    if (!o.pipeline_scatter_gather.empty())
        l.pipeline_scatter_gather = on_off(o.pipeline_scatter_gather, "pipeline_scatter_gather", n);
    if (!o.attention_kernel.empty()) l.attention_kernel = named<AttentionKernel>(o.attention_kernel, "attention_kernel", n);
    if (!o.kernels.empty()) l.kernels = named<Kernels>(o.kernels, "kernels", n);
    if (!o.stage_split.empty()) l.stage_split = named<StageSplit>(o.stage_split, "stage_split", n);
    if (!o.grad_buckets.empty()) l.grad_buckets = named<GradBuckets>(o.grad_buckets, "grad_buckets", n);
    if (!o.grad_accumulation.empty())
        l.grad_accumulation = named<GradAccumulation>(o.grad_accumulation, "grad_accumulation", n);
    if (!o.allocator.empty()) l.allocator = named<Allocator>(o.allocator, "allocator", n);
    if (!o.cross_entropy.empty()) l.cross_entropy = named<CrossEntropy>(o.cross_entropy, "cross_entropy", n);
    if (!o.dropout.empty()) l.dropout = on_off(o.dropout, "dropout", n);
    if (!o.moe_imbalance.empty()) l.moe_imbalance = number(o.moe_imbalance, "moe_imbalance", n);
    if (!o.moe_capacity_factor.empty()) l.moe_capacity_factor = number(o.moe_capacity_factor, "moe_capacity_factor", n);
    if (!o.tp_recompute_allgather.empty())
        l.tp_recompute_allgather = on_off(o.tp_recompute_allgather, "tp_recompute_allgather", n);
    // Overlap asked for where Megatron cannot run it is refused with its reason (layout.h).
    if (!o.tp_comm_overlap.empty()) {
        l.tp_comm_overlap = on_off(o.tp_comm_overlap, "tp_comm_overlap", n);
        if (const auto why = tp_overlap_refusal(l)) throw ConfigError(override_name("tp_comm_overlap", n), *why);
    }
    if (!o.dp_comm_overlap.empty()) l.dp_comm_overlap = on_off(o.dp_comm_overlap, "dp_comm_overlap", n);
    if (!o.fp8_params.empty()) l.fp8_params = on_off(o.fp8_params, "fp8_params", n);
    if (!o.fp32_shards.empty()) l.fp32_shards = on_off(o.fp32_shards, "fp32_shards", n);
    if (!o.ep_comm_overlap.empty()) {
        l.ep_comm_overlap = on_off(o.ep_comm_overlap, "ep_comm_overlap", n);
        if (const auto why = ep_overlap_refusal(l)) throw ConfigError(override_name("ep_comm_overlap", n), *why);
    }
    // An overlap the flags did not ask for that the layout as it now stands cannot run (a framework's
    // default, or the case's before --sequence-parallel off or --vpp 1) is off, as layout_from_json has it.
    clear_unrunnable_overlaps(l);
    return c;
}

SearchSpace search_space(const Overrides& o, Naming n) {
    check_positive(o, n);
    SearchSpace sp;
    sp.tp = o.tp;
    sp.cp = o.cp;
    sp.pp = o.pp;
    sp.dp = o.dp;
    sp.ep = o.ep;
    sp.etp = o.etp;
    sp.vpp = o.vpp;
    sp.micro_batch = o.micro_batch;
    if (o.zero) sp.zero = zero_stage(*o.zero, n);
    if (!o.recompute.empty()) sp.recompute = named<Recompute>(o.recompute, "recompute", n);
    if (!o.recompute_modules.empty()) {  // naming what selective replays pins recompute to selective
        if (sp.recompute && *sp.recompute != Recompute::selective)
            throw ConfigError(override_name("recompute_modules", n),
                              fmt::format("only with recompute selective, got recompute {}", enum_name(*sp.recompute)));
        sp.recompute = Recompute::selective;
    }
    if (!o.schedule.empty()) sp.schedule = named<Schedule>(o.schedule, "schedule", n);
    if (!o.sequence_parallel.empty()) sp.sequence_parallel = on_off(o.sequence_parallel, "sequence_parallel", n);
    if (!o.order.empty()) sp.order = rank_order(o.order, n);
    sp.no_crossing = o.no_crossing.value_or(false);
    if (o.headroom) {
        if (!(*o.headroom >= 0 && *o.headroom <= 1))
            throw ConfigError(override_name("headroom", n),
                              fmt::format("a share in [0, 1] of the memory a layout needs, got {}", *o.headroom));
        sp.headroom = *o.headroom;
    }
    return sp;
}

void check_case_keys(const json& j, const std::string& what, std::initializer_list<const char*> extra) {
    static constexpr const char* kCaseFields[] = {"id",     "source",   "source_location", "model",   "cluster",
                                                  "layout", "measured", "derived",         "quality", "quality_note"};
    if (!j.is_object()) return;  // case_from_json names that
    auto among = [](const std::string& k, auto begin, auto end) {
        return std::find_if(begin, end, [&](const char* f) { return k == f; }) != end;
    };
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        if (among(k, std::begin(kCaseFields), std::end(kCaseFields)) || among(k, extra.begin(), extra.end())) continue;
        std::string known = "model, cluster, layout";
        for (const char* e : extra) known += std::string(", ") + e;
        throw ConfigError(k, "a known field of " + what + " (" + known + "); this one is unknown");
    }
}

void check_pins(const SearchSpace& sp, const ModelSpec& m, const ClusterSpec& c, Naming n) {
    const int64_t gpus = c.gpus;
    if (!m.moe) {
        if (sp.ep && *sp.ep != 1)
            throw ConfigError(override_name("ep", n), fmt::format("1 for a dense model, got {}", *sp.ep));
        if (sp.etp)
            throw ConfigError(override_name("etp", n), fmt::format("no expert TP for a dense model (it has no experts), got {}", *sp.etp));
    } else if (sp.ep && m.moe->experts % *sp.ep != 0) {
        throw ConfigError(override_name("ep", n), fmt::format("a divisor of experts ({}), got {}", m.moe->experts, *sp.ep));
    }
    int64_t product = 1;
    std::string named;
    for (const auto& [key, pin] : {std::pair<const char*, const std::optional<int64_t>&>{"tp", sp.tp}, {"cp", sp.cp},
                                   {"pp", sp.pp}, {"dp", sp.dp}}) {
        if (!pin) continue;
        if (gpus % *pin != 0)
            throw ConfigError(override_name(key, n), fmt::format("a divisor of the GPU count ({}), got {}", gpus, *pin));
        product *= *pin;  // each divides gpus (≤ 10^8), so the product of those seen so far stays small
        named += (named.empty() ? "" : "·") + std::string(key);
        if (gpus % product != 0)
            throw ConfigError(override_name(key, n), fmt::format("pinned degrees whose product divides the GPU count "
                                                                 "({}), got {} = {}", gpus, named, product));
    }
    if (sp.tp && sp.cp && sp.pp && sp.dp && product != gpus)
        throw ConfigError(override_name("dp", n), fmt::format("tp·cp·pp·dp = the GPU count ({}), got {}", gpus, product));
    if (sp.tp && m.heads % *sp.tp != 0)
        throw ConfigError(override_name("tp", n), fmt::format("a divisor of heads ({}), got {}", m.heads, *sp.tp));
    if (sp.pp && *sp.pp > m.layers + 2)
        throw ConfigError(override_name("pp", n), fmt::format("at most layers + 2 ({}) stages, got {}", m.layers + 2, *sp.pp));
}

Overrides overrides_from_json(const json& pins, const std::string& field) {
    if (!pins.is_object()) throw ConfigError(field, "an object of pinned dimensions");
    Overrides o;
    static const char* const known = "tp, cp, pp, dp, ep, etp, vpp, micro_batch, zero, recompute, schedule, "
                                     "sequence_parallel, order, no_crossing, headroom";
    for (auto it = pins.begin(); it != pins.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        const std::string at = field + "." + k;
        if (v.is_null()) continue;
        const auto integer = [&]() {
            if (!v.is_number_integer()) throw ConfigError(at, "an integer");
            return v.get<int64_t>();
        };
        const auto text = [&]() {
            if (!v.is_string()) throw ConfigError(at, "a string");
            return v.get<std::string>();
        };
        const auto boolean = [&]() {
            if (!v.is_boolean()) throw ConfigError(at, "true or false");
            return v.get<bool>();
        };
        if (k == "zero") { o.zero = integer(); continue; }
        if (k == "recompute") { o.recompute = text(); continue; }
        if (k == "schedule") { o.schedule = text(); continue; }
        if (k == "order") { o.order = text(); continue; }
        if (k == "sequence_parallel") { o.sequence_parallel = boolean() ? "true" : "false"; continue; }
        if (k == "no_crossing") { o.no_crossing = boolean(); continue; }
        if (k == "headroom") {
            if (!v.is_number()) throw ConfigError(at, "a number in [0, 1]");
            o.headroom = v.get<double>();
            continue;
        }
        const IntField* f = std::find_if(std::begin(kPositive), std::end(kPositive),
                                         [&](const IntField& x) { return k == x.key && k != "gpus" && k != "recompute_layers"; });
        if (f == std::end(kPositive)) throw ConfigError(at, std::string("a known dimension (") + known + ")");
        o.*(f->field) = integer();
    }
    return o;
}

}  // namespace shardplan
