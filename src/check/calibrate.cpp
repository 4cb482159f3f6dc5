// Coordinate-descent fit of the efficiency constants (docs/validation.md §Calibration).
#include "shardplan/calibrate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "shardplan/constants.h"
#include "shardplan/error.h"
#include "shardplan/plan.h"

namespace shardplan {

namespace {
// A constant of the one table as a fit moves it: its plausible range in the field's units.
FitParam fit_param(const Constant& k) {
    Efficiency lo, hi;
    k.from_json(lo, k.fit_lo);
    k.from_json(hi, k.fit_hi);
    return {k.key, k.field, lo.*k.field, hi.*k.field};
}
}  // namespace

const std::vector<FitParam>& fit_params() {
    // The fitted constants of the one table, in its order.
    static const std::vector<FitParam> v = [] {
        std::vector<FitParam> out;
        for (const Constant& k : efficiency_constants())
            if (k.fitted) out.push_back(fit_param(k));
        return out;
    }();
    return v;
}

const std::vector<FitParam>& memory_fit_params() {
    static const std::vector<FitParam> v = {fit_param(*find_constant("fragmentation")),
                                            fit_param(*find_constant("reserve_gb"))};
    return v;
}

bool sourced_for_defaults(const FitParam& f) {
    // The NIC share, at nccl-tests' 0.9 of line rate (generic_efficiency's, Efficiency{}): fitted on the
    // published runs it fell to 0.66 on Blackwell, below any measurement of it, held there by GPT-OSS
    // releases that disagree, and pressed a2a to its end (docs/validation.md, "How the defaults were fitted").
    return f.field == &Efficiency::scale_out_bw;
}

const std::vector<FitParam>& shared_params() {
    // Every fitted constant but the GEMMs' shares of peak, which are the GPU's own (its generic start is
    // the generation's cuBLAS figure), and overlap_dp, which is how a framework overlaps its DP traffic
    // (buckets, FSDP prefetch): pooled, the Hopper FSDP runs' near-0 went to Ampere's Megatron runs, whose
    // fit then dropped scale_out_bw to 0.38 to match (docs/validation.md, "One shared set").
    static const std::vector<FitParam> v = [] {
        std::vector<FitParam> out;
        for (const FitParam& f : fit_params()) {
            const std::string n = f.name;
            if (n != "gemm_16" && n != "gemm_8" && n != "gemm_4" && n != "overlap_dp" && !sourced_for_defaults(f))
                out.push_back(f);
        }
        return out;
    }();
    return v;
}

namespace {

// A generation's bf16 GEMM curve taken from kernel timings instead of from the fit of the defaults:
// Blackwell's, read off SimuMax's B200 timings of bf16 GEMMs under load (configs/system/b200_bf16_ceperm.json:
// 0.45-0.51 of peak at 4,096 tokens, 0.37-0.45 at an inner dimension of 512-768: eta_max 0.51 with a roll-off
// of 250), where calibration.json's Blackwell runs, mostly FP8 at 4k-8k tokens, had fitted 0.64 and 992
// (docs/validation.md, "Megatron-LM on one B200 node"). A cluster's own `calibrate` fits them as the rest.
struct MeasuredGemms {
    double gemm_16;        // eta_max, bf16, under load
    double gemm_half_dim;  // elements
    double burst_16;       // what one burst of such a GEMM reaches on the same part (0.60-0.65 there)
};
const std::map<std::string, MeasuredGemms> kMeasuredGemms = {{"blackwell", {0.51, 250.0, 0.63}}};

/// The generation's bf16 GEMM curve from kMeasuredGemms, where it has one.
void take_measured_gemms(Efficiency& e, const std::string& generation) {
    if (const auto m = kMeasuredGemms.find(generation); m != kMeasuredGemms.end()) {
        e.gemm_16 = m->second.gemm_16;
        e.gemm_half_dim = m->second.gemm_half_dim;
    }
}

// `params`' constants of `from` into `to`; the others stay the case's own (its generation's sourced
// values, or a GEMM share a fit across generations leaves to each), so one fit can span generations.
void apply(Efficiency& to, const Efficiency& from, const std::vector<FitParam>& params) {
    for (const FitParam& f : params) to.*(f.field) = from.*(f.field);
}

// The tail hinge: weight 4 from |log| 0.15 to 0.40. Compared on held-out runs (generic start, fit on 2/3
// of each generation, scored on the rest) with weights 0-4, starts 0.12-0.18 and no end; out of sample
// they are within a run or two of each other (docs/validation.md, "The fit's loss").
constexpr double kTailWeight = 4.0;
constexpr double kTailStart = 0.15;  // |log(pred/meas)| 0.15 ≈ 16 % error
constexpr double kTailSpan = 0.25;   // up to |log| 0.40 ≈ 50 % error

// max(0, x) with its corner rounded over ±0.02, so the line searches do not stall on the kink.
double soft_hinge(double x) {
    constexpr double kWidth = 0.02;
    return x > 20 * kWidth ? x : kWidth * std::log1p(std::exp(x / kWidth));
}

// How far `params` of `eff` are from `start`, each in units of its range, squared and summed: the pull
// towards the start that `prior_weight` scales.
double pull(const Efficiency& eff, const Efficiency& start, const std::vector<FitParam>& params) {
    double sum = 0;
    for (const FitParam& f : params) {
        const double d = (eff.*(f.field) - start.*(f.field)) / (f.hi - f.lo);
        sum += d * d;
    }
    return sum;
}

struct Eval {
    double loss = 0;  // mean |log(pred/meas)| + penalties
    FitScore score;
};

Eval evaluate_all(const std::vector<Case>& cases, const Efficiency& eff, const Efficiency& start, double prior,
                  const std::vector<FitParam>& params, bool simulate = false) {
    Eval out;
    std::vector<double> abs_err, sgn_err;
    double log_sum = 0;
    int64_t n = 0;
    for (const Case& c : cases) {
        Case with = c;
        apply(with.cluster.gpu.eff, eff, params);
        const Plan p = plan_case(with, nullptr, simulate);
        if (p.rejection) continue;
        ++out.score.runs;
        if (!p.memory_fits) ++out.score.false_oom;
        const auto meas = measured_throughput(c);
        if (!meas) continue;
        const double pred = p.throughput.tokens_per_s_per_gpu;
        const double e = (pred - *meas) / *meas;
        abs_err.push_back(std::fabs(e));
        sgn_err.push_back(e);
        // |log error|, plus a steep hinge between ~16 % and ~50 % error: the fit pulls in the runs that
        // make the p90, while a run several times off (a framework far below the model) stops pulling
        // and cannot drag a physical constant to its bound (docs/validation.md, "The fit's loss").
        const double le = std::fabs(std::log(pred / *meas));
        log_sum += le + kTailWeight * (soft_hinge(le - kTailStart) - soft_hinge(le - kTailStart - kTailSpan));
        ++n;
    }
    out.score.throughput = error_stats(abs_err, sgn_err);
    const double runs = std::max<double>(1.0, double(out.score.runs));
    out.loss = (n > 0 ? log_sum / double(n) : 0.0) + 0.5 * double(out.score.false_oom) / runs +
               prior * pull(eff, start, params);
    return out;
}

// Coordinate descent from `eff` over `fitted`: each constant by a golden-section search of its range with
// the others held, keeping only what improves `loss`; sweeps until one improves it by less than 1e-7 (at
// most 12).
Efficiency descend(Efficiency eff, const std::vector<FitParam>& fitted,
                   const std::function<double(const Efficiency&)>& loss) {
    double best = loss(eff);
    constexpr double kGolden = 0.6180339887498949;
    for (int sweep = 0; sweep < 12; ++sweep) {
        const double sweep_start = best;
        for (const FitParam& f : fitted) {
            double a = f.lo, b = f.hi;
            auto at = [&](double x) {
                Efficiency e = eff;
                e.*(f.field) = x;
                return loss(e);
            };
            double x1 = b - kGolden * (b - a), x2 = a + kGolden * (b - a);
            double f1 = at(x1), f2 = at(x2);
            for (int it = 0; it < 18; ++it) {
                if (f1 < f2) {
                    b = x2; x2 = x1; f2 = f1; x1 = b - kGolden * (b - a); f1 = at(x1);
                } else {
                    a = x1; x1 = x2; f1 = f2; x2 = a + kGolden * (b - a); f2 = at(x2);
                }
            }
            const double x = f1 < f2 ? x1 : x2, fx = std::min(f1, f2);
            if (fx < best - 1e-12) {
                best = fx;
                eff.*(f.field) = x;
            }
        }
        if (sweep_start - best < 1e-7) break;
    }
    return eff;
}

// The constants of `params` a fit moves: those the runs of at least `min_sources` sources depend on,
// `moves(case, constant)` saying whether a run does. One no run depends on is not exercised: it keeps its
// start value and is no defect however close to a bound that start is. With min_sources 2 (fits from
// published runs of many sources), one that fewer sources' runs depend on is not fitted either: what it
// would take on is that source's (a framework release, a recipe), not the generation's.
std::vector<FitParam> exercised(const std::vector<Case>& cases, const std::vector<FitParam>& params, int min_sources,
                                std::vector<std::string>& unexercised, std::vector<std::string>& single_source,
                                const std::function<bool(const Case&, const FitParam&)>& moves) {
    std::vector<FitParam> fitted;
    for (const FitParam& f : params) {
        std::set<std::string> sources;
        for (const Case& c : cases)
            if (!sources.count(c.source) && moves(c, f)) sources.insert(c.source);
        if (sources.empty()) unexercised.push_back(f.name);
        else if (static_cast<int>(sources.size()) < min_sources) single_source.push_back(f.name);
        else fitted.push_back(f);
    }
    return fitted;
}

}  // namespace

FitScore score_efficiency(const std::vector<Case>& cases, const Efficiency& eff, const std::vector<FitParam>& params) {
    return evaluate_all(cases, eff, eff, 0.0, params, true).score;
}

std::vector<Pull> runs_pressing(const std::vector<Case>& cases, const Efficiency& eff,
                                const std::vector<FitParam>& params, const std::string& key, size_t n) {
    const Constant* k = find_constant(key);
    if (!k) throw std::invalid_argument("runs_pressing: no constant " + key);
    // A tenth of the plausible range back from the end it sits at (past it an input may not go: a2a's 1).
    const double v = k->to_json(eff), step = 0.1 * (k->fit_hi - k->fit_lo);
    const double inside = v >= 0.5 * (k->fit_lo + k->fit_hi) ? v - step : v + step;
    struct Scored {
        Pull pull;
        double loss;
    };
    std::vector<Scored> out;
    for (const Case& c : cases) {
        const auto meas = measured_throughput(c);
        if (!meas) continue;
        Case at = c;
        apply(at.cluster.gpu.eff, eff, params);
        Case back = at;
        k->from_json(back.cluster.gpu.eff, inside);
        const Plan a = plan_case(at, nullptr, true), b = plan_case(back, nullptr, true);
        if (a.rejection || b.rejection) continue;
        const double pa = a.throughput.tokens_per_s_per_gpu, pb = b.throughput.tokens_per_s_per_gpu;
        if (pa <= 0 || pb <= 0) continue;
        // How much further from its measurement the run goes with the constant back inside.
        const double loss = std::fabs(std::log(pb / *meas)) - std::fabs(std::log(pa / *meas));
        if (loss < 1e-3) continue;
        out.push_back({{c.id, (pa - *meas) / *meas, (pb - *meas) / *meas}, loss});
    }
    std::stable_sort(out.begin(), out.end(), [](const Scored& x, const Scored& y) { return x.loss > y.loss; });
    std::vector<Pull> pulls;
    for (size_t i = 0; i < out.size() && i < n; ++i) pulls.push_back(out[i].pull);
    return pulls;
}

FitResult fit_efficiency(const std::vector<Case>& cases, const Efficiency& start, double prior_weight,
                         const std::vector<FitParam>& params, int min_sources) {
    FitResult r;
    r.before = score_efficiency(cases, start, params);
    // Which sources' runs each constant moves (its two ends planned from the start).
    const std::vector<FitParam> fitted =
        exercised(cases, params, min_sources, r.unexercised, r.single_source, [&](const Case& c, const FitParam& f) {
            if (!measured_throughput(c)) return false;
            Case lo = c, hi = c;
            apply(lo.cluster.gpu.eff, start, params);
            apply(hi.cluster.gpu.eff, start, params);
            lo.cluster.gpu.eff.*(f.field) = f.lo;
            hi.cluster.gpu.eff.*(f.field) = f.hi;
            const Plan a = plan_case(lo, nullptr, false), b = plan_case(hi, nullptr, false);
            if (a.rejection || b.rejection) return false;
            const double ta = a.throughput.tokens_per_s_per_gpu, tb = b.throughput.tokens_per_s_per_gpu;
            return std::fabs(ta - tb) > 1e-9 * std::max(ta, tb) || a.memory_fits != b.memory_fits;
        });
    r.eff = descend(start, fitted,
                    [&](const Efficiency& e) { return evaluate_all(cases, e, start, prior_weight, params).loss; });
    r.after = score_efficiency(cases, r.eff, params);
    return r;
}

namespace {
// Every case planned with `eff` whole, its memory compared as validate compares it; `log_mean` takes the
// mean |log(predicted/measured)| of the runs with a measured memory.
MemoryScore memory_score(const std::vector<Case>& cases, const Efficiency& eff, double* log_mean) {
    MemoryScore s;
    std::vector<double> abs, sgn;
    double log_sum = 0;
    for (const Case& c : cases) {
        Case with = c;
        with.cluster.gpu.eff = eff;
        const CaseResult r = predict_case(with);
        if (!r.planned) continue;
        ++s.runs;
        if (!r.fits) ++s.false_oom;
        if (!r.memory_error) continue;
        abs.push_back(std::fabs(*r.memory_error));
        sgn.push_back(*r.memory_error);
        if (memory_far_under(*r.memory_error)) ++s.under_10;
        log_sum += std::fabs(std::log1p(*r.memory_error));
    }
    s.memory = error_stats(abs, sgn);
    if (log_mean) *log_mean = abs.empty() ? 0.0 : log_sum / double(abs.size());
    return s;
}
}  // namespace

MemoryScore score_memory(const std::vector<Case>& cases, const Efficiency& eff) {
    return memory_score(cases, eff, nullptr);
}

MemoryFit fit_memory(const std::vector<Case>& cases, const Efficiency& start, double prior_weight, int min_sources) {
    MemoryFit r;
    r.before = score_memory(cases, start);
    // A source exercises a constant where its measured memory's prediction, or whether one of its runs
    // fits, moves between the two ends of the constant's range.
    const std::vector<FitParam> fitted = exercised(
        cases, memory_fit_params(), min_sources, r.unexercised, r.single_source, [&](const Case& c, const FitParam& f) {
            if (!c.measured.memory_gb_per_gpu) return false;
            Case lo = c, hi = c;
            lo.cluster.gpu.eff = hi.cluster.gpu.eff = start;
            lo.cluster.gpu.eff.*(f.field) = f.lo;
            hi.cluster.gpu.eff.*(f.field) = f.hi;
            const CaseResult a = predict_case(lo), b = predict_case(hi);
            if (!a.memory_error || !b.memory_error) return false;
            return std::fabs(*a.memory_error - *b.memory_error) > 1e-9 || a.fits != b.fits;
        });
    // The runs ran, so a profile that has them not fit pays as the throughput fit does.
    r.eff = descend(start, fitted, [&](const Efficiency& e) {
        double log_mean = 0;
        const MemoryScore s = memory_score(cases, e, &log_mean);
        return log_mean + 0.5 * double(s.false_oom) / std::max<double>(1.0, double(s.runs)) +
               prior_weight * pull(e, start, memory_fit_params());
    });
    r.after = score_memory(cases, r.eff);
    for (const FitParam& f : fitted)
        if (at_fit_bound(*find_constant(f.name), r.eff)) r.at_bounds.push_back(f.name);
    return r;
}

Efficiency generic_efficiency(const std::string& generation) {
    Efficiency e;
    const Efficiency own = default_efficiency(generation);
    for (const Constant& k : efficiency_constants())
        if (!k.fitted) e.*(k.field) = own.*(k.field);
    // Large GEMMs at the generation's own cuBLAS figures (reference B.6): A100 fp16 81-82 % at 8192-16384
    // (S7); H100 bf16 79-80 % at 4096-8192 (S38, S39), H200 fp8 66-69 % at 8192-16384 (S7); B200 bf16 59 %
    // at 16384^2 (S51) to 69 % batched 4x4096x4096x2048 (S39), GB200 fp8 57-58 % and fp4 76 % (S7).
    if (generation == "ampere") e.gemm_16 = 0.82;
    if (generation == "hopper") {
        e.gemm_16 = 0.80;
        e.gemm_8 = 0.68;
    }
    if (generation == "blackwell") {
        e.gemm_8 = 0.58;  // its cuBLASLt figure
        // fp4's burst figure, 0.76, at the share of its burst a B200's bf16 GEMMs keep under load
        // (kMeasuredGemms: 0.51 against 0.63): no source times NVFP4 GEMMs under load, and the fp4 runs
        // are one source's, so the fit leaves it here.
        const MeasuredGemms& b200 = kMeasuredGemms.at("blackwell");
        e.gemm_4 = 0.76 * b200.gemm_16 / b200.burst_16;
    }
    // bf16 where the layers' GEMMs were timed under load (kMeasuredGemms: a B200's, where one burst of a
    // smaller GEMM reaches 0.60-0.65 and S51's 16384^2 0.59).
    take_measured_gemms(e, generation);
    return e;
}

Efficiency shared_start(const std::string& generation, const Efficiency& shared) {
    Efficiency e = generic_efficiency(generation);
    apply(e, shared, shared_params());
    // A GEMM curve measured for the generation stays its own (generation_params); the shares are not shared.
    take_measured_gemms(e, generation);
    return e;
}

std::vector<FitParam> generation_params(const std::string& generation) {
    const bool measured = kMeasuredGemms.count(generation) > 0;
    std::vector<FitParam> out;
    for (const FitParam& f : fit_params())
        if (!(measured && (f.field == &Efficiency::gemm_16 || f.field == &Efficiency::gemm_half_dim)) &&
            !sourced_for_defaults(f))
            out.push_back(f);
    return out;
}

GenerationFit fit_generations(const std::vector<Case>& cases, int min_sources) {
    GenerationFit out;
    std::vector<Case> pooled = cases;
    for (Case& c : pooled) c.cluster.gpu.eff = generic_efficiency(c.cluster.gpu.generation);
    // The shared set on every run at once, each at its generation's generic start (its GEMMs at their
    // cuBLAS figures: a generation whose GEMMs run far from them would pull the shared set; on the
    // published runs a second pass with each generation's fitted GEMMs moves the held-out median by
    // 0.1 pp, docs/validation.md)...
    out.shared = fit_efficiency(pooled, Efficiency{}, kPriorWeight, shared_params(), min_sources);
    std::map<std::string, std::vector<Case>> by_generation;  // the same runs, moved into their generations
    for (Case& c : pooled) by_generation[c.cluster.gpu.generation].push_back(std::move(c));
    // ...then each generation from there, pulled towards it: a generation moves off the shared set only
    // where its own runs of at least min_sources sources say so.
    for (const auto& [generation, runs] : by_generation)
        out.generations[generation] = fit_efficiency(runs, shared_start(generation, out.shared.eff), kPriorWeight,
                                                     generation_params(generation), min_sources);
    return out;
}

LeaveOneSourceOut leave_one_source_out(const std::vector<Case>& cases, int threads) {
    std::vector<std::string> sources;
    for (const Case& c : cases)
        if (std::find(sources.begin(), sources.end(), c.source) == sources.end()) sources.push_back(c.source);
    std::sort(sources.begin(), sources.end());
    // One job per source: fit each generation on the others' runs, predict this source's runs.
    std::vector<std::vector<CaseResult>> held(sources.size());
    auto job = [&](size_t s) {
        std::vector<Case> train;
        for (const Case& c : cases)
            if (c.source != sources[s]) train.push_back(c);
        const GenerationFit fit = fit_generations(train, 2);
        std::map<std::string, Efficiency> fitted;
        for (const Case& c : cases) {
            const std::string& g = c.cluster.gpu.generation;
            if (c.source != sources[s] || fitted.count(g)) continue;
            const auto own = fit.generations.find(g);
            // No other source ran on this generation: the shared set and its generic GEMMs are all there is.
            fitted[g] = own == fit.generations.end() ? shared_start(g, fit.shared.eff) : own->second.eff;
        }
        for (const Case& c : cases) {
            if (c.source != sources[s]) continue;
            Case with = c;
            with.cluster.gpu.eff = fitted[c.cluster.gpu.generation];
            held[s].push_back(predict_case(with));
        }
    };
    const size_t n_threads = std::min<size_t>(
        sources.size(), static_cast<size_t>(threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency())));
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t t = 0; t < n_threads; ++t)
        pool.emplace_back([&] {
            for (size_t s; (s = next.fetch_add(1)) < sources.size();) job(s);
        });
    for (std::thread& t : pool) t.join();

    LeaveOneSourceOut out;
    std::vector<double> abs_all, sgn_all;
    for (size_t s = 0; s < sources.size(); ++s) {
        std::vector<double> abs, sgn;
        std::vector<const CaseResult*> ptrs;
        for (const CaseResult& r : held[s]) {
            ptrs.push_back(&r);
            if (!r.error.empty() || !r.throughput_error) continue;
            abs.push_back(std::fabs(*r.throughput_error));
            sgn.push_back(*r.throughput_error);
        }
        out.sources.push_back({sources[s], error_stats(abs, sgn), ranking_stats(ptrs), first_choice_stats(ptrs)});
        abs_all.insert(abs_all.end(), abs.begin(), abs.end());
        sgn_all.insert(sgn_all.end(), sgn.begin(), sgn.end());
    }
    for (auto& h : held)
        for (CaseResult& r : h) out.cases.push_back(std::move(r));
    out.throughput = error_stats(abs_all, sgn_all);
    // Ranking pairs never span sources (a job is one source's), so the pooled ranking is the sum.
    for (const HeldOutSource& h : out.sources) out.ranking += h.ranking;
    std::vector<const CaseResult*> all;
    for (const CaseResult& r : out.cases) all.push_back(&r);
    out.first_choice = first_choice_stats(all);
    return out;
}

namespace {
json held_json(const ErrorStats& e, const RankingStats& r, const FirstChoiceStats& f) {
    json j = stats_json(e);
    j["ranking"] = ranking_json(r);
    j["first_choice"] = first_choice_json(f);
    return j;
}
}  // namespace

json loso_to_json(const LeaveOneSourceOut& r) {
    json j = held_json(r.throughput, r.ranking, r.first_choice);
    j["by_source"] = json::object();
    for (const HeldOutSource& h : r.sources) j["by_source"][h.source] = held_json(h.throughput, h.ranking, h.first_choice);
    // Each held-out prediction's residual and class: what tools/fit_ranges.py builds the ranges from.
    j["cases"] = json::array();
    for (const CaseResult& c : r.cases)
        if (c.error.empty() && c.throughput_error)
            j["cases"].push_back({{"id", c.id}, {"source", c.source}, {"kind", c.moe ? "moe" : "dense"},
                                  {"generation", c.generation}, {"family", c.family}, {"scope", c.scope},
                                  {"throughput_error", *c.throughput_error},
                                  {"range_host_shift", {c.range_host_slower, c.range_host_faster}},
                                  {"resolved", c.recompute.sentence.empty() ? json(nullptr) : json(c.recompute.sentence)}});
    return j;
}

std::string format_loso(const LeaveOneSourceOut& r) {
    std::string out = "leave one source out: each source predicted with constants fitted (from generic values) on the others\n";
    size_t wide = 26;  // the source's name, as long as the longest
    for (const HeldOutSource& h : r.sources) wide = std::max(wide, text_width(h.source));
    out += fmt::format("{:<{}} {:>6} {:>9} {:>9} {:>12} {:>14}\n", "held-out source", wide, "cases", "median", "p90",
                       "mean signed", "ranking");
    auto row = [&](const std::string& name, const ErrorStats& e, const RankingStats& k) {
        const std::string rank = k.pairs > 0 ? fmt::format("{:.0f} % of {}", 100 * k.share(), k.pairs) : "-";
        out += fmt::format("{:<{}} {:>6} {:>8.1f}% {:>8.1f}% {:>+11.1f}% {:>14}\n", name, wide, e.count,
                           100 * e.median_abs_error, 100 * e.p90_abs_error, 100 * e.mean_signed_error, rank);
    };
    for (const HeldOutSource& h : r.sources) row(h.source, h.throughput, h.ranking);
    row("all held out", r.throughput, r.ranking);
    if (r.first_choice.jobs > 0) out += format_first_choice(r.first_choice) + "\n";
    return out;
}

}  // namespace shardplan
