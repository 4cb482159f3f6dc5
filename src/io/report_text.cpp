// The terminal report: memory bar, per-axis traffic table, groups, time breakdown, throughput.
// Colour only when asked (the CLI asks when stdout is a TTY); crossing groups are red.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "shardplan/comm.h"
#include "shardplan/error.h"
#include "shardplan/report.h"
#include "shardplan/topology.h"

namespace shardplan {

namespace {

struct Style {
    bool on;
    std::string red(const std::string& s) const { return on ? "\033[31m" + s + "\033[0m" : s; }
    std::string green(const std::string& s) const { return on ? "\033[32m" + s + "\033[0m" : s; }
    std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
    std::string dim(const std::string& s) const { return on ? "\033[2m" + s + "\033[0m" : s; }
    std::string paint(const std::string& s, int code) const {
        return on ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
    }
};

const Field& field(const char* key) {
    for (const Field& f : plan_fields())
        if (std::string(f.key) == key) return f;
    return plan_fields().front();
}

std::string row(const Plan& p, const char* key, int width = 24) {
    const Field& f = field(key);
    return fmt::format("  {:<{}} {:>12}", f.label, width, format_value(f.get(p), f.unit));
}

std::string memory_bar(const Plan& p, const Style& st) {
    constexpr int kWidth = 50;
    const MemoryBreakdown& m = p.memory;
    const double scale = std::max(m.total_bytes(), p.capacity_bytes);
    struct Seg { double v; char c; int color; };
    const Seg segs[] = {{m.weights_bytes, 'W', 34}, {m.grads_bytes, 'G', 36}, {m.optimizer_bytes, 'O', 35},
                        {m.activations_bytes, 'A', 33}, {m.other_bytes + m.allocator_bytes + m.runtime_bytes, '.', 37}};
    std::string bar;
    int used = 0;
    double acc = 0;
    for (const Seg& s : segs) {
        acc += s.v;
        const int upto = static_cast<int>(acc / scale * kWidth + 0.5);
        if (upto > used) bar += st.paint(std::string(upto - used, s.c), s.color);
        used = std::max(used, upto);
    }
    const int cap = static_cast<int>(p.capacity_bytes / scale * kWidth + 0.5);
    std::string tail = used < kWidth ? std::string(kWidth - used, ' ') : "";
    // Mark usable capacity with '|' when the total overruns it.
    if (cap < kWidth) return "[" + bar + tail + "] " + st.red(fmt::format("usable HBM ends at column {}", cap));
    return "[" + bar + tail + "|";
}

}  // namespace

std::string format_plan(const Plan& p, bool color) {
    const Style st{color};
    const Layout& l = p.layout;
    std::string out;
    auto line = [&](const std::string& s) { out += s + "\n"; };

    line(st.bold(fmt::format("shardplan · {} on {} × {} · {}", p.model.name, p.cluster.gpus, p.cluster.gpu.id, to_string(l))));
    // Tokens a step: millions to a decimal, whole tokens below a million (12,288 had read "0.0 M").
    const double tokens = double(global_batch(l)) * double(l.seq_len);
    const std::string step_tokens = tokens >= 1e6 ? fmt::format("{:.1f} M", tokens / 1e6) : fmt::format("{:.0f}", tokens);
    line(fmt::format("  seq {} · global batch {} ({} tokens) · micro-batch {} · ZeRO-{} · recompute {} · SP {} · "
                     "{} · {} · order {}",
                     l.seq_len, global_batch(l), step_tokens, l.micro_batch, l.zero,
                     l.recompute == Recompute::selective ? "selective (" + recompute_modules_string(l) + ")"
                                                         : std::string(enum_name(l.recompute)),
                     l.sequence_parallel ? "on" : "off", enum_name(l.precision),
                     enum_name(l.schedule), order_string(l)));
    if (p.rejection) {
        line(st.red(fmt::format("  cannot run: {}: expected {}", p.rejection->field, p.rejection->expected)));
        return out;
    }
    line("");
    // Rounded to two decimals once, for the figure and its plural alike (an interleaved stage holds fractions of one).
    const double in_flight =
        std::round((p.stages.empty() ? 1.0 : p.stages[static_cast<size_t>(p.worst_memory_stage)].in_flight) * 100.0) / 100.0;
    const std::string moment = p.memory.peak == PeakMoment::loss ? "at a micro-batch's loss"
                               : p.memory.peak == PeakMoment::optimizer
                                   ? "at the optimizer step (fp32 copies of its 16-bit gradients)"
                                   : fmt::format("at a layer's backward, {} micro-batch{} in flight", in_flight,
                                                 in_flight == 1.0 ? "" : "es");
    line(st.bold(fmt::format("Memory per GPU · stage {} of {} (the fullest), {} · {}", p.worst_memory_stage, l.pp,
                             moment, p.memory_fits ? st.green("fits") : st.red("DOES NOT FIT"))));
    line("  " + memory_bar(p, st));
    for (const char* k : {"memory.weights_bytes", "memory.grads_bytes", "memory.optimizer_bytes",
                          "memory.activations_bytes", "memory.other_bytes", "memory.allocated_bytes",
                          "memory.allocator_bytes", "memory.reserved_bytes", "memory.runtime_bytes",
                          "memory.device_bytes", "memory.capacity_bytes"})
        line(row(p, k));
    if (!p.memory_fits) line(st.red(row(p, "memory.short_bytes")));
    else if (const double cached = p.margin_bytes() - std::max(0.0, p.capacity_bytes - p.memory.device_bytes());
             cached > 0.5e6)  // part of the margin is the allocator's cache, which yields before an allocation fails
        line(row(p, "memory.margin_bytes") +
             st.dim(fmt::format("  ({} of it the allocator cache, given up first)", format_value(cached, Unit::bytes))));
    else line(row(p, "memory.margin_bytes"));
    line(st.dim("  W weights  G gradients  O optimizer  A activations  . buffers, allocator cache, CUDA context and NCCL"));

    line("");
    line(st.bold(fmt::format("Communication per step · critical stage {}", p.critical_stage)));
    // The collective column as wide as its longest name.
    size_t wide = 34;
    for (const CommTerm& c : p.comm) wide = std::max(wide, text_width(c.collective));
    line(fmt::format("  {:<4} {:<{}} {:>6} {:<10} {:>11} {:>10} {:>10} {:>10}  {}", "axis", "collective", wide, "group",
                     "tier", "bytes", "time", "exposed", "B/FLOP", "path"));
    for (const CommTerm& c : p.comm) {
        std::string tier = std::string(enum_name(c.tier));
        std::string s = fmt::format("  {:<4} {:<{}} {:>6} {:<10} {:>11} {:>10} {:>10} {:>10.2e}  {}", enum_name(c.axis),
                                    c.collective, wide, c.group_size, tier, format_value(c.bytes_per_step, Unit::bytes),
                                    format_value(c.time_s, Unit::seconds), format_value(c.exposed_s, Unit::seconds),
                                    c.bytes_per_flop, c.critical_path ? "critical" : "hidden");
        line(c.crosses_domain && c.axis != Axis::dp && c.axis != Axis::pp && c.axis != Axis::edp ? st.red(s) : s);
    }
    if (p.comm.empty()) line("  (none: a single GPU)");
    for (const CommTerm& c : p.comm)
        if (!c.critical_path && c.exposed_s > 0) {  // hidden, but its kernels' SMs are not the computation's
            line(st.dim(fmt::format("  hidden traffic still holds {:g} of the GPU's {} SMs while it runs: {:.0f} % of its time is paid "
                                    "(docs/model.md §5.3)",
                                    p.cluster.gpu.eff.comm_sms, p.cluster.gpu.sms, 100.0 * overlap_sm_share(p.cluster.gpu))));
            break;
        }

    line("");
    const int64_t used = domain_occupancy(p.cluster, ranks(l));
    line(st.bold(used < p.cluster.scale_up_domain
                     ? fmt::format("Groups on {}-GPU scale-up domains, {} of each used (the job in equal segments)",
                                   p.cluster.scale_up_domain, used)
                     : fmt::format("Groups on {}-GPU scale-up domains", p.cluster.scale_up_domain)));
    for (const GroupPlacement& g : p.groups) {
        if (g.size <= 1) continue;
        std::string where = g.crosses_domain()
                                ? fmt::format("crosses: spans {} domains, {} per domain", g.domains_spanned, g.per_domain)
                                : "inside one domain";
        std::string s = fmt::format("  {:<4} size {:>6}  stride {:>6}  {}", enum_name(g.axis), g.size, g.stride, where);
        const bool red = g.crosses_domain() && (g.axis == Axis::tp || g.axis == Axis::etp || g.axis == Axis::cp || g.axis == Axis::ep);
        line(red ? st.red(s) : s);
    }

    line("");
    line(st.bold("Time per step"));
    for (const char* k : {"time.compute_s", "time.recompute_s", "time.exposed_comm_s", "time.bubble_s", "time.optimizer_s",
                          "time.step_s"})
        line(row(p, k));
    if (l.pp > 1)
        line(fmt::format("  {:<24} {:>12}   {}", "pipeline", p.time.pipeline_simulated ? "simulated" : "closed form",
                         p.time.pipeline_simulated
                             ? fmt::format("{}, {} micro-batches: `shardplan trace` draws it", enum_name(l.schedule), p.micro_batches)
                             : "over 1,000,000 passes: not simulated"));
    line("");
    line(st.bold("Throughput"));
    line(row(p, "throughput.tokens_per_s_per_gpu"));
    if (const ThroughputRange& r = p.throughput.range; r.runs > 0)
        line(fmt::format("  {:<24} {:>12}   from {} held-out runs like it ({})", "80 % range",
                         fmt::format("{:.0f}–{:.0f}", r.low, r.high), r.runs, r.basis));
    for (const char* k : {"throughput.tokens_per_s", "throughput.mfu", "throughput.hfu"}) line(row(p, k));
    line(fmt::format("  {:<24} {:>12}", "peak used for MFU",
                     fmt::format("{} {} dense", format_value(p.throughput.peak_flops, Unit::flops_per_s),
                                 enum_name(l.precision))));
    const auto findings = plan_findings(p);
    if (!findings.empty()) {
        line("");
        line(st.bold("Findings"));
        for (const std::string& f : findings) line("  - " + f);
    }
    return out;
}

}  // namespace shardplan
