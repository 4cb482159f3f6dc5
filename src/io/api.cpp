// The HTTP API over the planner library (docs/api.md).
#include "shardplan/api.h"

#include <initializer_list>

#include <nlohmann/json.hpp>

#include "shardplan/error.h"
#include "shardplan/export.h"
#include "shardplan/io.h"
#include "shardplan/plan.h"
#include "shardplan/presets.h"
#include "shardplan/suggest.h"
#include "shardplan/report.h"
#include "shardplan/resolve.h"
#include "shardplan/search.h"
#include "shardplan/simulate.h"
#include "shardplan/trace.h"

namespace shardplan {

namespace {

ApiResponse json_response(int status, const json& j) { return {status, "application/json", j.dump()}; }
ApiResponse error_response(int status, const std::string& message) { return json_response(status, {{"error", message}}); }

json parse_body(const std::string& body) {
    if (body.find_first_not_of(" \t\r\n") == std::string::npos) throw ConfigError("body", "a JSON object, got an empty body");
    return parse_json_text(body, "body");
}

/// The case a request body carries, beside the endpoint's own `options` (search: top, pareto, pins;
/// export: format). Any other key is refused by name: a misplaced field ("gpus" beside the cluster, not
/// in it) would otherwise be ignored and the plan made without it. For a search its degrees are not
/// read: the search chooses them, and the page sends its current ones, which need not divide the GPUs.
Case case_of(const json& j, std::initializer_list<const char*> options = {}, bool for_search = false) {
    if (!j.is_object()) throw ConfigError("body", "a JSON object with model, cluster and layout");
    check_case_keys(j, "the request", options);
    json c = j;
    for (const char* o : options) c.erase(o);  // options travel beside the case
    if (!c.contains("layout")) c["layout"] = json::object();
    if (for_search && c["layout"].is_object())
        for (const char* k : {"tp", "cp", "pp", "dp", "ep", "etp", "vpp"}) c["layout"].erase(k);
    return case_from_json(c);  // dp left out is derived there, as for a case file
}

ApiResponse do_search(const json& j, const ApiLimits& limits, const std::atomic<bool>* cancel) {
    const Case c = case_of(j, {"top", "pareto", "pins"}, true);
    SearchOptions opt;
    opt.top = 5;
    if (j.contains("top")) {
        if (!j["top"].is_number_integer() || j["top"].get<int64_t>() < 1 || j["top"].get<int64_t>() > limits.max_top)
            throw ConfigError("top", "an integer in [1, " + std::to_string(limits.max_top) + "]");
        opt.top = static_cast<int>(j["top"].get<int64_t>());
    }
    if (j.contains("pareto")) {
        if (!j["pareto"].is_boolean()) throw ConfigError("pareto", "true or false");
        opt.pareto = j["pareto"].get<bool>();
    }
    // The pins go through the resolver the command line's flags use (resolve.h).
    const SearchSpace sp = search_space(j.contains("pins") ? overrides_from_json(j["pins"]) : Overrides{}, Naming::pins);
    check_pins(sp, c.model, c.cluster, Naming::pins);
    const int64_t size = search_space_size(c.model, c.cluster, sp);
    if (size > limits.max_search_layouts)
        throw ConfigError("pins", "a search of at most " + std::to_string(limits.max_search_layouts) + " layouts; this one has " +
                                      std::to_string(size) + " (pin tp, pp or the schedule to narrow it)");
    opt.cancel = cancel;
    opt.time_budget_s = limits.max_search_s;
    const SearchResult r = search(c.model, c.cluster, c.layout, sp, opt);
    if (r.stopped == "cancelled") return error_response(503, "request: expected the client to wait for the answer");
    if (!r.stopped.empty())  // too costly a request, as one of over max_search_layouts is
        return error_response(400, "pins: expected a search that finishes within its " + r.stopped +
                                       " (pin tp, pp or the schedule to narrow it)");
    return json_response(200, search_to_json(r, opt.pareto));
}

}  // namespace

bool api_is_heavy(const std::string& path) {
    return path == "/api/search" || path == "/api/trace" || path == "/api/fit";
}

ApiResponse handle_api(const std::string& method, const std::string& path, const std::string& body,
                       const ApiLimits& limits, const std::atomic<bool>* cancel) {
    if (body.size() > limits.max_body_bytes)
        return error_response(413, "body: expected at most " + std::to_string(limits.max_body_bytes) + " bytes");
    try {
        if (path == "/api/presets") {
            if (method != "GET") return error_response(405, "method: expected GET for /api/presets");
            static const std::string cached = presets_json().dump();
            return {200, "application/json", cached};
        }
        if (path == "/api/model") {
            // A model's parameter counts and its shardplan model object, as `shardplan model --json`: how the
            // page reads a Hugging Face config.json the visitor loads (the server reads no files).
            if (method != "POST") return error_response(405, "method: expected POST for /api/model");
            const json j = parse_body(body);
            if (!j.is_object() || !j.contains("model")) throw ConfigError("body", "a JSON object with model (and seq_len)");
            for (const auto& [k, v] : j.items())
                if (k != "model" && k != "seq_len") throw ConfigError(k, "a known field of the request: model, seq_len");
            int64_t seq_len = 4096;
            if (j.contains("seq_len")) {
                if (!j["seq_len"].is_number_integer()) throw ConfigError("seq_len", "an integer, got " + describe_json(j["seq_len"]));
                seq_len = j["seq_len"].get<int64_t>();
            }
            return json_response(200, model_report_json(model_from_json(j["model"], "model"), seq_len));
        }
        if (path == "/api/export") {
            // A launch configuration for the case's layout, or the framework's reason it cannot run it.
            if (method != "POST") return error_response(405, "method: expected POST for /api/export");
            const json j = parse_body(body);
            if (!j.is_object() || !j.contains("format") || !j["format"].is_string())
                throw ConfigError("format", "one of " + enum_choices<Framework>());
            const auto f = parse_enum<Framework>(j["format"].get<std::string>());
            if (!f) throw ConfigError("format", "one of " + enum_choices<Framework>() + ", got " + describe_json(j["format"]));
            Case c = case_of(j, {"format"});
            // A layout naming no framework is planned as this one runs it: its defaults fill what is unset.
            if (c.layout.framework.empty() && (!j.contains("layout") || j["layout"].is_object())) {
                json named = j;
                named["layout"]["framework"] = framework_name(*f);
                c = case_of(named, {"format"});
            }
            const Export e = export_config(c.model, c.cluster, c.layout, *f);
            if (e.refusal) return error_response(400, "format: expected a framework that can express " +
                                                          to_string(c.layout) + "; " + *e.refusal);
            // What was exported, as planned: the framework whose defaults filled what the request left unset.
            const Plan p = evaluate(c.model, c.cluster, c.layout);
            json planned = {{"framework", c.layout.framework}, {"layout_string", to_string(c.layout)}};
            if (!p.rejection) {
                planned["tokens_per_s_per_gpu"] = p.throughput.tokens_per_s_per_gpu;
                planned["memory_bytes"] = p.memory.total_bytes();
            }
            return json_response(200, {{"format", enum_name(*f)}, {"text", e.text}, {"planned", planned}});
        }
        if (path == "/api/plan" || path == "/api/search" || path == "/api/trace" || path == "/api/fit") {
            if (method != "POST") return error_response(405, "method: expected POST for " + path);
            const json j = parse_body(body);
            if (path == "/api/search") return do_search(j, limits, cancel);
            const Case c = case_of(j);
            if (path == "/api/trace")  // refused before planning (and simulating) a timeline too large to draw
                if (const auto no = trace_refusal(c.model, c.cluster, c.layout, limits.max_trace_passes))
                    return error_response(400, no->field + ": expected " + no->expected);
            if (path == "/api/plan" || path == "/api/fit") {
                const Plan p = evaluate(c.model, c.cluster, c.layout);
                if (p.rejection) return error_response(400, p.rejection->field + ": expected " + p.rejection->expected);
                if (path == "/api/fit") return json_response(200, fit_changes_to_json(p, fit_changes(c.model, c.cluster, c.layout, p)));
                return json_response(200, plan_to_json(p));
            }
            // The simulated step as a Chrome trace, the same document `shardplan trace` writes: one
            // evaluation, one recorded simulation.
            SimulatedStep step;
            const Plan p = evaluate_traced(c.model, c.cluster, c.layout, step);
            if (p.rejection) return error_response(400, p.rejection->field + ": expected " + p.rejection->expected);
            if (!step.result.error.empty()) return error_response(500, "internal error: " + step.result.error);
            return {200, "application/json", trace_text(p, step.result, step.spec)};
        }
        if (method == "GET" || method == "HEAD") {
            if (const Asset* a = find_asset(path)) {
                ApiResponse r{200, a->content_type, std::string(reinterpret_cast<const char*>(a->data), a->size)};
                return r;
            }
        }
        return error_response(404, "path: expected /, /app.js, /panels.js, /style.css or /api/{presets,model,plan,search,trace,fit,export}");
    } catch (const ConfigError& e) {
        return error_response(400, e.what());
    } catch (const std::exception& e) {
        return error_response(500, std::string("internal error: ") + e.what());
    }
}

}  // namespace shardplan
