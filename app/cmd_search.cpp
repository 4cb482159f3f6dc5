// `shardplan search`: the fastest layouts that fit, and why the others lose.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/export.h"
#include "shardplan/ranges.h"
#include "shardplan/report.h"
#include "shardplan/search.h"
#include "shardplan/table.h"

namespace shardplan::app {

namespace {

const char* reason_text(const std::string& code) {
    struct Row { const char* code; const char* text; };
    static const Row rows[] = {
        {"does_not_fit", "does not fit in usable HBM"},
        {"crosses_domain", "a TP/CP/EP group leaves its scale-up domain (--no-crossing)"},
        {"too_little_headroom", "fits, but leaves less free than --headroom asks"},
        {"too_few_micro_batches", "too few micro-batches for the pipeline schedule"},
        {"interleaved_groups", "interleaved 1F1B needs micro-batches in groups of pp"},
        {"batch_divides", "global batch not divisible by micro-batch × dp"},
        {"tp_divides_heads", "tp does not divide the attention heads"},
        {"tp_divides_kv_heads", "tp neither divides nor is a multiple of the kv heads"},
        {"tp_divides_ffn", "tp does not divide ffn_hidden"},
        {"cp_divides_seq", "cp does not split the sequence evenly"},
        {"sp_divides_seq", "sequence parallelism needs seq_len/cp divisible by tp"},
        {"ep_divides_experts", "ep does not divide the experts"},
        {"expert_grid", "etp·ep does not divide tp·cp·dp"},
        {"etp_divides_ffn", "etp does not divide the expert ffn"},
        {"pp_exceeds_layers", "more pipeline chunks than layers"},
        {"dualpipe_even_pp", "DualPipe needs an even pp"},
        {"cost_split_one_chunk", "the cost stage split (nanotron's) has one chunk per rank"},
        {"dualpipe_even_micro_batches", "DualPipe needs an even number of micro-batches"},
        {"vpp_needs_interleaved", "vpp above 1 needs the interleaved schedule"},
        {"interleaved_needs_vpp", "the interleaved schedule needs vpp of at least 2"},
        {"degrees_product", "tp·cp·pp·dp is not the GPU count"},
        {"ep_dense", "expert parallelism on a dense model"},
        {"etp_dense", "an expert TP other than tp on a dense model"},
        {"moe_dense", "a capacity factor on a dense model"},
        {"moe_imbalance", "an MoE load imbalance outside 1-1000"},
        {"moe_capacity_factor", "an MoE capacity factor outside 0.01-100"},
        {"non_positive", "a degree or size that is not positive"},
        {"too_large", "a degree or size beyond the planner's bounds"},
        {"zero_stage", "a ZeRO stage outside 0-3"},
        {"precision_unsupported", "the GPU has no tensor cores for this precision"},
    };
    for (const Row& r : rows)
        if (code == r.code) return r.text;
    return "";
}

/// The header of a table of rows (below), its memory column named `memory`.
std::string header(size_t layout_width, const char* memory) {
    return fmt::format("  {:>2}  {:<{}} {:>3} {:>4} {:<9} {:<3} {:<11} {:<14} {:>11} {:>7} {:>9} {:>9}\n", "#", "layout",
                       layout_width, "mb", "zero", "recompute", "sp", "schedule", "order", "tokens/s/GPU", "MFU", memory,
                       "spare");
}

/// One layout's row; `memory_bytes` the memory column's figure (the device figure, or for the Pareto front
/// what its allocations need, the figure the front is drawn by).
std::string row(int rank, const Plan& p, size_t layout_width, double memory_bytes) {
    const Layout& l = p.layout;
    return fmt::format("  {:>2}  {:<{}} {:>3} {:>4} {:<9} {:<3} {:<11} {:<14} {:>11.0f} {:>6.1f}% {:>9} {:>9}\n", rank,
                       to_string(l), layout_width, l.micro_batch, l.zero, enum_name(l.recompute),
                       l.sequence_parallel ? "on" : "off", enum_name(l.schedule), order_string(l),
                       p.throughput.tokens_per_s_per_gpu, 100 * p.throughput.mfu,
                       format_value(memory_bytes, Unit::bytes), format_value(p.margin_bytes(), Unit::bytes));
}

}  // namespace

Run setup_search(CLI::App& cmd) {
    struct Opts {
        ScenarioFlags flags;
        int top = 5, threads = 0;
        int64_t max_tp = 0, max_cp = 0, max_pp = 0, max_mb = 16;
        bool json = false, pareto = false, no_crossing = false;
        std::string color = "auto", format = "table", export_to;
    };
    auto o = std::make_shared<Opts>();
    add_scenario_flags(cmd, o->flags);
    cmd.add_option("--top", o->top, "How many of the best layouts to report (default 5)");
    cmd.add_flag("--pareto", o->pareto, "Also report the memory-vs-throughput Pareto front");
    cmd.add_flag("--no-crossing", o->no_crossing, "Reject layouts whose TP, CP or EP group leaves its scale-up domain");
    cmd.add_option("--headroom", o->flags.headroom,
                   "Reject layouts that fit with less than this share of what their allocations need still free "
                   "(0.1: none that may not fit within the memory prediction's error; default 0)");
    cmd.add_option("--max-tp", o->max_tp, "Largest tp to consider");
    cmd.add_option("--max-cp", o->max_cp, "Largest cp to consider");
    cmd.add_option("--max-pp", o->max_pp, "Largest pp to consider");
    cmd.add_option("--max-micro-batch", o->max_mb, "Largest micro-batch to consider (powers of two up to it; default 16)");
    cmd.add_option("--threads", o->threads, "Worker threads (default: all cores)");
    add_format_flags(cmd, o->format, o->json);
    cmd.add_option("--export", o->export_to, "Print the best layout as a megatron | torchtitan | deepspeed config instead");
    cmd.add_option("--color", o->color, "auto | always | never");
    return [o]() {
        const bool color = use_color(o->color);
        const OutputFormat fmt = output_format(o->format, o->json);
        std::optional<Framework> framework;
        if (!o->export_to.empty()) framework = enum_flag<Framework>(o->export_to, "--export");
        if (o->top < 1 || o->top > 1000) throw ConfigError("--top", "an integer in [1, 1000]");
        if (o->max_mb < 1) throw ConfigError("--max-micro-batch", "a positive integer");
        // An export plans every layout as its framework runs it where the case names no framework.
        Case base = resolve_base(o->flags);
        const bool planned_as_framework = framework && base.layout.framework.empty();
        const ScenarioFlags f = planned_as_framework ? for_framework(o->flags, *framework) : o->flags;
        if (planned_as_framework) base = resolve_base(f);
        SearchSpace sp = search_space_from_flags(f);
        sp.max_tp = o->max_tp;
        sp.max_cp = o->max_cp;
        sp.max_pp = o->max_pp;
        sp.max_micro_batch = o->max_mb;
        sp.no_crossing = o->no_crossing;
        check_pins(sp, base.model, base.cluster, Naming::flags);

        SearchOptions opt;
        // An export takes the fastest layout the framework can express: a wide list to choose from.
        opt.top = framework ? 1000 : o->top;
        opt.pareto = o->pareto;
        opt.threads = search_threads(o->threads);
        const bool tty = isatty(STDERR_FILENO) != 0 && fmt == OutputFormat::as_table;
        if (tty)
            opt.progress = [](int64_t done, int64_t total, double elapsed) {
                if (elapsed < 1.0 || total == 0) return;
                const int w = 30, filled = static_cast<int>(w * done / total);
                std::fprintf(stderr, "\r[%s%s] %3d %%  %.1f s", std::string(filled, '#').c_str(),
                             std::string(w - filled, ' ').c_str(), static_cast<int>(100 * done / total), elapsed);
                std::fflush(stderr);
            };
        const SearchResult r = search(base.model, base.cluster, base.layout, sp, opt);
        if (tty && r.elapsed_s >= 1.0) std::fprintf(stderr, "\r%60s\r", "");
        if (framework) {
            if (r.best.empty()) throw ConfigError("--export", "a layout that fits; none does (search without --export for why)");
            const Export best = export_config(base.model, base.cluster, r.best.front().layout, *framework);
            std::string by_settings;  // the fastest kept out only by a setting the framework would run otherwise
            for (size_t k = 0; k < r.best.size(); ++k) {
                const Export e = k == 0 ? best : export_config(base.model, base.cluster, r.best[k].layout, *framework);
                if (e.refusal) {
                    if (by_settings.empty() && e.refused_for_settings)
                        by_settings = "the fastest it can write (" + to_string(r.best[k].layout) + ") because " + *e.refusal;
                    continue;
                }
                if (k > 0)  // said on stderr: stdout stays the configuration
                    std::cerr << fmt::format("# {} cannot express the fastest layout ({}: {}); this is the fastest it "
                                             "can, #{} at {:.0f} tokens/s/GPU against {:.0f}\n",
                                             enum_name(*framework), to_string(r.best[0].layout),
                                             *best.refusal,
                                             k + 1, r.best[k].throughput.tokens_per_s_per_gpu,
                                             r.best[0].throughput.tokens_per_s_per_gpu);
                if (planned_as_framework)
                    std::cerr << fmt::format("# searched as {0} runs it (--framework {0}): {1} at {2:.0f} tokens/s per GPU\n",
                                             framework_name(*framework), to_string(r.best[k].layout),
                                             r.best[k].throughput.tokens_per_s_per_gpu);
                std::cout << e.text;
                return 0;
            }
            // The actionable reason first: a setting to change, where one kept out a layout it can write.
            throw ConfigError("--export", "a layout " + std::string(enum_name(*framework)) + " can run as planned; none of the " +
                                              std::to_string(r.best.size()) + " fastest can, " +
                                              (by_settings.empty() ? "the best (" + to_string(r.best.front().layout) +
                                                                         ") because " + *best.refusal
                                                                   : by_settings));
        }
        if (fmt == OutputFormat::as_json) {
            std::cout << search_to_json(r, o->pareto).dump(2) << "\n";
            return 0;
        }
        if (fmt == OutputFormat::as_csv || fmt == OutputFormat::as_markdown) {
            const Table t = search_table(r);
            std::cout << (fmt == OutputFormat::as_csv ? to_csv(t) : to_markdown(t));
            return 0;
        }
        const Layout& b = base.layout;
        std::cout << fmt::format("shardplan search · {} on {} × {} · seq {} · {} · {}\n", base.model.name,
                                 base.cluster.gpus, base.cluster.gpu.id, b.seq_len, global_batch_text(b), enum_name(b.precision));
        std::cout << fmt::format("evaluated {} layouts in {:.2f} s ({:.0f} k/s): {} fit, {} rejected\n", r.evaluated,
                                 r.elapsed_s, double(r.evaluated) / std::max(r.elapsed_s, 1e-9) / 1e3, r.feasible,
                                 r.evaluated - r.feasible);
        std::vector<std::pair<int64_t, std::string>> reasons;
        for (const auto& [k, v] : r.rejected) reasons.emplace_back(v, k);
        std::sort(reasons.rbegin(), reasons.rend());
        size_t code_width = 22;
        for (const auto& [v, k] : reasons) code_width = std::max(code_width, text_width(k));
        for (const auto& [v, k] : reasons) {
            std::string text = reason_text(k);
            if (k == "does_not_fit") text += fmt::format(" (closest miss {})", format_value(r.shortest_miss_bytes, Unit::bytes));
            std::cout << fmt::format("  {:>10}  {:<{}} {}\n", v, k, code_width, text);
        }
        if (r.best.empty()) {
            const auto crossing = r.rejected.find("crosses_domain");
            const auto tight = r.rejected.find("too_little_headroom");
            if (sp.no_crossing && crossing != r.rejected.end() && crossing->second > 0)
                std::cout << fmt::format("\nNo layout fits inside the scale-up domains: {} that would run {} rejected by "
                                         "--no-crossing because a TP, CP or EP group leaves its domain of {}. Drop "
                                         "--no-crossing, or lower the global batch or sequence length.\n",
                                         crossing->second, crossing->second == 1 ? "was" : "were",
                                         base.cluster.scale_up_domain);
            else if (tight != r.rejected.end() && tight->second > 0)
                std::cout << fmt::format("\nNo layout leaves the headroom asked: {} that fit {} rejected by --headroom "
                                         "{:g}, each leaving less than that share of what it needs free. Lower it, add "
                                         "GPUs, or lower the global batch or sequence length.\n",
                                         tight->second, tight->second == 1 ? "was" : "were", sp.headroom);
            else if (r.evaluated == 0)  // the pins pass check_pins but leave no shape (--max-tp and the like)
                std::cout << "\nNo layout has every degree pinned or bounded here; loosen a pin or a --max bound.\n";
            else if (const auto miss = r.rejected.find("does_not_fit"); (miss == r.rejected.end() || miss->second == 0) &&
                                                                          !reasons.empty())
                // None got as far as its memory: a setting rules every layout out, not the GPUs' size.
                std::cout << fmt::format("\nNo layout runs: every one is rejected by the checks above, most often: {}.\n",
                                         reason_text(reasons.front().second));
            else  // recomputation is only advice while the search may not use all of it
                std::cout << fmt::format("\nNo layout fits. Add GPUs, lower the global batch or sequence length{}.\n",
                                         sp.recompute == Recompute::full ? "" : ", or allow recomputation");
            return 0;
        }
        // memory: the device figure, whose allocator cache fills what the allocations leave; spare: what
        // they could still take (MemoryBreakdown::trim_cache), the figure that tells tight layouts apart.
        size_t layout_width = 30;
        for (const auto* plans : {&r.best, &r.pareto})
            for (const Plan& p : *plans) layout_width = std::max(layout_width, text_width(to_string(p.layout)));
        std::cout << "\nBest layouts\n" << header(layout_width, "memory");
        for (size_t i = 0; i < r.best.size(); ++i)
            std::cout << row(static_cast<int>(i + 1), r.best[i], layout_width, r.best[i].memory.total_bytes());
        // The answers predicted closer to the first than the model can order (ranges.h): the list is by
        // throughput, so they follow it.
        size_t close = 1;
        while (close < r.best.size() && predicted_gap(r.best[0].throughput.tokens_per_s_per_gpu,
                                                      r.best[close].throughput.tokens_per_s_per_gpu) < kRankingResolution)
            ++close;
        if (close > 1)
            std::cout << fmt::format("  {} within {:.0f} % of #1, closer than the model can order layouts (docs/validation.md, "
                                     "Ranking): weigh their spare memory and groups too\n",
                                     close == 2 ? std::string("#2 is") : fmt::format("#2–#{} are", close),
                                     100 * kRankingResolution);
        for (size_t i = 0; i < r.same_orders.size(); ++i)
            if (!r.same_orders[i].empty())
                std::cout << fmt::format("  #{} plans the same under rank order {} (every group on the same tier)\n", i + 1,
                                         fmt::join(r.same_orders[i], ", "));
        if (o->pareto) {
            // Drawn by what the allocations need (allocated + runtime), so that is its memory column; the
            // device figure adds the allocator's cache, which fills whatever they leave.
            std::cout << "\nPareto front (memory needed ↑, spare ↓, throughput ↑)\n" << header(layout_width, "needed");
            for (size_t i = 0; i < r.pareto.size(); ++i)
                std::cout << row(static_cast<int>(i + 1), r.pareto[i], layout_width, r.pareto[i].needed_bytes);
        }
        std::cout << "\nPlan of the best layout\n" << format_plan(r.best.front(), color);
        return 0;
    };
}

}  // namespace shardplan::app
