/// Rendering a Plan. One field table (plan_fields) names every scalar result once, with its JSON key,
/// its label and its unit; the JSON writer, the terminal report and the web page all walk it, so a
/// new result is added in one place. Arrays (comm, groups, stages) have their own fixed shapes,
/// documented in docs/json.md.
///
///   std::cout << plan_to_json(plan).dump(2);
///   std::cout << format_plan(plan, /*color=*/isatty(1));
#pragma once
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardplan/plan.h"
#include "shardplan/search.h"
#include "shardplan/suggest.h"

namespace shardplan {

enum class Unit { bytes, seconds, fraction, flops_per_s, flops, tokens_per_s, count, flag };

struct Field {
    const char* key;    // "memory.weights_bytes": dotted path in the JSON report
    const char* label;  // "weights" in the terminal and on the page
    Unit unit;
    double (*get)(const Plan&);
};

std::span<const Field> plan_fields();

/// Sentences a reader should see: crossing groups, memory shortfall, uneven stages, bubble share.
std::vector<std::string> plan_findings(const Plan& p);

nlohmann::json plan_to_json(const Plan& p);
/// `search --json` and POST /api/search: counts, rejections by reason, the best plans (and the Pareto
/// front when asked), each as plan_to_json.
nlohmann::json search_to_json(const SearchResult& r, bool pareto);
std::string format_plan(const Plan& p, bool color);
/// POST /api/fit and `plan`'s list when a layout does not fit: each single change (suggest.h) with its
/// layout, whether it fits, its speed and memory.
nlohmann::json fit_changes_to_json(const Plan& p, const std::vector<FitChange>& changes);
/// The same as text: the changes that fit, fastest first, with their cost against the layout as planned
/// (or, when none fits, the closest).
std::string format_fit_changes(const Plan& p, const std::vector<FitChange>& changes);

/// "1.23 GB", "4.56 ms", "38.2 %": the one formatter of every unit.
std::string format_value(double v, Unit u);

}  // namespace shardplan
