/// The tunable constants of the cost model, one table: for each, the Efficiency field, its JSON key
/// (in a cluster's "efficiency" object, calibrate's profiles and `presets --json`), its unit, the range
/// an input may set, the plausible range a fit may move it in, whether `calibrate` fits it, what it
/// means and where its value comes from. The JSON reader and writer, input validation, calibrate's
/// parameters, `presets --json` (and through it tools/fit_defaults.py) and docs/model.md's table all
/// come from here: a key is spelled once, in src/model/constants.cpp.
///
///   for (const Constant& k : efficiency_constants()) std::printf("%s = %g %s\n", k.key, k.to_json(eff), k.unit);
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "shardplan/hardware.h"

namespace shardplan {

struct Constant {
    enum class Scale { one, micro, giga };  // JSON value = field × 1, × 1e6 (s → µs), ÷ 1e9 (bytes → GB)
    const char* key;             // "overlap_dp"
    double Efficiency::*field;   // &Efficiency::overlap_dp
    const char* cpp_field;       // "overlap_dp": its name in C++ (tools/fit_defaults.py writes src/model/hardware.cpp)
    Scale scale;
    const char* unit;            // in JSON units: "fraction", "µs", "GB", "elements", "keys"
    double valid_lo, valid_hi;   // what an input may set, JSON units, both ends included
    double fit_lo, fit_hi;       // the plausible range a fit may move it in, JSON units
    bool fitted;                 // `calibrate` fits it
    const char* meaning;
    const char* source;

    /// SI units per JSON unit: 1, 1e-6 (µs) or 1e9 (GB). from_json multiplies by it.
    double si_per_json() const;
    double to_json(const Efficiency& e) const;
    void from_json(Efficiency& e, double json_value) const;
};

/// Every constant, in the order calibrate fits the fitted ones.
const std::vector<Constant>& efficiency_constants();
/// nullptr if `key` names none.
const Constant* find_constant(std::string_view key);
/// Throws ConfigError(path + ".efficiency." + key, ...) for the first constant outside its valid range.
void validate_efficiency(const Efficiency& e, const std::string& path);

/// Whether `k` of `e` sits at an end of its plausible fit range (within 0.5 % of the range): a fit pressed
/// against a bound is absorbing a mechanism the model lacks, not measuring one.
bool at_fit_bound(const Constant& k, const Efficiency& e);
/// The fitted constants of `e` at_fit_bound. Constants named in `unexercised` (no run depends on them) are
/// left out.
std::vector<const Constant*> constants_at_bounds(const Efficiency& e, const std::vector<std::string>& unexercised = {});

}  // namespace shardplan
