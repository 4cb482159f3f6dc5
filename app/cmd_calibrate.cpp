// `shardplan calibrate RUNS.json -o profile.json`: fit the efficiency constants to measured runs.
#include <algorithm>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "commands.h"
#include "scenario.h"
#include "shardplan/calibrate.h"
#include "shardplan/constants.h"
#include "shardplan/error.h"
#include "shardplan/presets.h"

namespace shardplan::app {

namespace {

std::string score_line(const char* label, const FitScore& s) {
    return fmt::format("  {:<10} {:>4} runs: median {:>5.1f} %, p90 {:>5.1f} %, mean signed {:>+6.1f} %, false OOM {}\n",
                       label, s.throughput.count, 100 * s.throughput.median_abs_error, 100 * s.throughput.p90_abs_error,
                       100 * s.throughput.mean_signed_error, s.false_oom);
}

json score_json(const FitScore& s) {
    return {{"runs", s.throughput.count}, {"median_abs_error", s.throughput.median_abs_error},
            {"p90_abs_error", s.throughput.p90_abs_error}, {"mean_signed_error", s.throughput.mean_signed_error},
            {"false_oom", s.false_oom}};
}

std::string memory_line(const char* label, const MemoryScore& s) {
    return fmt::format("  {:<10} {:>4} runs: memory median {:>5.1f} %, p90 {:>5.1f} %, mean signed {:>+6.1f} %, "
                       "{} more than 10 % under\n",
                       label, s.memory.count, 100 * s.memory.median_abs_error, 100 * s.memory.p90_abs_error,
                       100 * s.memory.mean_signed_error, s.under_10);
}

// A constant a fit left at an end of its plausible range: a missing mechanism, not a measurement.
void print_defect(const Constant& k, const Efficiency& e) {
    std::cout << fmt::format("  model defect: {} = {:g} {} sits at its plausible range [{:g}, {:g}] ({})\n", k.key,
                             k.to_json(e), k.unit, k.fit_lo, k.fit_hi, k.meaning);
}

// The constants a fit kept at their start value, and why; `what` names the fit ("" or "memory ").
void print_kept(const char* what, const std::vector<std::string>& unexercised,
                const std::vector<std::string>& single_source) {
    if (!unexercised.empty())
        std::cout << fmt::format("  {}not exercised by these runs (kept at the start value): {}\n", what,
                                 fmt::join(unexercised, ", "));
    if (!single_source.empty())
        std::cout << fmt::format("  {}exercised by one source's runs only (kept at the start value): {}\n", what,
                                 fmt::join(single_source, ", "));
}

json memory_json(const MemoryScore& s) {
    return {{"runs", s.memory.count}, {"median_abs_error", s.memory.median_abs_error},
            {"p90_abs_error", s.memory.p90_abs_error}, {"mean_signed_error", s.memory.mean_signed_error},
            {"under_10", s.under_10}, {"false_oom", s.false_oom}};
}

// Prints the memory fit's scores, its constants and what it could not fit; returns them as the profile's
// `calibration.memory`.
json print_memory_fit(const MemoryFit& m) {
    std::cout << memory_line("before", m.before) << memory_line("after", m.after);
    json fitted = json::object();
    std::vector<std::string> shown;
    for (const FitParam& f : memory_fit_params()) {
        const Constant& k = *find_constant(f.name);
        fitted[k.key] = k.to_json(m.eff);
        shown.push_back(fmt::format("{} {:.3g}{}", k.key, k.to_json(m.eff),
                                    std::string_view(k.unit) == "fraction" ? "" : std::string(" ") + k.unit));
    }
    std::cout << fmt::format("  memory constants: {}\n", fmt::join(shown, ", "));
    for (const std::string& key : m.at_bounds) print_defect(*find_constant(key), m.eff);
    print_kept("memory ", m.unexercised, m.single_source);
    return {{"fitted_on", memory_json(m.after)}, {"before", memory_json(m.before)}, {"constants", fitted},
            {"at_bounds", m.at_bounds}, {"unexercised", m.unexercised}, {"single_source", m.single_source}};
}

// Prints a fit's scores and what it could not fit; returns them as the profile's `calibration`. `cases`
// are the runs fitted, for the runs that press a constant against its bound; `refit` the constants the
// memory fit took over after it (print_memory_fit reports those).
json print_fit(const FitResult& r, const std::vector<FitParam>& params, const std::vector<Case>& cases,
               const std::vector<std::string>& refit = {}) {
    std::cout << score_line("before", r.before) << score_line("after", r.after);
    // A constant pressed against its plausible range is a missing mechanism, not a measurement.
    json at_bounds = json::array();
    std::vector<std::string> kept = r.unexercised;
    kept.insert(kept.end(), r.single_source.begin(), r.single_source.end());
    kept.insert(kept.end(), refit.begin(), refit.end());
    for (const FitParam& f : fit_params())
        if (std::none_of(params.begin(), params.end(), [&](const FitParam& p) { return p.field == f.field; }))
            kept.push_back(f.name);  // not part of this fit
    json pressed_by = json::object();
    for (const Constant* k : constants_at_bounds(r.eff, kept)) {
        print_defect(*k, r.eff);
        at_bounds.push_back(k->key);
        // Which runs ask for it to go further: where the missing mechanism is to be looked for.
        const std::vector<Pull> pulls = runs_pressing(cases, r.eff, params, k->key);
        json list = json::array();
        std::vector<std::string> shown;
        for (const Pull& p : pulls) {
            list.push_back({{"id", p.id}, {"error", p.error}, {"error_inside", p.error_inside}});
            shown.push_back(fmt::format("{} {:+.1f} % ({:+.1f} %)", p.id, 100 * p.error, 100 * p.error_inside));
        }
        pressed_by[k->key] = list;
        if (!shown.empty())
            std::cout << fmt::format("    pressed by (error as fitted; in brackets a tenth of the range back inside): {}\n",
                                     fmt::join(shown, "; "));
    }
    print_kept("", r.unexercised, r.single_source);
    return {{"fitted_on", score_json(r.after)}, {"before", score_json(r.before)}, {"at_bounds", at_bounds},
            {"pressed_by", pressed_by}, {"unexercised", r.unexercised}, {"single_source", r.single_source}};
}

}  // namespace

Run setup_calibrate(CLI::App& cmd) {
    struct Opts {
        std::string file, out;
        int holdout_every = 0;
        bool per_generation = false, from_generic = false;
    };
    auto o = std::make_shared<Opts>();
    cmd.add_option("RUNS", o->file,
                   "JSON array of your measured runs (case format), all on one GPU kind; where they measured memory, "
                   "it fits the allocator's share and the runtime too")
        ->required();
    cmd.add_option("-o,--output", o->out, "Write the fitted cluster profile here (use it as --cluster FILE)");
    cmd.add_option("--holdout-every", o->holdout_every,
                   "Fit on all runs but every N-th and report the error on those held out");
    cmd.add_flag("--per-generation", o->per_generation,
                 "Fit a set shared by all GPU generations, then each generation from it, from generic values, and "
                 "print the constants (how the built-in defaults are made)");
    cmd.add_flag("--from-generic", o->from_generic,
                 "Start from generic constants instead of the fitted defaults (an honest hold-out test of the fit; "
                 "--per-generation always does)");
    return [o]() {
        if (o->holdout_every < 0 || o->holdout_every == 1)
            throw ConfigError("--holdout-every", "0 (no hold-out) or an integer ≥ 2");
        const FileAccess files{std::filesystem::path(o->file).parent_path().string()};
        const CaseList list = read_cases(read_json_file(o->file, "RUNS"), "RUNS", &files);
        if (!list.unreadable.empty()) throw ConfigError("RUNS", "readable cases; " + list.unreadable.front().second);
        if (list.cases.empty()) throw ConfigError("RUNS", "at least one run");
        // Group runs: by generation, or all together (then they must share one GPU).
        std::map<std::string, std::vector<size_t>> groups;
        for (size_t i = 0; i < list.cases.size(); ++i) {
            const Case& c = list.cases[i];
            if (!o->per_generation && c.cluster.gpu.id != list.cases[0].cluster.gpu.id)
                throw ConfigError(fmt::format("RUNS[{}].cluster.gpu", i),
                                  fmt::format("the GPU of the first run ({}) — calibrate one cluster at a time, got {}",
                                              list.cases[0].cluster.gpu.id, c.cluster.gpu.id));
            groups[o->per_generation ? c.cluster.gpu.generation : c.cluster.gpu.id].push_back(i);
        }
        // Published runs of several sources (how the built-in defaults are made): a constant only one
        // source's runs depend on is left where it starts. One cluster's own runs fit every constant.
        // Sources are counted as the fit counts them: over the runs with a measured throughput.
        std::set<std::string> sources;
        for (const Case& c : list.cases)
            if (measured_throughput(c)) sources.insert(c.source);
        const int min_sources = sources.size() > 1 ? 2 : 1;
        // --per-generation: fit_generations on the runs not held out (the shared set, then each generation
        // from it); otherwise one fit from this cluster's constants or the generic ones.
        std::vector<Case> fit_all;
        std::map<std::string, std::vector<Case>> held_by;
        for (const auto& [key, idx] : groups)
            for (size_t k = 0; k < idx.size(); ++k) {
                const bool hold = o->holdout_every > 0 && k % static_cast<size_t>(o->holdout_every) == 0;
                (hold ? held_by[key] : fit_all).push_back(list.cases[idx[k]]);
            }
        GenerationFit generations;
        if (o->per_generation) {
            generations = fit_generations(fit_all, min_sources);
            std::cout << fmt::format("shared by every generation ({} runs fitted)\n", fit_all.size());
            // The runs as fit_generations scores them: each at its generation's generic start.
            std::vector<Case> pooled = fit_all;
            for (Case& c : pooled) c.cluster.gpu.eff = generic_efficiency(c.cluster.gpu.generation);
            print_fit(generations.shared, shared_params(), pooled);
            json shared = json::object();  // the shared constants only: the others are each generation's
            for (const Constant& k : efficiency_constants())
                for (const FitParam& f : shared_params())
                    if (f.field == k.field) shared[k.key] = k.to_json(generations.shared.eff);
            std::cout << "  efficiency " << shared.dump() << "\n";
        }
        json profiles = json::object();
        for (const auto& [key, idx] : groups) {
            const std::string& generation = list.cases[idx[0]].cluster.gpu.generation;
            const std::vector<Case>& held = held_by[key];
            std::vector<Case> fit;
            for (const Case& c : fit_all)
                if ((o->per_generation ? c.cluster.gpu.generation : c.cluster.gpu.id) == key) fit.push_back(c);
            Efficiency start = list.cases[idx[0]].cluster.gpu.eff;
            FitResult r;
            if (o->per_generation) {
                for (Case& x : fit) x.cluster.gpu.eff = generic_efficiency(generation);  // as fit_generations has them
                start = shared_start(generation, generations.shared.eff);
                const auto own = generations.generations.find(key);
                if (own != generations.generations.end()) r = own->second;
                else r.eff = start;  // every run of this generation held out
            } else {
                if (o->from_generic) {
                    start = generic_efficiency(generation);
                    for (Case& x : fit) x.cluster.gpu.eff = start;
                }
                r = fit_efficiency(fit, start, kPriorWeight, fit_params(), min_sources);
            }
            // One cluster's measured memory fits the allocator's share and the runtime from there; the
            // throughput scores are the profile's with both (the runtime moves which runs fit).
            std::optional<MemoryFit> m;
            if (!o->per_generation && std::any_of(fit.begin(), fit.end(), [](const Case& c) {
                    return c.measured.memory_gb_per_gpu.has_value();
                })) {
                m = fit_memory(fit, r.eff, kPriorWeight, min_sources);
                r.eff = m->eff;
                r.after = score_efficiency(fit, r.eff);
            }
            std::cout << fmt::format("{} ({} runs fitted{})\n", key, fit.size(),
                                     held.empty() ? "" : fmt::format(", {} held out", held.size()));
            std::vector<std::string> refit;
            if (m)
                for (const FitParam& f : memory_fit_params()) refit.push_back(f.name);
            json cal = print_fit(r, o->per_generation ? generation_params(generation) : fit_params(), fit, refit);
            if (m) cal["memory"] = print_memory_fit(*m);
            if (!held.empty()) {
                const FitScore hb = score_efficiency(held, start), ha = score_efficiency(held, r.eff);
                std::cout << score_line("held, before", hb) << score_line("held, after", ha);
                cal["held_out_before"] = score_json(hb);
                cal["held_out_after"] = score_json(ha);
                if (m) {
                    const MemoryScore mb = score_memory(held, start), ma = score_memory(held, r.eff);
                    std::cout << memory_line("held, before", mb) << memory_line("held, after", ma);
                    cal["memory"]["held_out_before"] = memory_json(mb);
                    cal["memory"]["held_out_after"] = memory_json(ma);
                }
            }
            ClusterSpec profile = list.cases[idx[0]].cluster;
            profile.name = "calibrated-" + key;
            profile.gpu.eff = r.eff;
            for (size_t i : idx) profile.gpus = std::max(profile.gpus, list.cases[i].cluster.gpus);
            json j = to_json(profile);
            j["calibration"] = cal;
            profiles[key] = j;
            if (o->per_generation) std::cout << "  efficiency " << to_json(r.eff).dump() << "\n";
        }
        if (!o->out.empty()) {
            std::ofstream f(o->out);
            if (!f) throw ConfigError("--output", "a writable file path, cannot write \"" + o->out + "\"");
            f << (o->per_generation ? profiles : profiles.begin().value()).dump(2) << "\n";
            std::cout << "wrote " << o->out << "\n";
        }
        return 0;
    };
}

}  // namespace shardplan::app
