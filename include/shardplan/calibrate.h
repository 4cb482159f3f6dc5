/// Fitting the efficiency model to measured runs. A small set of physical constants (GEMM efficiency
/// per precision, attention efficiency, achieved NIC bandwidth, DP overlap, per-layer overhead, memory
/// reserve) is fitted by coordinate descent with golden-section line searches, minimising the mean
/// absolute log error of tokens/s per GPU, with a steeper slope for runs 16-50 % off (the tail that
/// makes the p90), plus a penalty for runs predicted not to fit (they ran) and a pull towards the
/// starting values so a handful of runs cannot drag a constant to an extreme.
///
///   FitResult f = fit_efficiency(cases, gpu.eff);
///   f.eff;                       // fitted constants
///   f.before.median_abs_error;   // on these runs, with the starting constants
#pragma once
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
};

/// Predicts every case with `eff` in place of its GPU's efficiencies.
FitScore score_efficiency(const std::vector<Case>& cases, const Efficiency& eff);

/// Fits `params` (default: all of fit_params()) starting from `start`. `prior_weight` scales the pull
/// towards `start` (0 = none). Deterministic.
FitResult fit_efficiency(const std::vector<Case>& cases, const Efficiency& start, double prior_weight = 0.02,
                         const std::vector<FitParam>& params = fit_params());

}  // namespace shardplan
