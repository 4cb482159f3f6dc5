// `shardplan sweep`: the best layout at each GPU count, sequence length or global batch.
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "scenario.h"
#include "shardplan/error.h"
#include "shardplan/report.h"
#include "shardplan/sweep.h"

namespace shardplan::app {

namespace {

std::vector<int64_t> int_list(const std::string& text, const char* flag) {
    std::vector<int64_t> out;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t comma = text.find(',', pos);
        const std::string tok = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(tok, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (tok.empty() || used != tok.size() || v <= 0 || v > 100'000'000'000LL)
            throw ConfigError(flag, fmt::format("positive integers separated by commas, got \"{}\"", tok));
        out.push_back(v);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    if (out.size() > 64) throw ConfigError(flag, "at most 64 values");
    return out;
}

}  // namespace

Run setup_sweep(CLI::App& cmd) {
    struct Opts {
        ScenarioFlags flags;
        std::string gpus, seq_len, global_batch, format = "table", plot;
        bool json = false;
        int threads = 0;
    };
    auto o = std::make_shared<Opts>();
    add_scenario_flags(cmd, o->flags, /*with_degrees=*/true, /*with_sizes=*/false);
    cmd.add_option("--gpus", o->gpus, "GPU counts, comma-separated (1024,2048,4096)");
    cmd.add_option("--seq-len", o->seq_len, "Sequence lengths, comma-separated");
    cmd.add_option("--global-batch", o->global_batch, "Global batches (sequences), comma-separated");
    add_format_flags(cmd, o->format, o->json);
    cmd.add_option("--plot", o->plot, "Also draw the curves into this SVG file");
    cmd.add_option("--threads", o->threads, "Worker threads per search (default: all cores)");
    cmd.add_option("--headroom", o->flags.headroom,
                   "At each point, the best layout that fits with this share of what it needs still free (as search's)");
    return [o]() {
        const OutputFormat fmt = output_format(o->format, o->json);
        ScenarioFlags base_flags = o->flags;
        struct List { SweepAxis axis; const std::string* text; const char* flag; std::optional<int64_t> ScenarioFlags::*field; };
        const List lists[] = {{SweepAxis::gpus, &o->gpus, "--gpus", &ScenarioFlags::gpus},
                              {SweepAxis::seq_len, &o->seq_len, "--seq-len", &ScenarioFlags::seq_len},
                              {SweepAxis::global_batch, &o->global_batch, "--global-batch", &ScenarioFlags::global_batch}};
        const List* swept = nullptr;
        std::vector<int64_t> values;
        for (const List& l : lists) {
            if (l.text->empty()) continue;
            const std::vector<int64_t> v = int_list(*l.text, l.flag);
            if (v.size() == 1) {
                base_flags.*(l.field) = v.front();  // a single value is a setting, not a sweep
                continue;
            }
            if (swept) throw ConfigError(l.flag, fmt::format("a single value: {} is already swept (one at a time)", swept->flag));
            swept = &l;
            values = v;
            // Each point is bounded as plan bounds the same setting: a sweep is no way around the limits.
            const int64_t most = l.axis == SweepAxis::gpus ? 100'000'000 : 1'000'000'000;
            for (int64_t x : v)
                if (x < 1 || x > most) throw ConfigError(l.flag, fmt::format("values in [1, {}], got {}", most, x));
        }
        if (!swept) throw ConfigError("--gpus", "a list of at least two values in --gpus, --seq-len or --global-batch");
        const Case base = resolve_base(base_flags);
        SearchOptions opt;
        opt.top = 1;
        opt.threads = search_threads(o->threads);
        const auto points = sweep(base.model, base.cluster, base.layout, search_space_from_flags(o->flags), swept->axis,
                                  values, opt);
        if (!o->plot.empty()) {
            std::ofstream f(o->plot);
            if (!f) throw ConfigError("--plot", "a writable file path, cannot write \"" + o->plot + "\"");
            const char* what = swept->axis == SweepAxis::gpus ? "GPU count"
                               : swept->axis == SweepAxis::seq_len ? "sequence length" : "global batch";
            f << sweep_svg(points, swept->axis,
                           fmt::format("{} on {} · the best layout at each {}", base.model.name, base.cluster.gpu.id, what));
        }
        const Table t = sweep_table(points, swept->axis);
        switch (fmt) {
            case OutputFormat::as_csv: std::cout << to_csv(t); break;
            case OutputFormat::as_markdown: std::cout << to_markdown(t); break;
            case OutputFormat::as_json: {
                json j = {{"axis", enum_name(swept->axis)}, {"points", json::array()}};
                for (const SweepPoint& p : points)
                    j["points"].push_back({{"value", p.value}, {"evaluated", p.result.evaluated},
                                           {"feasible", p.result.feasible},
                                           {"best", p.result.best.empty() ? json(nullptr) : plan_to_json(p.result.best.front())}});
                std::cout << j.dump(2) << "\n";
                break;
            }
            case OutputFormat::as_table: {
                // The header names what stays fixed; the swept setting is the first column.
                std::string fixed;
                if (swept->axis != SweepAxis::seq_len) fixed += fmt::format(" · seq {}", base.layout.seq_len);
                if (swept->axis != SweepAxis::global_batch) fixed += " · " + global_batch_text(base.layout);
                std::cout << fmt::format("shardplan sweep · {} on {} · {}{}\n", base.model.name, base.cluster.gpu.id,
                                         enum_name(swept->axis), fixed);
                size_t layout_width = 32;
                for (const SweepPoint& p : points)
                    if (!p.result.best.empty())
                        layout_width = std::max(layout_width, text_width(to_string(p.result.best.front().layout)));
                std::cout << fmt::format("  {:>12}  {:<{}} {:>4} {:>4} {:<9} {:<11} {:>12} {:>7} {:>10} {:>10}\n",
                                         enum_name(swept->axis), "best layout", layout_width, "mb", "zero", "recompute",
                                         "schedule", "tokens/s/GPU", "MFU", "memory", "spare");
                for (const SweepPoint& p : points) {
                    if (p.result.best.empty()) {
                        std::cout << (p.result.evaluated == 0  // a pinned degree that does not divide this count
                                          ? fmt::format("  {:>12}  no layout has the pinned degrees\n", p.value)
                                          : fmt::format("  {:>12}  no layout fits ({} evaluated)\n", p.value, p.result.evaluated));
                        continue;
                    }
                    const Plan& b = p.result.best.front();
                    std::cout << fmt::format("  {:>12}  {:<{}} {:>4} {:>4} {:<9} {:<11} {:>12.0f} {:>6.1f}% {:>10} "
                                             "{:>10}\n",
                                             p.value, to_string(b.layout), layout_width, b.layout.micro_batch,
                                             b.layout.zero,
                                             enum_name(b.layout.recompute), enum_name(b.layout.schedule),
                                             b.throughput.tokens_per_s_per_gpu, 100 * b.throughput.mfu,
                                             format_value(b.memory.total_bytes(), Unit::bytes),
                                             format_value(b.margin_bytes(), Unit::bytes));
                }
                if (!o->plot.empty()) std::cout << "wrote " << o->plot << "\n";
                break;
            }
        }
        return 0;
    };
}

}  // namespace shardplan::app
