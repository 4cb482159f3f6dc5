// Validation against published runs (docs/validation.md).
#include "shardplan/validate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "shardplan/error.h"
#include "shardplan/plan.h"
#include "shardplan/ranges.h"
#include "shardplan/suggest.h"

namespace shardplan {

CaseList read_cases(const json& array, const std::string& field, const FileAccess* files) {
    if (!array.is_array()) throw ConfigError(field, "a JSON array of cases");
    CaseList out;
    for (size_t i = 0; i < array.size(); ++i) {
        try {
            out.cases.push_back(case_from_json(array[i], fmt::format("[{}]", i), files));
        } catch (const ConfigError& e) {
            out.unreadable.emplace_back(array[i], e.what());
        }
    }
    return out;
}

std::optional<double> measured_throughput(const Case& c) {
    const Measured& m = c.measured;
    if (m.tokens_per_s_per_gpu && *m.tokens_per_s_per_gpu > 0) return *m.tokens_per_s_per_gpu;
    if (m.step_time_s && *m.step_time_s > 0 && c.cluster.gpus > 0)
        return double(global_batch(c.layout)) * double(c.layout.seq_len) / (*m.step_time_s * double(c.cluster.gpus));
    return std::nullopt;
}

Plan plan_case(const Case& c, RecomputeResolution* how, bool simulate) {
    auto plan = [&](const Layout& l) {
        return simulate ? evaluate(c.model, c.cluster, l) : evaluate_closed_form(c.model, c.cluster, l);
    };
    const bool assumed = c.is_assumed("layout.recompute");
    // An unstated recomputation is the framework's own where its recipes say what that is.
    Layout base = c.layout;
    const auto own = assumed ? framework_recompute(c.layout.framework, c.layout.precision) : std::nullopt;
    if (own) {
        base.recompute = own->recompute;
        base.recompute_modules = own->modules;
        base.recompute_method = RecomputeMethod::uniform;
        base.recompute_layers = 1;
    }
    Plan p = plan(base);
    if (how) {
        *how = RecomputeResolution{};
        how->from_framework = own.has_value();
        how->fits_as_written = own ? [&] { const Plan w = plan(c.layout); return !w.rejection && w.memory_fits; }()
                                   : !p.rejection && p.memory_fits;
    }
    if (p.rejection || p.memory_fits || !assumed) {
        if (how && own)
            how->sentence = fmt::format("layout.recompute: {} → {} (the framework's own checkpointing)",
                                        enum_name(c.layout.recompute), recompute_setting_string(base));
        return p;
    }
    // The run ran, so it fit: the fastest recomputation heavier than the assumed one that fits (the
    // least replay a recipe would settle for), or full recomputation when none does.
    // The block method's N is found by planning candidates; the plan of each N tried is kept, so the one
    // chosen is not planned again below.
    std::map<int64_t, Plan> block_plans;
    const auto options = recompute_options(c.model, c.cluster, base, [&](const Layout& l) {
        Plan q = plan(l);
        if (l.recompute_method == RecomputeMethod::block) block_plans.insert_or_assign(l.recompute_layers, q);
        return q;
    });  // full recomputation last
    std::optional<std::pair<std::string, Plan>> best, full;
    for (size_t i = 0; i < options.size(); ++i) {
        const Layout& o = options[i].second;
        const auto tried = o.recompute_method == RecomputeMethod::block ? block_plans.find(o.recompute_layers)
                                                                         : block_plans.end();
        Plan q = tried != block_plans.end() ? std::move(tried->second) : plan(o);
        if (q.rejection) continue;
        if (!q.memory_fits) {
            if (i + 1 == options.size()) full.emplace(options[i].first, std::move(q));  // kept for when none fits
            continue;
        }
        if (!best || q.throughput.tokens_per_s_per_gpu > best->second.throughput.tokens_per_s_per_gpu)
            best.emplace(options[i].first, std::move(q));
    }
    if (!best) best = std::move(full);
    if (!best) return p;
    if (how) {
        how->raised_to_fit = true;
        how->sentence = fmt::format("layout.recompute: {} → {} (the {} does not fit{})", enum_name(c.layout.recompute),
                                    best->first.substr(std::string("recompute ").size()),
                                    own ? fmt::format("framework's own, {},", recompute_setting_string(base)) : std::string("assumed value"),
                                    best->second.memory_fits ? "" : "; neither does this");
    }
    return std::move(best->second);
}

CaseResult predict_case(const Case& c) {
    CaseResult r;
    r.id = c.id;
    r.source = c.source;
    r.gpu = c.cluster.gpu.id;
    r.generation = c.cluster.gpu.generation;
    r.family = framework_family(c.layout.framework);
    r.scope = domain_scope(c.cluster.gpus, c.cluster.scale_up_domain);
    r.moe = c.model.moe.has_value();
    r.unstated = c.unstated;
    r.job = fmt::format("{}|{}|{}|{}|{}|{}|{}", c.source, c.model.name, model_params_total(c.model), c.cluster.gpu.id,
                        c.cluster.gpus, c.layout.seq_len, enum_name(c.layout.precision));
    // Everything predicted comes from model, cluster and layout; the measured part is read after.
    const Plan p = plan_case(c, &r.recompute, true);
    if (p.rejection) {
        r.error = p.rejection->field + ": expected " + p.rejection->expected;
    } else {
        r.tokens_per_s_per_gpu = p.throughput.tokens_per_s_per_gpu;
        r.range_low = p.throughput.range.low;
        r.range_high = p.throughput.range.high;
        r.range_host_slower = p.throughput.range.host_slower;
        r.range_host_faster = p.throughput.range.host_faster;
        r.step_time_s = p.time.step_s;
        r.mfu = p.throughput.mfu;
        r.memory_bytes = p.memory.total_bytes();
        r.allocated_bytes = p.memory.allocated_bytes();
        r.reserved_bytes = p.memory.reserved_bytes();
        r.device_bytes = p.memory.device_bytes();
        r.fits = p.memory_fits;
        // A reading of one rank (nanotron's benchmark reads global rank 0, the first stage) is compared
        // with that stage's figures, not the fullest stage's.
        if (const auto& st = c.measured.memory_stage; st && c.layout.pp > 1) {
            if (*st >= static_cast<int64_t>(p.stages.size()))
                r.error = fmt::format("measured.memory_stage: expected a stage index below pp ({}), got {}", p.stages.size(), *st);
            else {
                const MemoryBreakdown& mem = p.stages[static_cast<size_t>(*st)].memory;
                r.allocated_bytes = mem.allocated_bytes();
                r.reserved_bytes = mem.reserved_bytes();
                r.device_bytes = mem.device_bytes();
            }
        }
        r.planned = true;
        const Layout& l = p.layout;
        r.layout = fmt::format("{} {} mb{} z{} {} sp{} {} {}", to_string(l), enum_name(l.schedule), l.micro_batch, l.zero,
                               enum_name(l.recompute), l.sequence_parallel ? 1 : 0, order_string(l),
                               enum_name(l.grad_dtype));
    }
    r.measured_tokens_per_s_per_gpu = measured_throughput(c);
    r.measured_step_time_s = c.measured.step_time_s;
    if (c.measured.mfu_pct) r.measured_mfu = *c.measured.mfu_pct / 100.0;
    if (c.measured.memory_gb_per_gpu) r.measured_memory_bytes = *c.measured.memory_gb_per_gpu * 1e9;
    if (r.error.empty() && r.measured_tokens_per_s_per_gpu)
        r.throughput_error = (r.tokens_per_s_per_gpu - *r.measured_tokens_per_s_per_gpu) / *r.measured_tokens_per_s_per_gpu;
    // Compared with the figure of the measurement's kind (../shared/validation/README.md): allocated <
    // reserved < device, never one number for all three.
    r.memory_kind = c.measured.memory_kind == "allocated" || c.measured.memory_kind == "reserved" ? c.measured.memory_kind
                                                                                                   : "device";
    const double predicted_kind = r.memory_kind == "allocated"  ? r.allocated_bytes
                                  : r.memory_kind == "reserved" ? r.reserved_bytes
                                                                : r.device_bytes;
    if (r.error.empty() && r.measured_memory_bytes && *r.measured_memory_bytes > 0)
        r.memory_error = (predicted_kind - *r.measured_memory_bytes) / *r.measured_memory_bytes;
    if (r.error.empty() && !r.measured_tokens_per_s_per_gpu) r.error = "no measured throughput to compare with";
    return r;
}

namespace {
double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double pos = q * double(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos)), hi = static_cast<size_t>(std::ceil(pos));
    return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}
}  // namespace

ErrorStats error_stats(std::vector<double> abs_errors, const std::vector<double>& signed_errors) {
    ErrorStats s;
    s.count = static_cast<int64_t>(abs_errors.size());
    s.median_abs_error = quantile(abs_errors, 0.5);
    s.p90_abs_error = quantile(abs_errors, 0.9);
    double sum = 0;
    for (double e : signed_errors) sum += e;
    s.mean_signed_error = signed_errors.empty() ? 0 : sum / double(signed_errors.size());
    return s;
}

namespace {
// The runs of each job that were predicted and measured (ranking and first choice compare only those).
std::map<std::string, std::vector<const CaseResult*>> measured_jobs(const std::vector<const CaseResult*>& cases) {
    std::map<std::string, std::vector<const CaseResult*>> jobs;
    for (const CaseResult* c : cases)
        if (c->throughput_error && c->measured_tokens_per_s_per_gpu && *c->measured_tokens_per_s_per_gpu > 0)
            jobs[c->job].push_back(c);
    return jobs;
}
}  // namespace

RankingStats ranking_stats(const std::vector<const CaseResult*>& cases) {
    RankingStats st;
    for (const auto& [job, runs] : measured_jobs(cases))
        for (size_t i = 0; i < runs.size(); ++i)
            for (size_t k = i + 1; k < runs.size(); ++k) {
                const CaseResult& a = *runs[i];
                const CaseResult& b = *runs[k];
                if (a.layout == b.layout) continue;  // repeats of one layout say nothing about ranking
                const double ma = *a.measured_tokens_per_s_per_gpu, mb = *b.measured_tokens_per_s_per_gpu;
                if (std::max(ma, mb) <= 1.05 * std::min(ma, mb)) continue;  // not more than 5 % apart
                const double pa = a.tokens_per_s_per_gpu, pb = b.tokens_per_s_per_gpu;
                // A predicted tie orders nothing.
                st.add((ma > mb && pa > pb) || (ma < mb && pa < pb), predicted_gap(pa, pb));
            }
    return st;
}

FirstChoiceStats first_choice_stats(const std::vector<const CaseResult*>& cases) {
    FirstChoiceStats st;
    std::vector<double> shortfalls;
    for (const auto& [job, runs] : measured_jobs(cases)) {
        // Not `runs` itself in the lambda: clang 14, which builds the static site, cannot capture a structured binding.
        const std::string& first_layout = runs[0]->layout;
        if (std::all_of(runs.begin(), runs.end(), [&first_layout](const CaseResult* r) { return r->layout == first_layout; })) continue;
        const CaseResult* best = runs[0];
        const CaseResult* pick = runs[0];
        for (const CaseResult* r : runs) {
            if (*r->measured_tokens_per_s_per_gpu > *best->measured_tokens_per_s_per_gpu) best = r;
            if (r->tokens_per_s_per_gpu > pick->tokens_per_s_per_gpu ||
                (r->tokens_per_s_per_gpu == pick->tokens_per_s_per_gpu &&
                 *r->measured_tokens_per_s_per_gpu < *pick->measured_tokens_per_s_per_gpu))
                pick = r;
        }
        const double shortfall = 1.0 - *pick->measured_tokens_per_s_per_gpu / *best->measured_tokens_per_s_per_gpu;
        ++st.jobs;
        if (shortfall <= 0.0) ++st.best;
        if (shortfall <= 0.05) ++st.within_5;
        if (st.jobs == 1 || shortfall > st.worst_shortfall) {
            st.worst_shortfall = shortfall;
            st.worst_pick = pick->id;
            st.worst_best = best->id;
        }
        shortfalls.push_back(shortfall);
    }
    if (!shortfalls.empty()) {
        st.median_shortfall = quantile(shortfalls, 0.5);
        double sum = 0;
        for (double v : shortfalls) sum += v;
        st.mean_shortfall = sum / double(shortfalls.size());
    }
    return st;
}

void RankingStats::add(bool in_order, double predicted_gap) {
    size_t bin = 0;
    while (bin + 1 < kRankingGapFrom.size() && predicted_gap >= kRankingGapFrom[bin + 1]) ++bin;
    for (RankingCount* c : {static_cast<RankingCount*>(this), &by_gap[bin]}) {
        ++c->pairs;
        if (in_order) ++c->ordered;
    }
}

RankingStats& RankingStats::operator+=(const RankingStats& o) {
    pairs += o.pairs;
    ordered += o.ordered;
    for (size_t i = 0; i < by_gap.size(); ++i) {
        by_gap[i].pairs += o.by_gap[i].pairs;
        by_gap[i].ordered += o.by_gap[i].ordered;
    }
    return *this;
}

ValidationReport validate_cases(const CaseList& list) {
    ValidationReport rep;
    for (const Case& c : list.cases) rep.cases.push_back(predict_case(c));
    for (const auto& [raw, why] : list.unreadable) {
        CaseResult r;
        r.id = raw.is_object() && raw.contains("id") && raw["id"].is_string() ? raw["id"].get<std::string>() : "?";
        r.source = raw.is_object() && raw.contains("source") && raw["source"].is_string() ? raw["source"].get<std::string>() : "";
        r.error = why;
        rep.cases.push_back(r);
    }
    ValidationSummary& s = rep.summary;
    s.cases = static_cast<int64_t>(rep.cases.size());
    struct Acc { std::vector<double> abs, sgn; };
    std::map<std::string, Acc> src, gpu, kind;
    Acc all, mem;
    std::map<std::string, Acc> mem_kind;
    for (const CaseResult& r : rep.cases) {
        if (!r.unstated.empty()) ++s.unstated;
        if (r.planned) {  // every published run ran, whether or not its throughput was published
            if (!r.fits) ++s.false_oom;
            if (!r.recompute.fits_as_written) ++s.false_oom_as_given;
            if (r.recompute.from_framework) ++s.framework_recompute;
            if (r.recompute.raised_to_fit) ++s.resolved;
            if (r.memory_error) {
                for (Acc* a : {&mem, &mem_kind[r.memory_kind]}) {
                    a->abs.push_back(std::fabs(*r.memory_error));
                    a->sgn.push_back(*r.memory_error);
                }
                if (memory_far_under(*r.memory_error)) {
                    ++s.memory_under_10;
                    ++s.memory_under_10_by_kind[r.memory_kind];
                }
            }
        }
        if (!r.error.empty()) {
            ++s.unpredicted;
            continue;
        }
        if (!r.throughput_error) continue;
        ++s.predicted;
        if (const double m = *r.measured_tokens_per_s_per_gpu; m >= r.range_low && m <= r.range_high) ++s.in_range;
        const double e = *r.throughput_error;
        for (Acc* a : {&all, &src[r.source], &gpu[r.gpu], &kind[r.moe ? "moe" : "dense"]}) {
            a->abs.push_back(std::fabs(e));
            a->sgn.push_back(e);
        }
    }
    const ErrorStats total = error_stats(all.abs, all.sgn);
    s.median_abs_error = total.median_abs_error;
    s.p90_abs_error = total.p90_abs_error;
    s.memory = error_stats(mem.abs, mem.sgn);
    for (auto& [k, a] : mem_kind) s.memory_by_kind[k] = error_stats(a.abs, a.sgn);
    for (auto& [k, a] : src) s.by_source[k] = error_stats(a.abs, a.sgn);
    for (auto& [k, a] : gpu) s.by_gpu[k] = error_stats(a.abs, a.sgn);
    for (auto& [k, a] : kind) s.by_kind[k] = error_stats(a.abs, a.sgn);
    std::vector<const CaseResult*> all_cases;
    std::map<std::string, std::vector<const CaseResult*>> per_source;
    for (const CaseResult& r : rep.cases) {
        all_cases.push_back(&r);
        per_source[r.source].push_back(&r);
    }
    s.ranking = ranking_stats(all_cases);
    s.first_choice = first_choice_stats(all_cases);
    for (const auto& [k, v] : per_source) {
        if (const RankingStats st = ranking_stats(v); st.pairs > 0) s.ranking_by_source[k] = st;
        if (const FirstChoiceStats st = first_choice_stats(v); st.jobs > 0) s.first_choice_by_source[k] = st;
    }
    return rep;
}

namespace {
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
}  // namespace

std::string format_ranking_gaps(const RankingStats& s) {
    std::string out;
    for (size_t i = 0; i < s.by_gap.size(); ++i) {
        if (s.by_gap[i].pairs == 0) continue;
        const double from = 100 * kRankingGapFrom[i];
        const std::string range = i == 0 ? fmt::format("under {:.0f} %", 100 * kRankingGapFrom[1])
                                  : i + 1 < kRankingGapFrom.size() ? fmt::format("{:.0f}–{:.0f} %", from, 100 * kRankingGapFrom[i + 1])
                                                                   : fmt::format("{:.0f} % or more", from);
        out += fmt::format("{} {} {:.0f} % of {}", out.empty() ? "" : " ·", range, 100 * s.by_gap[i].share(), s.by_gap[i].pairs);
    }
    return out;
}

json ranking_json(const RankingStats& s) {
    json gaps = json::array();
    for (size_t i = 0; i < s.by_gap.size(); ++i)
        gaps.push_back({{"from", kRankingGapFrom[i]},
                        {"to", i + 1 < kRankingGapFrom.size() ? json(kRankingGapFrom[i + 1]) : json(nullptr)},
                        {"pairs", s.by_gap[i].pairs}, {"ordered", s.by_gap[i].ordered}, {"share", s.by_gap[i].share()}});
    return {{"pairs", s.pairs}, {"ordered", s.ordered}, {"share", s.share()}, {"by_predicted_gap", gaps}};
}

json first_choice_json(const FirstChoiceStats& s) {
    auto id = [&](const std::string& v) { return s.jobs > 0 ? json(v) : json(nullptr); };
    return {{"jobs", s.jobs}, {"best", s.best}, {"within_5_pct", s.within_5}, {"median_shortfall", s.median_shortfall},
            {"mean_shortfall", s.mean_shortfall}, {"worst_shortfall", s.worst_shortfall},
            {"worst_pick", id(s.worst_pick)}, {"worst_best", id(s.worst_best)}};
}

std::string format_first_choice(const FirstChoiceStats& s) {
    if (s.jobs == 0) return "";
    std::string out = fmt::format("first choice: in {} of {} jobs the layout predicted fastest is the fastest measured, in {} "
                                  "within 5 % of it; a median {:.1f} % (mean {:.1f} %) below the fastest",
                                  s.best, s.jobs, s.within_5, 100 * s.median_shortfall, 100 * s.mean_shortfall);
    if (s.worst_shortfall > 0)
        out += fmt::format(", at worst {:.1f} % ({}, where {} ran fastest)", 100 * s.worst_shortfall, s.worst_pick, s.worst_best);
    return out;
}

json stats_json(const ErrorStats& s) {
    return {{"count", s.count}, {"median_abs_error", s.median_abs_error}, {"p90_abs_error", s.p90_abs_error},
            {"mean_signed_error", s.mean_signed_error}};
}

json validation_to_json(const ValidationReport& r) {
    json cases = json::array();
    for (const CaseResult& c : r.cases) {
        json j = {{"id", c.id},         {"source", c.source}, {"gpu", c.gpu},     {"kind", c.moe ? "moe" : "dense"},
                  {"generation", c.generation}, {"family", c.family}, {"scope", c.scope}};
        if (c.error.empty() || c.error == "no measured throughput to compare with") {
            j["predicted"] = {{"tokens_per_s_per_gpu", c.tokens_per_s_per_gpu},
                              {"tokens_per_s_per_gpu_range", {c.range_low, c.range_high}},
                              {"range_host_shift", {c.range_host_slower, c.range_host_faster}}, {"step_time_s", c.step_time_s},
                              {"memory", {{"allocated_bytes", c.allocated_bytes}, {"reserved_bytes", c.reserved_bytes},
                                          {"device_bytes", c.device_bytes}}},
                              {"mfu", c.mfu}, {"memory_bytes", c.memory_bytes}, {"fits", c.fits}};
        } else {
            j["predicted"] = nullptr;
        }
        j["measured"] = {{"tokens_per_s_per_gpu", opt(c.measured_tokens_per_s_per_gpu)},
                         {"step_time_s", opt(c.measured_step_time_s)}, {"mfu", opt(c.measured_mfu)},
                         {"memory_bytes", opt(c.measured_memory_bytes)}};
        j["throughput_error"] = opt(c.throughput_error);
        j["memory_error"] = opt(c.memory_error);
        j["memory_kind"] = c.memory_kind;
        j["error"] = c.error.empty() ? json(nullptr) : json(c.error);
        j["resolved"] = c.recompute.sentence.empty() ? json(nullptr) : json(c.recompute.sentence);
        j["unstated"] = c.unstated;
        cases.push_back(j);
    }
    const ValidationSummary& s = r.summary;
    json by = {{"source", json::object()}, {"gpu", json::object()}, {"kind", json::object()}};
    for (const auto& [k, v] : s.by_source) by["source"][k] = stats_json(v);
    for (const auto& [k, v] : s.by_gpu) by["gpu"][k] = stats_json(v);
    for (const auto& [k, v] : s.by_kind) by["kind"][k] = stats_json(v);
    json ranking = ranking_json(s.ranking);
    ranking["by_source"] = json::object();
    for (const auto& [k, v] : s.ranking_by_source) ranking["by_source"][k] = ranking_json(v);
    json first = first_choice_json(s.first_choice);
    first["by_source"] = json::object();
    for (const auto& [k, v] : s.first_choice_by_source) first["by_source"][k] = first_choice_json(v);
    return {{"cases", cases},
            {"summary",
             {{"cases", s.cases}, {"predicted", s.predicted}, {"unpredicted", s.unpredicted},
              {"median_abs_error", s.median_abs_error}, {"p90_abs_error", s.p90_abs_error},
              {"false_oom", s.false_oom},
              {"false_oom_fraction", s.cases > 0 ? double(s.false_oom) / double(s.cases) : 0.0},
              {"false_oom_as_given", s.false_oom_as_given}, {"resolved_recompute", s.resolved},
              {"framework_recompute", s.framework_recompute}, {"unstated", s.unstated},
              {"memory", stats_json(s.memory)}, {"memory_under_10_pct", s.memory_under_10},
              {"memory_by_kind", [&] {
                   json k = json::object();
                   for (const auto& [name, v] : s.memory_by_kind) {
                       k[name] = stats_json(v);
                       const auto u = s.memory_under_10_by_kind.find(name);
                       k[name]["under_10"] = u == s.memory_under_10_by_kind.end() ? 0 : u->second;
                   }
                   return k;
               }()},
              {"range", {{"cases", s.predicted}, {"inside", s.in_range},
                         {"share", s.predicted > 0 ? double(s.in_range) / double(s.predicted) : 0.0}}},
              {"ranking", ranking}, {"first_choice", first}, {"by", by}}}};
}

std::string format_validation(const ValidationReport& r, bool per_case) {
    std::string out;
    if (per_case) {
        out += fmt::format("{:<58} {:>10} {:>10} {:>8} {:>7} {:>8}  {}\n", "case", "predicted", "measured", "error", "MFU",
                           "mem GB", "fits");
        for (const CaseResult& c : r.cases) {
            if (!c.error.empty()) {
                out += fmt::format("{:<58} cannot predict: {}\n", c.id.substr(0, 58), c.error);
                continue;
            }
            out += fmt::format("{:<58} {:>10.0f} {:>10.0f} {:>+7.1f}% {:>6.1f}% {:>8.1f}  {}\n", c.id.substr(0, 58),
                               c.tokens_per_s_per_gpu, c.measured_tokens_per_s_per_gpu.value_or(0),
                               100 * c.throughput_error.value_or(0), 100 * c.mfu, c.memory_bytes / 1e9,
                               c.fits ? "yes" : "NO (false OOM)");
            for (const std::string& u : c.unstated) out += fmt::format("  {}\n", u);
        }
        out += "\n";
    }
    const ValidationSummary& s = r.summary;
    out += fmt::format("{} cases: {} predicted, {} not predicted; throughput error |pred − meas|/meas: median {:.1f} %, "
                       "p90 {:.1f} %; false OOM {} ({:.1f} %)\n",
                       s.cases, s.predicted, s.unpredicted, 100 * s.median_abs_error, 100 * s.p90_abs_error, s.false_oom,
                       s.cases ? 100.0 * double(s.false_oom) / double(s.cases) : 0.0);
    if (s.framework_recompute > 0)
        out += fmt::format("{} cases with an assumed recomputation were planned with their framework's own checkpointing\n",
                           s.framework_recompute);
    out += fmt::format("{} cases had an assumed recomputation that cannot fit and were planned with more; with every "
                       "assumption as written, {} would not fit\n",
                       s.resolved, s.false_oom_as_given);
    if (s.unstated > 0)
        out += fmt::format("{} cases leave their micro-batch, global batch or memory kind unstated and were planned or "
                           "compared as each one's `unstated` says (--json)\n",
                           s.unstated);
    if (s.predicted > 0)
        out += fmt::format("80 % range: {} of {} measured inside ({:.0f} %)\n", s.in_range, s.predicted,
                           100.0 * double(s.in_range) / double(s.predicted));
    if (s.ranking.pairs > 0) {
        out += fmt::format("ranking: {:.0f} % of {} same-job pairs more than 5 % apart ordered as measured", 100 * s.ranking.share(),
                           s.ranking.pairs);
        std::string by;
        for (const auto& [k, v] : s.ranking_by_source) by += fmt::format("{}{} {:.0f} % of {}", by.empty() ? "" : ", ", k, 100 * v.share(), v.pairs);
        out += s.ranking_by_source.size() > 1 ? " (" + by + ")\n" : "\n";
        out += "  by how far apart the two predictions are:" + format_ranking_gaps(s.ranking) + "\n";
    }
    if (s.first_choice.jobs > 0) out += format_first_choice(s.first_choice) + "\n";
    if (s.memory.count > 0) {
        out += fmt::format("memory, {} cases with a measurement: median {:.1f} %, p90 {:.1f} %, mean signed {:+.1f} %; "
                           "{} ({:.0f} %) measured more than 10 % above the prediction\n",
                           s.memory.count, 100 * s.memory.median_abs_error, 100 * s.memory.p90_abs_error,
                           100 * s.memory.mean_signed_error, s.memory_under_10,
                           100.0 * double(s.memory_under_10) / double(s.memory.count));
        for (const auto& [k, v] : s.memory_by_kind) {
            const auto u = s.memory_under_10_by_kind.find(k);
            const int64_t under = u == s.memory_under_10_by_kind.end() ? 0 : u->second;
            out += fmt::format("  {} (compared with the predicted {} figure): {} cases, median {:.1f} %, p90 {:.1f} %, "
                               "mean signed {:+.1f} %, {} ({:.0f} %) more than 10 % under\n",
                               k, k, v.count, 100 * v.median_abs_error, 100 * v.p90_abs_error, 100 * v.mean_signed_error,
                               under, v.count > 0 ? 100.0 * double(under) / double(v.count) : 0.0);
        }
    }
    auto table = [&](const char* title, const std::map<std::string, ErrorStats>& m) {
        size_t wide = 26;  // a source's, GPU's or kind's name, as long as the longest
        for (const auto& [k, v] : m) wide = std::max(wide, text_width(k));
        out += fmt::format("\n{:<{}} {:>6} {:>9} {:>9} {:>12}\n", title, wide, "cases", "median", "p90", "mean signed");
        for (const auto& [k, v] : m)
            out += fmt::format("{:<{}} {:>6} {:>8.1f}% {:>8.1f}% {:>+11.1f}%\n", k, wide, v.count,
                               100 * v.median_abs_error, 100 * v.p90_abs_error, 100 * v.mean_signed_error);
    };
    table("by source", s.by_source);
    table("by GPU", s.by_gpu);
    table("by kind", s.by_kind);
    return out;
}

}  // namespace shardplan
