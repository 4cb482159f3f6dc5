// The field table and the JSON report (docs/json.md).
#include "shardplan/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "shardplan/collectives.h"
#include "shardplan/comm.h"
#include "shardplan/error.h"
#include "shardplan/io.h"
#include "shardplan/ranges.h"
#include "shardplan/topology.h"

namespace shardplan {

namespace {

constexpr Field kFields[] = {
    {"micro_batches", "micro-batches per step", Unit::count, [](const Plan& p) { return double(p.micro_batches); }},
    {"memory.weights_bytes", "weights", Unit::bytes, [](const Plan& p) { return p.memory.weights_bytes; }},
    {"memory.grads_bytes", "gradients", Unit::bytes, [](const Plan& p) { return p.memory.grads_bytes; }},
    {"memory.optimizer_bytes", "optimizer", Unit::bytes, [](const Plan& p) { return p.memory.optimizer_bytes; }},
    {"memory.activations_bytes", "activations", Unit::bytes, [](const Plan& p) { return p.memory.activations_bytes; }},
    {"memory.other_bytes", "buffers", Unit::bytes, [](const Plan& p) { return p.memory.other_bytes; }},
    {"memory.allocated_bytes", "allocated", Unit::bytes, [](const Plan& p) { return p.memory.allocated_bytes(); }},
    {"memory.allocator_bytes", "allocator cache", Unit::bytes, [](const Plan& p) { return p.memory.allocator_bytes; }},
    {"memory.reserved_bytes", "reserved", Unit::bytes, [](const Plan& p) { return p.memory.reserved_bytes(); }},
    {"memory.runtime_bytes", "CUDA context, NCCL", Unit::bytes, [](const Plan& p) { return p.memory.runtime_bytes; }},
    {"memory.device_bytes", "device", Unit::bytes, [](const Plan& p) { return p.memory.device_bytes(); }},
    {"memory.total_bytes", "total", Unit::bytes, [](const Plan& p) { return p.memory.total_bytes(); }},
    {"memory.capacity_bytes", "usable HBM", Unit::bytes, [](const Plan& p) { return p.capacity_bytes; }},
    {"memory.fits", "fits", Unit::flag, [](const Plan& p) { return p.memory_fits ? 1.0 : 0.0; }},
    {"memory.short_bytes", "short by", Unit::bytes,
     [](const Plan& p) { return p.short_bytes(); }},
    {"memory.needed_bytes", "needed (allocated + runtime)", Unit::bytes, [](const Plan& p) { return p.needed_bytes; }},
    {"memory.margin_bytes", "to spare", Unit::bytes, [](const Plan& p) { return p.margin_bytes(); }},
    {"memory.worst_stage", "worst stage", Unit::count, [](const Plan& p) { return double(p.worst_memory_stage); }},
    {"time.step_s", "step", Unit::seconds, [](const Plan& p) { return p.time.step_s; }},
    {"time.compute_s", "compute", Unit::seconds, [](const Plan& p) { return p.time.compute_s; }},
    {"time.recompute_s", "recompute", Unit::seconds, [](const Plan& p) { return p.time.recompute_s; }},
    {"time.exposed_comm_s", "exposed communication", Unit::seconds, [](const Plan& p) { return p.time.exposed_comm_s; }},
    {"time.bubble_s", "pipeline bubble", Unit::seconds, [](const Plan& p) { return p.time.bubble_s; }},
    {"time.optimizer_s", "optimizer step", Unit::seconds, [](const Plan& p) { return p.time.optimizer_s; }},
    {"time.critical_stage", "critical stage", Unit::count, [](const Plan& p) { return double(p.critical_stage); }},
    {"time.pipeline_simulated", "pipeline simulated", Unit::flag,
     [](const Plan& p) { return p.time.pipeline_simulated ? 1.0 : 0.0; }},
    {"throughput.tokens_per_s", "tokens/s (cluster)", Unit::tokens_per_s, [](const Plan& p) { return p.throughput.tokens_per_s; }},
    {"throughput.tokens_per_s_per_gpu", "tokens/s per GPU", Unit::tokens_per_s,
     [](const Plan& p) { return p.throughput.tokens_per_s_per_gpu; }},
    {"throughput.mfu", "MFU", Unit::fraction, [](const Plan& p) { return p.throughput.mfu; }},
    {"throughput.hfu", "HFU", Unit::fraction, [](const Plan& p) { return p.throughput.hfu; }},
    {"throughput.peak_flops", "peak used for MFU", Unit::flops_per_s, [](const Plan& p) { return p.throughput.peak_flops; }},
    {"throughput.model_flops_per_token", "model FLOPs per token", Unit::flops,
     [](const Plan& p) { return p.throughput.model_flops_per_token; }},
    {"throughput.hardware_flops_per_token", "hardware FLOPs per token", Unit::flops,
     [](const Plan& p) { return p.throughput.hardware_flops_per_token; }},
};

void put(nlohmann::json& root, const char* dotted, nlohmann::json value) {
    nlohmann::json* node = &root;
    std::string key(dotted);
    size_t pos;
    while ((pos = key.find('.')) != std::string::npos) {
        node = &(*node)[key.substr(0, pos)];
        key = key.substr(pos + 1);
    }
    (*node)[key] = std::move(value);
}

nlohmann::json memory_json(const MemoryBreakdown& m) {
    return {{"weights_bytes", m.weights_bytes}, {"grads_bytes", m.grads_bytes}, {"optimizer_bytes", m.optimizer_bytes},
            {"activations_bytes", m.activations_bytes}, {"other_bytes", m.other_bytes},
            {"allocator_bytes", m.allocator_bytes}, {"runtime_bytes", m.runtime_bytes},
            {"allocated_bytes", m.allocated_bytes()}, {"reserved_bytes", m.reserved_bytes()},
            {"device_bytes", m.device_bytes()}, {"total_bytes", m.total_bytes()}, {"peak", enum_name(m.peak)}};
}

}  // namespace

std::span<const Field> plan_fields() { return kFields; }

std::string format_value(double v, Unit u) {
    switch (u) {
        case Unit::bytes: {
            const double a = std::fabs(v);
            if (a >= 1e12) return fmt::format("{:.2f} TB", v / 1e12);
            if (a >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
            if (a >= 1e6) return fmt::format("{:.2f} MB", v / 1e6);
            if (a >= 1e3) return fmt::format("{:.2f} kB", v / 1e3);
            return fmt::format("{:.0f} B", v);
        }
        case Unit::seconds: {
            const double a = std::fabs(v);
            if (a == 0) return "0 s";
            if (a >= 1) return fmt::format("{:.3f} s", v);
            if (a >= 1e-3) return fmt::format("{:.2f} ms", v * 1e3);
            return fmt::format("{:.1f} µs", v * 1e6);
        }
        case Unit::fraction: return fmt::format("{:.1f} %", v * 100);
        case Unit::flops_per_s: return fmt::format("{:.0f} TFLOP/s", v / 1e12);
        case Unit::flops: return fmt::format("{:.3g} FLOP", v);
        case Unit::tokens_per_s: return v >= 1e6 ? fmt::format("{:.2f} M", v / 1e6) : fmt::format("{:.0f}", v);
        case Unit::count: return fmt::format("{:.0f}", v);
        case Unit::flag: return v != 0 ? "yes" : "no";
    }
    return fmt::format("{}", v);
}

/// A margin below this share of what the allocations need is within the memory prediction's error.
constexpr double kTightMargin = 0.10;
/// The share of usable HBM a pipelined nanotron plan under the classic allocator may take before the
/// Playbook's runs so planned stopped running as planned (docs/validation.md, "Memory").
constexpr double kAllocatorLimitShare = 0.90;

std::vector<std::string> plan_findings(const Plan& p) {
    std::vector<std::string> out;
    if (p.rejection) {
        out.push_back(fmt::format("{}: expected {}", p.rejection->field, p.rejection->expected));
        return out;
    }
    const double gb = 1e9;
    if (!p.memory_fits) {
        // Enough digits that a shortfall is never printed as 0.0: MB below 0.1 GB.
        const double short_bytes = p.short_bytes();
        const std::string by = short_bytes < 0.1 * gb ? fmt::format("{:.1f} MB", short_bytes / 1e6)
                                                       : fmt::format("{:.1f} GB", short_bytes / gb);
        out.push_back(fmt::format("Does not fit: stage {} needs {:.1f} GB of {:.1f} GB usable, short by {}.",
                                  p.worst_memory_stage, p.memory.total_bytes() / gb, p.capacity_bytes / gb, by));
    } else if (!p.leaves_headroom(kTightMargin)) {
        // The prediction's own error: measured memory has run more than 10 % above it on published runs.
        out.push_back(fmt::format("Fits with {} to spare, under a tenth of the {:.1f} GB its allocations need: "
                                  "measured memory has run more than 10 % above the prediction on published runs "
                                  "(docs/validation.md, Memory), so it may not fit. A search with a headroom of {:g} "
                                  "keeps to layouts that leave a tenth.",
                                  format_value(p.margin_bytes(), Unit::bytes), p.needed_bytes / gb, kTightMargin));
    }
    // nanotron's pipeline engine with PyTorch's classic allocator near the card: the Ultra-Scale Playbook's
    // runs so planned (device figure 90 % of usable or more) ran 2.5-11.5x slower than planned, 12 of 14;
    // at 60-88 %, a median +3 % (docs/validation.md, "Memory"). Its size is not known: a warning.
    if (p.memory_fits && p.layout.pp > 1 && p.layout.pipeline_pacing == PipelinePacing::nanotron &&
        p.layout.allocator == Allocator::classic && p.memory.device_bytes() >= kAllocatorLimitShare * p.capacity_bytes) {
        out.push_back(fmt::format(
            "The pipeline runs with {:.0f} % of usable HBM planned taken, under PyTorch's classic caching allocator: "
            "12 of the Ultra-Scale Playbook's 14 pipelined nanotron runs planned at 90 % or more ran 2.5-11.5 times "
            "slower than planned, as an allocator that finds no cached block to fit frees its cache and retries. "
            "Expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; allocator expandable) or a layout "
            "with more room avoid it; the planned time does not price it.",
            100 * p.memory.device_bytes() / p.capacity_bytes));
    }
    for (const GroupPlacement& g : p.groups) {
        if (!g.crosses_domain()) continue;
        const bool heavy = g.axis == Axis::tp || g.axis == Axis::etp || g.axis == Axis::cp || g.axis == Axis::ep;
        if (!heavy) continue;
        std::string axis(enum_name(g.axis));
        for (char& ch : axis) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        out.push_back(fmt::format(
            "{} group of {} spans {} scale-up domains of {}: its traffic leaves NVLink ({:.0f} GB/s) for the NICs "
            "({:.0f} GB/s per GPU).",
            axis, g.size, g.domains_spanned, p.cluster.scale_up_domain, p.cluster.gpu.scale_up_Bps / gb,
            p.cluster.gpu.scale_out_Bps / gb));
    }
    // TP or EP traffic the layout does not overlap, when it costs 5 % of the step or more: the setting that would.
    for (const CommTerm& t : p.comm) {
        const bool tp = t.axis == Axis::tp;
        if ((!tp && t.axis != Axis::ep) || (tp ? overlaps_tp(p.layout) : overlaps_ep(p.layout)) || p.time.step_s <= 0 ||
            t.exposed_s < 0.05 * p.time.step_s)
            continue;
        const std::string cost = fmt::format("{:.0f} ms, {:.0f} % of the step", 1e3 * t.exposed_s, 100 * t.exposed_s / p.time.step_s);
        out.push_back(tp ? fmt::format("TP traffic is exposed in full: {}. TP communication overlap ({}Megatron's "
                                       "--tp-comm-overlap, torchtitan's async TP; tp_comm_overlap true) runs it under the "
                                       "GEMMs, leaving about 1/{} of it where they are longer.",
                                       cost, p.layout.sequence_parallel ? "" : "with sequence parallelism: ", p.layout.tp)
                         : fmt::format("EP all-to-all is exposed in full: {}. Overlapping it with another micro-batch's "
                                       "computation (Megatron's --overlap-moe-expert-parallel-comm; ep_comm_overlap true{}) "
                                       "hides what the MoE layers' computation covers.",
                                       cost, p.layout.pp > 1 ? ", with the interleaved schedule at pp > 1" : ""));
    }
    // DP traffic the layout leaves after the backward, 5 % of the step or more: the flags that overlap it.
    for (const CommTerm& t : p.comm) {
        if ((t.axis != Axis::dp && t.axis != Axis::edp) || overlaps_dp(p.layout) || p.time.step_s <= 0 ||
            t.exposed_s < 0.05 * p.time.step_s)
            continue;
        out.push_back(fmt::format("DP traffic runs after the backward, exposed: {:.0f} ms, {:.0f} % of the step. DP "
                                  "overlap (Megatron's --overlap-grad-reduce{}, DeepSpeed's overlap_comm; dp_comm_overlap "
                                  "true) reduces the gradients in buckets under {}{}.",
                                  1e3 * t.exposed_s, 100 * t.exposed_s / p.time.step_s,
                                  p.layout.zero >= 1 ? " --overlap-param-gather" : "",
                                  reduces_grads_per_micro_batch(p.layout) ? "each micro-batch's backward" : "the last backward",
                                  p.layout.zero >= 1 ? " and gathers the parameters under the next forward" : ""));
        break;
    }
    // Expert traffic as NCCL's all-to-all of every copy, 5 % of the step or more: what DeepEP's or
    // HybridEP's one copy per GPU and per domain reached would take instead, when that is a fifth less.
    for (const CommTerm& t : p.comm) {
        if (t.axis != Axis::ep || !p.model.moe || p.layout.moe_dispatcher != Dispatcher::alltoall || p.time.step_s <= 0 ||
            t.exposed_s < 0.05 * p.time.step_s)
            continue;
        const GroupPlacement* g = find_group(p.groups, Axis::ep);
        if (!g) continue;
        Layout flex = p.layout;
        flex.moe_dispatcher = Dispatcher::deepep;
        const Fabric f = make_fabric(p.cluster);
        const Traffic now = ep_traffic(p.model, p.layout, *g, f), dedup = ep_traffic(p.model, flex, *g, f);
        if (now.time_s <= 0 || dedup.time_s > 0.8 * now.time_s) continue;
        out.push_back(fmt::format(
            "The expert all-to-all sends each token once per expert ({} copies); DeepEP or HybridEP (moe_dispatcher "
            "deepep or hybridep, Megatron's --moe-token-dispatcher-type flex) send it once per GPU{} reached, at the "
            "links' achieved bandwidth: {:.0f} % less time per dispatch.",
            p.model.moe->top_k, g->crosses_domain() ? " and per node" : "", 100 * (1 - dedup.time_s / now.time_s)));
    }
    // GEMMs whose operand rows are not whole 16-byte vectors run off the Tensor Cores (docs/model.md §4).
    for (const bool moe_layer : {false, true}) {
        if (moe_layer && !p.model.moe) break;
        if (!moe_layer && moe_layers_in(p.model, 0, p.model.layers) == p.model.layers) continue;
        const LayerWork w = layer_work(p.model, p.cluster, p.layout, moe_layer);
        if (w.unaligned_multiple <= 0 || w.fwd_s <= 0) continue;
        out.push_back(fmt::format(
            "GEMMs off the Tensor Cores: a width of {:.0f} is not a multiple of {:.0f} (16-byte vectors), so the "
            "GEMMs on it run at {:.2f} of their aligned speed, {:.0f} % of a{} layer's forward. Sizes that divide "
            "into multiples of {:.0f} per GPU keep them on the Tensor Cores.",
            w.unaligned_width, w.unaligned_multiple, p.cluster.gpu.eff.gemm_unaligned, 100 * w.unaligned_fwd_s / w.fwd_s,
            moe_layer ? " MoE" : "", w.unaligned_multiple));
        break;
    }
    // A layer held to the pipeline's pacing rather than its kernels' time (pipeline_pacing, docs/model.md §4):
    // by how much, and what lifts the floor (it is per layer and micro-batch, where the pipeline leaves the node).
    if (const double paced = paced_layer_s(p.cluster, p.layout); paced > 0) {
        Layout free = p.layout;
        free.pipeline_pacing = PipelinePacing::kernels;
        const bool moe_layer = p.model.moe && moe_layers_in(p.model, 0, p.model.layers) == p.model.layers;
        const LayerWork k = layer_work(p.model, p.cluster, free, moe_layer);
        const double kernels_s = k.fwd_s + k.bwd_s - k.grad_accum_s;
        if (kernels_s > 0 && kernels_s < paced)
            out.push_back(fmt::format(
                "Paced by nanotron's pipeline across nodes: each layer takes at least {:.0f} ms a micro-batch (TP {} × "
                "the host's {:.0f} ms), {:.1f} × what its kernels take, as the Ultra-Scale Playbook's runs measured "
                "(docs/validation.md, \"nanotron's pipeline engine\"). A pipeline inside one node, fewer TP ranks or "
                "fewer, larger micro-batches take it off; pipeline_pacing kernels plans without it.",
                1e3 * paced, p.layout.tp, 1e3 * p.cluster.gpu.eff.layer_overhead_s, paced / kernels_s));
    }
    int64_t lo = INT64_MAX, hi = 0;
    for (const StageReport& s : p.stages) {
        lo = std::min(lo, s.stage.layers);
        hi = std::max(hi, s.stage.layers);
    }
    if (p.layout.pp > 1 && lo != hi) {
        // Under DualPipe a rank holds a stage of each direction, so its layers are counted per rank.
        const bool dual = p.layout.schedule == Schedule::dualpipe;
        const char* why = dual ? "DualPipe keeps two copies of the model, each rank a stage of each direction; " : "";
        out.push_back(fmt::format("Uneven pipeline: {} layers on {} stages, {} to {} per {} ({}end stages also hold "
                                  "the embedding and LM head).",
                                  p.model.layers, p.layout.pp, lo, hi, dual ? "rank" : "stage", why));
    }
    if (!p.time.pipeline_note.empty())
        out.push_back("Pipeline not simulated (" + p.time.pipeline_note + "): bubble and in-flight memory from the closed forms.");
    if (p.time.step_s > 0 && p.time.bubble_s / p.time.step_s > 0.10)
        out.push_back(fmt::format("Pipeline bubble is {:.0f} % of the step: more micro-batches or vpp would shrink it.",
                                  100 * p.time.bubble_s / p.time.step_s));
    return out;
}

nlohmann::json plan_to_json(const Plan& p) {
    nlohmann::json j;
    j["schema"] = "shardplan.plan.v1";
    j["inputs"] = {{"model", to_json(p.model)}, {"cluster", to_json(p.cluster)}, {"layout", to_json(p.layout)}};
    j["layout_string"] = to_string(p.layout);
    if (p.rejection) {
        j["rejection"] = {{"code", p.rejection->code}, {"field", p.rejection->field},
                          {"expected", p.rejection->expected},
                          {"message", p.rejection->field + ": expected " + p.rejection->expected}};
        j["feasible"] = false;
        return j;
    }
    j["rejection"] = nullptr;
    j["feasible"] = p.feasible();
    for (const Field& f : kFields) {
        const double v = f.get(p);
        if (f.unit == Unit::flag) put(j, f.key, v != 0);
        else if (f.unit == Unit::count) put(j, f.key, static_cast<int64_t>(v));
        else put(j, f.key, v);
    }
    j["memory"]["peak"] = enum_name(p.memory.peak);  // a name, not a number: outside the field table
    j["comm"] = nlohmann::json::array();
    for (const CommTerm& c : p.comm)
        j["comm"].push_back({{"axis", enum_name(c.axis)}, {"collective", c.collective}, {"group_size", c.group_size},
                             {"bytes_per_step", c.bytes_per_step}, {"calls_per_step", c.calls_per_step},
                             {"time_s", c.time_s}, {"exposed_s", c.exposed_s}, {"critical_path", c.critical_path},
                             {"tier", enum_name(c.tier)}, {"crosses_domain", c.crosses_domain},
                             {"domains_spanned", c.domains_spanned}, {"bytes_per_flop", c.bytes_per_flop},
                             {"algorithm", c.algorithm}});
    j["groups"] = nlohmann::json::array();
    for (const GroupPlacement& g : p.groups)
        j["groups"].push_back({{"axis", enum_name(g.axis)}, {"size", g.size}, {"stride", g.stride},
                               {"domains_spanned", g.domains_spanned}, {"per_domain", g.per_domain},
                               {"crosses_domain", g.crosses_domain()}});
    j["stages"] = nlohmann::json::array();
    for (const StageReport& s : p.stages)
        j["stages"].push_back({{"index", s.stage.index}, {"layers", s.stage.layers}, {"moe_layers", s.stage.moe_layers},
                               {"embedding", s.stage.first}, {"head", s.stage.last}, {"in_flight", s.in_flight},
                               {"memory", memory_json(s.memory)}, {"fwd_s", s.times.fwd_s}, {"bwd_s", s.times.bwd_s}});
    const ThroughputRange& r = p.throughput.range;
    j["throughput"]["tokens_per_s_per_gpu_range"] = {r.low, r.high};
    j["throughput"]["range_basis"] = {{"runs", r.runs}, {"class", r.basis}};
    j["findings"] = plan_findings(p);
    return j;
}

nlohmann::json search_to_json(const SearchResult& r, bool pareto) {
    nlohmann::json j = {{"evaluated", r.evaluated}, {"feasible", r.feasible}, {"elapsed_s", r.elapsed_s},
                        {"rejected", r.rejected}, {"shortest_miss_bytes", r.shortest_miss_bytes},
                        {"ranking_resolution", kRankingResolution}, {"best", nlohmann::json::array()}};
    for (size_t i = 0; i < r.best.size(); ++i) {
        nlohmann::json b = plan_to_json(r.best[i]);
        // The rank orders folded into this answer: they plan exactly as it does.
        b["same_orders"] = i < r.same_orders.size() ? nlohmann::json(r.same_orders[i]) : nlohmann::json::array();
        // How far behind the first it is predicted; under ranking_resolution the two are closer than the
        // model can order.
        b["gap_to_best"] = predicted_gap(r.best.front().throughput.tokens_per_s_per_gpu, r.best[i].throughput.tokens_per_s_per_gpu);
        j["best"].push_back(std::move(b));
    }
    if (pareto) {
        j["pareto"] = nlohmann::json::array();
        for (const Plan& p : r.pareto) j["pareto"].push_back(plan_to_json(p));
    }
    return j;
}

nlohmann::json fit_changes_to_json(const Plan& p, const std::vector<FitChange>& changes) {
    nlohmann::json out = nlohmann::json::array();
    for (const FitChange& f : changes)
        out.push_back({{"change", f.change}, {"layout", to_json(f.layout)}, {"layout_string", to_string(f.layout)},
                       {"fits", f.plan.memory_fits}, {"tokens_per_s_per_gpu", f.plan.throughput.tokens_per_s_per_gpu},
                       {"memory_bytes", f.plan.memory.total_bytes()}, {"margin_bytes", f.plan.margin_bytes()},
                       {"short_bytes", f.plan.short_bytes()}});
    return {{"fits", p.memory_fits}, {"layout_string", to_string(p.layout)},
            {"tokens_per_s_per_gpu", p.throughput.tokens_per_s_per_gpu},
            {"short_bytes", p.short_bytes()}, {"changes", out}};
}

std::string format_fit_changes(const Plan& p, const std::vector<FitChange>& changes) {
    std::string s;
    const bool any = std::any_of(changes.begin(), changes.end(), [](const FitChange& f) { return f.plan.memory_fits; });
    s += any ? "\nChanges that make it fit (one at a time, fastest first)\n"
             : "\nNo single change makes it fit; the closest\n";
    // The rows shown: the first five, and only those that fit when any does; the change column as wide as
    // the longest of them.
    std::vector<const FitChange*> rows;
    for (const FitChange& f : changes) {
        if (rows.size() == 5 || (any && !f.plan.memory_fits)) break;
        rows.push_back(&f);
    }
    size_t wide = 34;
    for (const FitChange* f : rows) wide = std::max(wide, text_width(f->change));
    for (const FitChange* row : rows) {
        const FitChange& f = *row;
        const double cost = p.throughput.tokens_per_s_per_gpu > 0
                                ? f.plan.throughput.tokens_per_s_per_gpu / p.throughput.tokens_per_s_per_gpu - 1.0
                                : 0.0;
        s += fmt::format("  {:<{}} {:>9.0f} tokens/s/GPU ({:+.1f} %)  {}\n", f.change, wide,
                         f.plan.throughput.tokens_per_s_per_gpu, 100.0 * cost,
                         f.plan.memory_fits ? "fits, " + format_value(f.plan.margin_bytes(), Unit::bytes) + " to spare"
                                            : "short by " + format_value(f.plan.short_bytes(), Unit::bytes));
    }
    return s;
}

}  // namespace shardplan
