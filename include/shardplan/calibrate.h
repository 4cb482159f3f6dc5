/// Fitting the efficiency model to measured runs. A small set of physical constants (GEMM efficiency
/// per precision, attention efficiency, achieved NIC bandwidth, DP overlap, per-layer overhead, memory
/// reserve) is fitted by coordinate descent with golden-section line searches, minimising the mean
/// absolute log error of tokens/s per GPU, with a steeper slope for runs 16-50 % off (the tail that
/// makes the p90), plus a penalty for runs predicted not to fit (they ran) and a pull towards the
/// starting values so a handful of runs cannot drag a constant to an extreme. A cluster's measured
/// per-GPU memory fits the allocator's share and the runtime beside it the same way (fit_memory).
///
///   FitResult f = fit_efficiency(cases, gpu.eff);
///   f.eff;                       // fitted constants
///   f.before.median_abs_error;   // on these runs, with the starting constants
///   MemoryFit m = fit_memory(cases, f.eff);   // then the memory constants, from there
#pragma once
#include <map>
#include <string>
#include <vector>

#include "shardplan/hardware.h"
#include "shardplan/io.h"
#include "shardplan/validate.h"

namespace shardplan {

/// One fitted constant: its name in the profile JSON, where it lives, and its physical range.
struct FitParam {
    const char* name;
    double Efficiency::*field;
    double lo, hi;
};

/// The constants `calibrate` fits, in the order it fits them.
const std::vector<FitParam>& fit_params();

struct FitScore {
    ErrorStats throughput;  // over runs with a measured throughput
    int64_t false_oom = 0;
    int64_t runs = 0;
};

struct FitResult {
    Efficiency eff;
    FitScore before, after;
    /// Fitted constants no run's prediction depends on (no MoE run for moe and a2a, say): left at their
    /// start, and no model defect however close to a bound that start is.
    std::vector<std::string> unexercised;
    /// Fitted constants fewer than min_sources sources' runs depend on: left at their start too (what they
    /// would take on is one source's, not the generation's), and no model defect.
    std::vector<std::string> single_source;
};

/// Predicts every case with `params`' constants of `eff` in place of its GPU's (the others its own).
FitScore score_efficiency(const std::vector<Case>& cases, const Efficiency& eff,
                          const std::vector<FitParam>& params = fit_params());

/// Where a fit from generic values starts: the large-GEMM shares at the generation's own cuBLAS figures
/// (reference B.6), the other fitted constants at Efficiency{}, and the generation's own value of the
/// ones no fit moves (sourced per generation, e.g. attn_fused). `calibrate --from-generic` starts here.
Efficiency generic_efficiency(const std::string& generation);

/// Whether the built-in defaults (fit_generations: `calibrate --per-generation`, each leave-one-source-out
/// refit) take this fitted constant from its source instead of fitting it: scale_out_bw, nccl-tests' 0.9 of
/// line rate. A cluster's own `calibrate` fits it as the rest.
bool sourced_for_defaults(const FitParam& f);

/// The constants one fit shares across GPU generations: every fitted one but the GEMMs' shares of peak
/// (the GPU's own), overlap_dp (a framework's own overlap) and those sourced_for_defaults.
const std::vector<FitParam>& shared_params();

/// A generation's start under a shared fit: generic_efficiency with the shared constants of `shared`, but a
/// GEMM roll-off measured for the generation (Blackwell's) kept.
Efficiency shared_start(const std::string& generation, const Efficiency& shared);

/// The constants fit_generations fits for one generation: fit_params() less those it takes from kernel
/// timings (Blackwell's bf16 gemm_16 and gemm_half_dim) and those sourced_for_defaults.
std::vector<FitParam> generation_params(const std::string& generation);

/// Fits `params` (default: all of fit_params()) starting from `start`. `prior_weight` scales the pull
/// towards `start` (0 = none). A constant fewer than `min_sources` sources' runs depend on keeps its start
/// (FitResult::single_source): 2 for the defaults fitted on published runs and the leave-one-source-out
/// refits, 1 for one cluster's own runs. Deterministic.
inline constexpr double kPriorWeight = 0.02;
FitResult fit_efficiency(const std::vector<Case>& cases, const Efficiency& start, double prior_weight = kPriorWeight,
                         const std::vector<FitParam>& params = fit_params(), int min_sources = 1);

/// The memory constants a cluster's own `calibrate` fits to the per-GPU memory its runs measured
/// (docs/validation.md, "Calibrating on your own cluster"), in their plausible ranges: the classic
/// caching allocator's share of the activations (`fragmentation`, reserved less allocated) and the
/// runtime beside it (`reserve_gb`, the device figure less the reserved). A reserved reading moves the
/// first (and the second where the cache is trimmed to what the card leaves), a device reading
/// (nvidia-smi) both; an allocated reading neither, as no constant sets it.
const std::vector<FitParam>& memory_fit_params();

struct MemoryScore {
    ErrorStats memory;      // runs with a measured memory, each against the predicted figure of its kind
    int64_t under_10 = 0;   // of them, measured more than 10 % above the prediction
    int64_t false_oom = 0;  // runs predicted not to fit (they ran)
    int64_t runs = 0;       // runs planned
};

struct MemoryFit {
    Efficiency eff;
    MemoryScore before, after;
    std::vector<std::string> unexercised;    // no run's memory or fit depends on it: kept at its start
    std::vector<std::string> single_source;  // fewer than min_sources sources' runs do: kept as well
    std::vector<std::string> at_bounds;      // fitted to an end of its plausible range: a model defect
};

/// Every case planned with `eff` as its GPU's constants, its memory compared as validate compares it.
MemoryScore score_memory(const std::vector<Case>& cases, const Efficiency& eff);
/// Fits memory_fit_params() to the cases' measured memory from `start` (which every case takes whole, as
/// the one cluster's profile): mean |log(predicted/measured)|, half a point per run predicted not to fit,
/// and the pull towards `start` of fit_efficiency. Deterministic.
MemoryFit fit_memory(const std::vector<Case>& cases, const Efficiency& start, double prior_weight = kPriorWeight,
                     int min_sources = 1);

/// A run that presses a fitted constant against an end of its plausible range: its throughput error with
/// the constants as fitted, and with that one constant a tenth of the range back inside. The runs whose
/// error grows most are those the missing mechanism is in (past the end an input may not go: a2a's 1).
struct Pull {
    std::string id;
    double error = 0;         // (predicted − measured) / measured, as fitted
    double error_inside = 0;  // the same with the constant a tenth of its range back from the end
};
/// The at most `n` runs of `cases` (each with `params` of `eff` in place) whose |log error| grows most when
/// constant `key` moves a tenth of its plausible range back from the end nearer it, largest first; none
/// that grow by under 0.001. Throws std::invalid_argument for a key the constants table lacks.
std::vector<Pull> runs_pressing(const std::vector<Case>& cases, const Efficiency& eff,
                                const std::vector<FitParam>& params, const std::string& key, size_t n = 5);

/// One shared set plus a set per generation (docs/validation.md, "One shared set"): shared_params()
/// fitted on every run pooled, each at its generation's generic start; then each generation's runs fit
/// from shared_start, pulled towards it. How the built-in defaults (`calibrate --per-generation`) and
/// each leave-one-source-out refit are made. Each case's own constants are ignored.
struct GenerationFit {
    FitResult shared;
    std::map<std::string, FitResult> generations;  // by GpuSpec::generation
};
GenerationFit fit_generations(const std::vector<Case>& cases, int min_sources = 2);

/// Leave-one-source-out (docs/validation.md): for each source, the constants are refit with
/// fit_generations on the other sources' runs only, and that source's runs are predicted with its
/// generation's set (shared_start where no other source ran on it). Its residuals are what a source the
/// project has never seen should expect; the in-sample figures of validate are not.
struct HeldOutSource {
    std::string source;
    ErrorStats throughput;
    RankingStats ranking;
    FirstChoiceStats first_choice;
};
struct LeaveOneSourceOut {
    std::vector<HeldOutSource> sources;  // by name
    std::vector<CaseResult> cases;       // each case predicted with the constants fitted without its source
    ErrorStats throughput;               // over every held-out prediction
    RankingStats ranking;
    FirstChoiceStats first_choice;
};
/// `threads` = 0: one per hardware thread (the sources are fitted in parallel; the result does not
/// depend on it).
LeaveOneSourceOut leave_one_source_out(const std::vector<Case>& cases, int threads = 0);
/// {"median_abs_error", "p90_abs_error", "mean_signed_error", "count", "ranking": {...}, "first_choice": {...},
///  "by_source": {NAME: {... the same}}}
json loso_to_json(const LeaveOneSourceOut& r);
/// The terminal table: each source held out, then all held-out predictions together.
std::string format_loso(const LeaveOneSourceOut& r);

}  // namespace shardplan
