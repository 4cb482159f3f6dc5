/// Rows and columns for the `--format csv|markdown` outputs of plan, search, validate and sweep.
/// CSV follows RFC 4180 (fields with commas, quotes or line breaks are quoted, quotes doubled); numbers
/// are written in full precision so a spreadsheet gets the same values as `--format json`.
///
///   Table t = plan_table(plan);     // one header row from the field table, one data row
///   std::cout << to_csv(t);
#pragma once
#include <string>
#include <vector>

#include "shardplan/enums.h"

namespace shardplan {

struct Plan;
struct SearchResult;
struct ValidationReport;

enum class OutputFormat { as_table, as_json, as_csv, as_markdown };
template <> struct EnumNames<OutputFormat> {
    static constexpr std::array<std::pair<OutputFormat, std::string_view>, 4> table{{
        {OutputFormat::as_table, "table"}, {OutputFormat::as_json, "json"}, {OutputFormat::as_csv, "csv"},
        {OutputFormat::as_markdown, "markdown"}}};
};

struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

std::string to_csv(const Table& t);
std::string to_markdown(const Table& t);
/// Shortest text that reads back as the same double ("%.17g" trimmed).
std::string number_text(double v);

/// Every scalar of plan_fields(), plus the layout, as one row.
Table plan_table(const Plan& p);
/// One row per layout: the best first (and the Pareto front after, marked, when present).
Table search_table(const SearchResult& r);
/// One row per case.
Table validation_table(const ValidationReport& r);

}  // namespace shardplan
