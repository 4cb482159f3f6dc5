#include "shardplan/table.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "shardplan/ranges.h"
#include "shardplan/report.h"
#include "shardplan/search.h"
#include "shardplan/validate.h"

namespace shardplan {

namespace {
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"') out.push_back('"');
        out.push_back(ch);
    }
    out.push_back('"');
    return out;
}

std::string md_field(const std::string& s) {
    std::string out;
    for (char ch : s) {
        if (ch == '|') out.push_back('\\');
        out.push_back(ch == '\n' ? ' ' : ch);
    }
    return out;
}

std::vector<std::string> layout_cells(const Layout& l) {
    return {to_string(l), std::to_string(l.tp), std::to_string(l.cp), std::to_string(l.pp), std::to_string(l.dp),
            std::to_string(l.ep), std::to_string(effective_etp(l)), std::to_string(l.vpp), std::to_string(l.micro_batch),
            std::to_string(global_batch(l)), std::to_string(l.seq_len), std::to_string(l.zero),
            std::string(enum_name(l.recompute)), l.sequence_parallel ? "true" : "false",
            std::string(enum_name(l.precision)), std::string(enum_name(l.schedule)), order_string(l)};
}

const std::vector<std::string> kLayoutHeader = {"layout", "tp", "cp", "pp", "dp", "ep", "etp", "vpp", "micro_batch",
                                                "global_batch", "seq_len", "zero", "recompute", "sequence_parallel",
                                                "precision", "schedule", "order"};
}  // namespace

std::string number_text(double v) {
    if (!std::isfinite(v)) return "";
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    // Prefer the shortest representation that reads back exactly.
    for (int prec = 6; prec < 17; ++prec) {
        char b[40];
        std::snprintf(b, sizeof b, "%.*g", prec, v);
        if (std::strtod(b, nullptr) == v) return b;
    }
    return buf;
}

std::string to_csv(const Table& t) {
    std::string out;
    auto line = [&](const std::vector<std::string>& cells) {
        for (size_t i = 0; i < cells.size(); ++i) {
            if (i) out.push_back(',');
            out += csv_field(cells[i]);
        }
        out += "\r\n";
    };
    line(t.header);
    for (const auto& r : t.rows) line(r);
    return out;
}

std::string to_markdown(const Table& t) {
    std::string out = "|";
    for (const auto& h : t.header) {
        out += ' ';
        out += md_field(h);
        out += " |";
    }
    out += "\n|";
    for (size_t i = 0; i < t.header.size(); ++i) out += " --- |";
    out += "\n";
    for (const auto& r : t.rows) {
        out += "|";
        for (const auto& c : r) {
            out += ' ';
            out += md_field(c);
            out += " |";
        }
        out += "\n";
    }
    return out;
}

Table plan_table(const Plan& p) {
    Table t;
    t.header = {"model", "cluster", "gpus"};
    t.header.insert(t.header.end(), kLayoutHeader.begin(), kLayoutHeader.end());
    std::vector<std::string> row = {p.model.name, p.cluster.gpu.id, std::to_string(p.cluster.gpus)};
    const auto lc = layout_cells(p.layout);
    row.insert(row.end(), lc.begin(), lc.end());
    t.header.push_back("rejection");
    row.push_back(p.rejection ? p.rejection->field + ": expected " + p.rejection->expected : "");
    for (const Field& f : plan_fields()) {
        t.header.push_back(f.key);
        row.push_back(p.rejection ? "" : (f.unit == Unit::flag ? (f.get(p) != 0 ? "true" : "false") : number_text(f.get(p))));
    }
    t.rows.push_back(row);
    return t;
}

Table search_table(const SearchResult& r) {
    Table t;
    t.header = {"set", "rank"};
    t.header.insert(t.header.end(), kLayoutHeader.begin(), kLayoutHeader.end());
    for (const char* h : {"tokens_per_s_per_gpu", "mfu", "hfu", "step_s", "memory_bytes", "margin_bytes", "gap_to_best"})
        t.header.push_back(h);
    const double first = r.best.empty() ? 0.0 : r.best.front().throughput.tokens_per_s_per_gpu;
    auto add = [&](const char* set, const std::vector<Plan>& plans) {
        for (size_t i = 0; i < plans.size(); ++i) {
            const Plan& p = plans[i];
            std::vector<std::string> row = {set, std::to_string(i + 1)};
            const auto lc = layout_cells(p.layout);
            row.insert(row.end(), lc.begin(), lc.end());
            for (double v : {p.throughput.tokens_per_s_per_gpu, p.throughput.mfu, p.throughput.hfu, p.time.step_s,
                             p.memory.total_bytes(), p.margin_bytes(),
                             predicted_gap(first, p.throughput.tokens_per_s_per_gpu)})
                row.push_back(number_text(v));
            t.rows.push_back(row);
        }
    };
    add("best", r.best);
    add("pareto", r.pareto);
    return t;
}

Table validation_table(const ValidationReport& r) {
    Table t;
    t.header = {"id", "source", "gpu", "kind", "predicted_tokens_per_s_per_gpu", "measured_tokens_per_s_per_gpu",
                "throughput_error", "predicted_mfu", "predicted_memory_bytes", "measured_memory_bytes", "fits", "error",
                "resolved"};
    auto opt = [](const std::optional<double>& v) { return v ? number_text(*v) : std::string(); };
    for (const CaseResult& c : r.cases) {
        const bool ok = c.error.empty();
        t.rows.push_back({c.id, c.source, c.gpu, c.moe ? "moe" : "dense", ok ? number_text(c.tokens_per_s_per_gpu) : "",
                          opt(c.measured_tokens_per_s_per_gpu), opt(c.throughput_error), ok ? number_text(c.mfu) : "",
                          ok ? number_text(c.memory_bytes) : "", opt(c.measured_memory_bytes),
                          ok ? (c.fits ? "true" : "false") : "", c.error, c.recompute.sentence});
    }
    return t;
}

}  // namespace shardplan
