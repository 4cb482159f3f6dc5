// JSON readers with field paths in every error (docs/json.md, docs/errors.md).
#include "shardplan/io.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <initializer_list>
#include <sstream>

#include <fmt/format.h>

#include "shardplan/constants.h"
#include "shardplan/error.h"
#include "shardplan/hf.h"
#include "shardplan/presets.h"
#include "shardplan/ranges.h"

namespace shardplan {

std::string describe_json(const json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_number()) return v.dump();
    if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (s.size() > 40) {
            // Cut at a character boundary: half a UTF-8 sequence is not valid JSON text (found by fuzz_case).
            size_t cut = 40;
            while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
            s = s.substr(0, cut) + "...";
        }
        return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    return v.is_array() ? "an array" : "an object";
}

namespace {

/// A JSON object being read, with its path for error messages.
class Reader {
public:
    Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object()) throw ConfigError(path_, "an object, got " + describe_json(j_));
    }
    std::string at(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
    bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
    const json& raw(const char* key) const { return j_.at(key); }

    void only(std::initializer_list<const char*> allowed) const { only(std::vector<const char*>(allowed)); }
    void only(const std::vector<const char*>& allowed) const {
        for (auto it = j_.begin(); it != j_.end(); ++it) {
            bool ok = false;
            for (const char* a : allowed) ok = ok || it.key() == a;
            if (!ok) {
                std::string list;
                for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
                throw ConfigError(at(it.key().c_str()), "a known field (" + list + "); this one is unknown");
            }
        }
    }
    void require(const char* key) const {
        if (!has(key)) throw ConfigError(at(key), "a value; the field is missing");
    }
    int64_t integer(const char* key, int64_t fallback) const {
        if (!has(key)) return fallback;
        const json& v = j_.at(key);
        if (v.is_number_integer()) {
            if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
                throw ConfigError(at(key), "an integer below 2^63, got " + v.dump());
            return v.get<int64_t>();
        }
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
        }
        throw ConfigError(at(key), "an integer, got " + describe_json(v));
    }
    int64_t required_integer(const char* key) const {
        require(key);
        return integer(key, 0);
    }
    /// A field whose absence (or null) the layout keeps as 0, "not stated", to be derived later: a value
    /// that is given must be positive, so that a typed 0 is refused rather than read as not stated.
    int64_t stated_positive(const char* key, const char* expected = "a positive integer") const {
        const int64_t v = integer(key, 0);
        if (has(key) && v <= 0) throw ConfigError(at(key), fmt::format("{}, got {}", expected, v));
        return v;
    }
    double number(const char* key, double fallback) const {
        if (!has(key)) return fallback;
        const json& v = j_.at(key);
        if (!v.is_number() || !std::isfinite(v.get<double>()))
            throw ConfigError(at(key), "a number, got " + describe_json(v));
        return v.get<double>();
    }
    bool boolean(const char* key, bool fallback) const {
        if (!has(key)) return fallback;
        const json& v = j_.at(key);
        if (!v.is_boolean()) throw ConfigError(at(key), "true or false, got " + describe_json(v));
        return v.get<bool>();
    }
    std::string string(const char* key, const std::string& fallback) const {
        if (!has(key)) return fallback;
        const json& v = j_.at(key);
        if (!v.is_string()) throw ConfigError(at(key), "a string, got " + describe_json(v));
        return v.get<std::string>();
    }
    template <typename E>
    E choice(const char* key, E fallback) const {
        if (!has(key)) return fallback;
        const json& v = j_.at(key);
        if (v.is_string())
            if (auto e = parse_enum<E>(v.get<std::string>())) return *e;
        throw ConfigError(at(key), "one of " + enum_choices<E>() + ", got " + describe_json(v));
    }

private:
    const json& j_;
    std::string path_;
};

}  // namespace

std::string read_text_file(const std::string& file, const std::string& field, const std::string& kind) {
    const std::string shown = fmt::format("\"{}\"", printable(file, 100));
    if (file == "-") return read_text_stream(std::cin, field, kind, "stdin");
    // Refused before it is opened when it is not a regular file: opening a FIFO blocks, /dev/zero never
    // ends, and a directory "opens" with a size of 2^63 - 1. stat() follows symbolic links.
    std::error_code ec;
    const auto st = std::filesystem::status(file, ec);
    if (ec || !std::filesystem::exists(st)) throw ConfigError(field, "a readable file, cannot open " + shown);
    if (!std::filesystem::is_regular_file(st))
        throw ConfigError(field, "a regular " + kind + " file, " + shown + " is " +
                                     (std::filesystem::is_directory(st) ? "a directory" : "a device, FIFO or socket"));
    std::ifstream in(file, std::ios::binary);
    if (!in) throw ConfigError(field, "a readable file, cannot open " + shown);
    return read_text_stream(in, field, kind, shown);
}

std::string read_text_stream(std::istream& in, const std::string& field, const std::string& kind,
                             const std::string& shown) {
    // Read in chunks, at most one byte past the limit: a file's size can change while it is read.
    std::string text;
    char chunk[1 << 16];
    while (text.size() <= static_cast<size_t>(kMaxJsonFileBytes) && in.read(chunk, sizeof chunk).gcount() > 0)
        text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > static_cast<size_t>(kMaxJsonFileBytes))
        throw ConfigError(field, "a " + kind + " file of at most 64 MiB, " + shown + " is larger");
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw ConfigError(field, kind + ", " + shown + " is empty");
    return text;
}

json read_json_file(const std::string& file, const std::string& field) {
    const std::string shown = file == "-" ? "stdin" : fmt::format("\"{}\"", printable(file, 100));
    return parse_json_text(read_text_file(file, field, "JSON"), field, shown);
}

json parse_json_text(const std::string& text, const std::string& field, const std::string& where) {
    const std::string what = where.empty() ? "valid JSON" : "valid JSON in " + where;
    // The callback sees every container open and close and every key: nesting is refused past
    // kMaxJsonDepth (nothing after the parse recurses deeper), and a key repeated in one object is
    // refused instead of silently keeping the last value.
    std::vector<std::vector<std::string>> keys;  // the keys of each open object (arrays push an empty list)
    std::string problem;
    auto check = [&](int depth, json::parse_event_t event, json& parsed) {
        using E = json::parse_event_t;
        if (event == E::object_start || event == E::array_start) {
            if (depth >= kMaxJsonDepth) {
                problem = fmt::format("{} nested at most {} deep", what, kMaxJsonDepth);
                throw std::length_error(problem);
            }
            keys.emplace_back();
        } else if (event == E::object_end || event == E::array_end) {
            if (!keys.empty()) keys.pop_back();
        } else if (event == E::key && !keys.empty()) {
            const std::string& k = parsed.get_ref<const std::string&>();
            auto& seen = keys.back();
            for (const std::string& s : seen)
                if (s == k) {
                    problem = what + " with each key once per object, \"" + printable(k, 40) + "\" is repeated";
                    throw std::length_error(problem);
                }
            seen.push_back(k);
        }
        return true;
    };
    try {
        return json::parse(text, check);
    } catch (const json::parse_error& e) {
        throw ConfigError(field, fmt::format("{}, parse error at byte {}", what, e.byte));
    } catch (const json::out_of_range&) {  // 1e999: a number that overflows a double
        throw ConfigError(field, what + " with finite numbers, one overflows a double");
    } catch (const std::length_error&) {
        if (problem.empty()) throw;
        throw ConfigError(field, problem);
    }
}

ModelSpec model_from_file(const std::string& file, const std::string& field) {
    const json j = read_json_file(file, field);
    if (!looks_like_hf_config(j)) return model_from_json(j, field);
    // A config.json without _name_or_path is named after its folder (…/Llama-3.1-8B/config.json) or file.
    const std::filesystem::path p(file);
    return model_from_hf_config(j, field,
                                p.stem() == "config" && p.has_parent_path() && !p.parent_path().filename().empty()
                                    ? p.parent_path().filename().string()
                                    : p.stem().string());
}

ModelSpec model_from_json(const json& j, const std::string& path, const FileAccess* files) {
    if (j.is_string()) {
        // A preset name, or (where files may be read) the path of a model file (shardplan's format or a
        // Hugging Face config.json), relative to the case file's folder.
        const std::string name = j.get<std::string>();
        if (has_model_preset(name) || !name.ends_with(".json")) return preset_model(name, path);
        if (!files)
            throw ConfigError(path, "a preset name or an inline model object (the server reads no files), got " +
                                        describe_json(j));
        const std::filesystem::path p(name);
        const std::string file =
            p.is_absolute() || files->base_dir.empty() ? name : (std::filesystem::path(files->base_dir) / p).string();
        return model_from_file(file, path);
    }
    if (looks_like_hf_config(j)) return model_from_hf_config(j, path);
    Reader r(j, path);
    r.only({"name", "preset", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "mlp", "norm",
            "tied_embeddings", "attention", "mla", "moe", "linear_bias", "qkv_bias", "qk_norm", "attention_sinks", "params_b",
            "active_params_b", "sliding_window", "window_layers", "window_kind", "sandwich_norms"});
    // "preset" starts from a built-in model and lets the other fields override it.
    ModelSpec m = r.has("preset") ? preset_model(r.string("preset", ""), r.at("preset")) : ModelSpec{};
    const bool base = r.has("preset");
    auto need = [&](const char* key, int64_t current) { return base ? r.integer(key, current) : r.required_integer(key); };
    m.name = r.string("name", base ? m.name : "custom");
    m.layers = need("layers", m.layers);
    m.hidden = need("hidden", m.hidden);
    m.heads = need("heads", m.heads);
    m.vocab = need("vocab", m.vocab);
    m.ffn_hidden = r.integer("ffn_hidden", base ? m.ffn_hidden : 0);
    m.kv_heads = r.integer("kv_heads", base ? m.kv_heads : m.heads);
    m.head_dim = r.integer("head_dim", base ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0));
    m.mlp = r.choice<MlpKind>("mlp", m.mlp);
    m.norm = r.choice<NormKind>("norm", m.norm);
    m.attention = r.choice<AttentionKind>("attention", m.attention);
    m.tied_embeddings = r.boolean("tied_embeddings", m.tied_embeddings);
    m.linear_bias = r.boolean("linear_bias", m.linear_bias);
    m.qkv_bias = r.boolean("qkv_bias", m.qkv_bias);
    m.qk_norm = r.boolean("qk_norm", m.qk_norm);
    m.attention_sinks = r.boolean("attention_sinks", m.attention_sinks);
    // A window without a layer count windows every layer (Mistral 7B v0.1); a window of 0 none.
    if (r.has("sliding_window")) {
        m.sliding_window = r.integer("sliding_window", 0);
        m.window_layers = m.sliding_window > 0 ? m.layers : 0;
    }
    m.window_layers = r.integer("window_layers", m.window_layers);
    m.window_kind = r.choice<WindowKind>("window_kind", m.window_kind);
    m.sandwich_norms = r.boolean("sandwich_norms", m.sandwich_norms);
    r.number("params_b", 0);  // stated by a source; informational, type-checked only
    r.number("active_params_b", 0);
    if (r.has("mla")) {
        Reader x(r.raw("mla"), r.at("mla"));
        x.only({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
        m.mla = MlaSpec{x.integer("q_lora_rank", 0), x.required_integer("kv_lora_rank"),
                        x.required_integer("qk_nope_head_dim"), x.integer("qk_rope_head_dim", 0),
                        x.required_integer("v_head_dim")};
    } else if (j.contains("mla")) {
        m.mla.reset();
    }
    if (r.has("moe")) {
        Reader x(r.raw("moe"), r.at("moe"));
        x.only({"experts", "top_k", "shared_experts", "expert_ffn_hidden", "dense_layers", "layer_freq",
                "router_groups", "group_topk"});
        m.moe = MoeSpec{x.required_integer("experts"), x.required_integer("top_k"), x.integer("shared_experts", 0),
                        x.required_integer("expert_ffn_hidden"), x.integer("dense_layers", 0),
                        x.integer("layer_freq", 1), x.integer("router_groups", 1), x.integer("group_topk", 0)};
    } else if (j.contains("moe")) {
        m.moe.reset();
    }
    // A dense layer needs ffn_hidden; a model whose every layer is MoE may leave it out.
    const bool all_moe = m.moe && m.moe->dense_layers == 0 && m.moe->layer_freq == 1;
    if (m.ffn_hidden == 0 && all_moe) m.ffn_hidden = m.moe->expert_ffn_hidden;
    if (m.ffn_hidden == 0) r.require("ffn_hidden");
    validate_model(m, path);
    return m;
}

Efficiency efficiency_from_json(const json& j, Efficiency e, const std::string& path) {
    Reader r(j, path);
    // A profile from before TP overlap became the layout's setting (docs/validation.md "TP overlap").
    if (r.has("overlap_tp"))
        throw ConfigError(r.at("overlap_tp"), "no TP overlap share here: TP overlap is the layout's tp_comm_overlap "
                                              "(true | false), priced by its mechanism (docs/model.md §5.2)");
    if (r.has("overlap_ep"))
        throw ConfigError(r.at("overlap_ep"), "no EP overlap share here: EP overlap is the layout's ep_comm_overlap "
                                              "(true | false) or DualPipe, priced by its mechanism (docs/model.md §5.2)");
    std::vector<const char*> keys;
    for (const Constant& k : efficiency_constants()) keys.push_back(k.key);
    r.only(keys);
    for (const Constant& k : efficiency_constants())
        if (r.has(k.key)) k.from_json(e, r.number(k.key, 0));
    return e;
}

ClusterSpec cluster_from_json(const json& j, const std::string& path) {
    if (j.is_string()) return preset_cluster(j.get<std::string>(), path);
    Reader r(j, path);
    r.only({"name", "preset", "gpu", "gpus", "gpus_per_node", "scale_up_domain", "interconnect_note", "efficiency",
            "calibration"});
    ClusterSpec c = r.has("preset") ? preset_cluster(r.string("preset", ""), r.at("preset")) : ClusterSpec{};
    const bool base = r.has("preset");
    c.name = r.string("name", base ? c.name : "custom");
    if (!base) r.require("gpu");
    bool latency_stated = false;  // the GPU object's own scale_out_latency_us, which an EFA note leaves alone
    if (r.has("gpu")) {
        const json& g = r.raw("gpu");
        if (g.is_string()) {
            c.gpu = preset_gpu(g.get<std::string>(), r.at("gpu"));
        } else {
            Reader x(g, r.at("gpu"));
            x.only({"id", "base", "name", "generation", "hbm_gb", "hbm_usable_gb", "hbm_tbps", "bf16_tflops",
                    "fp8_tflops", "fp4_tflops", "scale_up_gbps", "scale_out_gbps", "scale_up_latency_us",
                    "scale_out_latency_us", "in_switch_reduction", "default_domain", "gpus_per_node", "sms", "source"});
            GpuSpec s = x.has("base") ? preset_gpu(x.string("base", ""), x.at("base")) : GpuSpec{};
            s.id = x.string("id", x.has("base") ? s.id : "custom");
            s.name = x.string("name", s.name.empty() ? s.id : s.name);
            s.generation = x.string("generation", s.generation.empty() ? "hopper" : s.generation);
            if (!x.has("base")) s.eff = default_efficiency(s.generation);
            s.hbm_bytes = x.number("hbm_gb", s.hbm_bytes / 1e9) * 1e9;
            s.hbm_usable_bytes = x.number("hbm_usable_gb", s.hbm_usable_bytes > 0 ? s.hbm_usable_bytes / 1e9 : s.hbm_bytes / 1e9) * 1e9;
            s.hbm_Bps = x.number("hbm_tbps", s.hbm_Bps / 1e12) * 1e12;
            s.peak_16_flops = x.number("bf16_tflops", s.peak_16_flops / 1e12) * 1e12;
            s.peak_8_flops = x.number("fp8_tflops", s.peak_8_flops / 1e12) * 1e12;
            s.peak_4_flops = x.number("fp4_tflops", s.peak_4_flops / 1e12) * 1e12;
            s.scale_up_Bps = x.number("scale_up_gbps", s.scale_up_Bps / 1e9) * 1e9;
            s.scale_out_Bps = x.number("scale_out_gbps", s.scale_out_Bps / 1e9) * 1e9;
            s.scale_up_latency_s = x.number("scale_up_latency_us", x.has("base") ? s.scale_up_latency_s * 1e6 : 2.0) * 1e-6;
            s.scale_out_latency_s = x.number("scale_out_latency_us", x.has("base") ? s.scale_out_latency_s * 1e6 : 6.0) * 1e-6;
            latency_stated = x.has("scale_out_latency_us");
            s.in_switch_reduction = x.boolean("in_switch_reduction", s.in_switch_reduction);
            s.default_domain = x.integer("default_domain", s.default_domain);
            s.default_gpus_per_node = x.integer("gpus_per_node", s.default_gpus_per_node);
            s.sms = x.integer("sms", s.sms);
            if (s.sms < 0 || s.sms > 100000) throw ConfigError(x.at("sms"), fmt::format("0 (not modelled) to 100000 streaming multiprocessors, got {}", s.sms));
            s.source = x.string("source", s.source.empty() ? "user-supplied" : s.source);
            c.gpu = s;
        }
        if (!base) {
            c.gpus_per_node = c.gpu.default_gpus_per_node;
            c.scale_up_domain = c.gpu.default_domain;
        }
    }
    c.gpus = base ? r.integer("gpus", c.gpus) : r.required_integer("gpus");
    c.gpus_per_node = r.integer("gpus_per_node", c.gpus_per_node);
    c.scale_up_domain = r.integer("scale_up_domain", c.scale_up_domain);
    // The network between nodes, where the note names it (the case format's only field for it): AWS's EFA
    // takes its own latency, unless the GPU object states one.
    if (names_efa(r.string("interconnect_note", "")) && !latency_stated) c.gpu.scale_out_latency_s = kEfaScaleOutLatency_s;
    if (r.has("efficiency")) c.gpu.eff = efficiency_from_json(r.raw("efficiency"), c.gpu.eff, r.at("efficiency"));
    validate_cluster(c, path);
    return c;
}

Layout layout_from_json(const json& j, const std::string& path, const std::string& generation, bool moe) {
    Reader r(j, path);
    r.only({"tp", "cp", "pp", "dp", "ep", "etp", "vpp", "micro_batch", "global_batch", "seq_len", "zero", "recompute",
            "recompute_modules", "recompute_method", "recompute_layers", "attention_kernel", "kernels", "stage_split",
            "grad_buckets", "grad_accumulation", "cross_entropy", "allocator", "dropout", "sequence_parallel", "tp_recompute_allgather", "tp_comm_overlap", "ep_comm_overlap", "dp_comm_overlap", "fp8_params", "fp32_shards", "moe_dispatcher", "expert_gemms", "zero3_comm", "cuda_graphs",
            "pipeline_pacing", "pipeline_sends", "pipeline_scatter_gather", "moe_imbalance", "moe_capacity_factor", "precision", "schedule", "grad_dtype", "order", "framework"});
    Layout l;
    l.tp = r.integer("tp", 1);
    l.cp = r.integer("cp", 1);
    l.pp = r.integer("pp", 1);
    l.dp = r.stated_positive("dp");  // 0: not stated; case_from_json derives it (derive_dp)
    l.ep = r.integer("ep", 1);
    l.etp = r.stated_positive("etp", "a positive integer or null");  // 0: not stated, the TP degree (effective_etp)
    l.vpp = r.integer("vpp", 1);
    l.micro_batch = r.integer("micro_batch", 1);
    l.global_batch = r.stated_positive("global_batch");  // 0: not stated (one micro-batch a DP rank, or from the measurement)
    l.seq_len = r.integer("seq_len", l.seq_len);
    const int64_t zero = r.integer("zero", 1);
    if (zero < 0 || zero > 3) throw ConfigError(r.at("zero"), fmt::format("0, 1, 2 or 3, got {}", zero));
    l.zero = static_cast<int>(zero);
    // recompute_modules names what selective recomputation replays (Megatron's names); naming them
    // implies selective, and any other recompute with them is a contradiction.
    l.recompute = r.choice<Recompute>("recompute", r.has("recompute_modules") ? Recompute::selective : Recompute::none);
    if (r.has("recompute_modules")) {
        const json& mods = r.raw("recompute_modules");
        if (!mods.is_array() || mods.empty())
            throw ConfigError(r.at("recompute_modules"), "a non-empty array of " + enum_choices<RecomputeModule>());
        if (l.recompute != Recompute::selective)
            throw ConfigError(r.at("recompute_modules"),
                              fmt::format("only with recompute selective, got recompute {}", enum_name(l.recompute)));
        for (const json& v : mods) {
            const auto mod = v.is_string() ? parse_enum<RecomputeModule>(v.get<std::string>()) : std::nullopt;
            if (!mod) throw ConfigError(r.at("recompute_modules"), "names among " + enum_choices<RecomputeModule>() + ", got " + describe_json(v));
            l.recompute_modules |= module_bit(*mod);
        }
    }
    // Full recomputation's method and N (Megatron's --recompute-method, --recompute-num-layers): only
    // with recompute full, where they mean something.
    for (const char* key : {"recompute_method", "recompute_layers"})
        if (r.has(key) && !r.raw(key).is_null() && l.recompute != Recompute::full)
            throw ConfigError(r.at(key), fmt::format("only with recompute full, got recompute {}", enum_name(l.recompute)));
    if (r.has("recompute_method") && !r.raw("recompute_method").is_null())
        l.recompute_method = r.choice<RecomputeMethod>("recompute_method", RecomputeMethod::uniform);
    if (r.has("recompute_layers") && !r.raw("recompute_layers").is_null()) {
        l.recompute_layers = r.integer("recompute_layers", 1);
        if (l.recompute_layers < 1 || l.recompute_layers > 100000)
            throw ConfigError(r.at("recompute_layers"), fmt::format("a whole number of layers, 1 to 100000, got {}", l.recompute_layers));
    }
    l.framework = r.string("framework", "");
    // "selective" as the framework defines it: Megatron's default module is core_attn (recomputes()'s
    // default); torchtitan's op-level selective checkpointing keeps attention's and every other matmul's
    // output and replays the norms, the activation functions and the matmuls between (nanotron, with no
    // selective mode of its own, is read the same way).
    const std::string family = framework_family(l.framework);
    if (l.recompute == Recompute::selective && l.recompute_modules == 0 && (family == "fsdp" || family == "nanotron"))
        l.recompute_modules = op_level_selective_modules();
    l.precision = r.choice<Precision>("precision", Precision::bf16);
    const FrameworkDefaults fw = framework_defaults(l.framework, generation, l.precision, moe);
    l.attention_kernel = r.choice<AttentionKernel>("attention_kernel", fw.attention);
    l.kernels = r.choice<Kernels>("kernels", fw.kernels);
    l.stage_split = r.choice<StageSplit>("stage_split", fw.stage_split);
    l.grad_buckets = r.choice<GradBuckets>("grad_buckets", fw.grad_buckets);
    l.grad_accumulation = r.choice<GradAccumulation>("grad_accumulation", fw.grad_accumulation);
    l.cross_entropy = r.choice<CrossEntropy>("cross_entropy", fw.cross_entropy);
    l.allocator = r.choice<Allocator>("allocator", fw.allocator);
    l.dropout = r.boolean("dropout", false);
    l.sequence_parallel = r.boolean("sequence_parallel", l.tp > 1);
    l.tp_recompute_allgather = r.boolean("tp_recompute_allgather", true);
    // TP overlap chunks the sequence-parallel collectives: it takes effect with them, and asking for it
    // without them is refused (as Megatron refuses --tp-comm-overlap without --sequence-parallel).
    l.tp_comm_overlap = r.boolean("tp_comm_overlap", fw.tp_comm_overlap);
    if (r.has("tp_comm_overlap")) {
        if (const auto why = tp_overlap_refusal(l)) throw ConfigError(r.at("tp_comm_overlap"), *why);
    }
    l.schedule = r.choice<Schedule>("schedule", l.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b);
    l.ep_comm_overlap = r.boolean("ep_comm_overlap", fw.ep_comm_overlap);
    if (r.has("ep_comm_overlap")) {
        if (const auto why = ep_overlap_refusal(l)) throw ConfigError(r.at("ep_comm_overlap"), *why);
    }
    // A framework's default where it cannot run is off, as NeMo's callback turns TP overlap off without
    // sequence parallelism: the layout then says what runs.
    clear_unrunnable_overlaps(l);
    l.dp_comm_overlap = r.boolean("dp_comm_overlap", fw.dp_comm_overlap);
    l.fp8_params = r.boolean("fp8_params", fw.fp8_params);
    l.fp32_shards = r.boolean("fp32_shards", fw.fp32_shards);
    l.grad_dtype = r.choice<GradDtype>("grad_dtype", fw.grad_dtype);
    l.moe_dispatcher = r.choice<Dispatcher>("moe_dispatcher", fw.moe_dispatcher);
    l.expert_gemms = r.choice<ExpertGemms>("expert_gemms", fw.expert_gemms);
    l.zero3_comm = r.choice<Zero3Comm>("zero3_comm", fw.zero3_comm);
    l.cuda_graphs = r.choice<CudaGraphs>("cuda_graphs", fw.cuda_graphs);
    l.pipeline_pacing = r.choice<PipelinePacing>("pipeline_pacing", fw.pipeline_pacing);
    l.pipeline_sends = r.choice<PipelineSends>("pipeline_sends", fw.pipeline_sends);
    l.pipeline_scatter_gather = r.boolean("pipeline_scatter_gather", fw.pipeline_scatter_gather);
    l.moe_imbalance = r.number("moe_imbalance", 1.0);  // ranges: check_layout (layout.cpp)
    l.moe_capacity_factor = r.number("moe_capacity_factor", 0.0);  // null, as absent: dropless
    if (r.has("order")) {
        auto o = parse_order(r.string("order", ""));
        if (!o) throw ConfigError(r.at("order"), "a permutation of tp, cp, ep, dp, pp joined by '-' (e.g. tp-cp-ep-dp-pp)");
        l.order = *o;
    }
    return l;
}

/// A source's memory note says the reading is global rank 0's ("... on global rank 0 only"), not a
/// maximum across ranks: "rank 0" as words, any case, not "rank 01" or "rank 0-7".
static bool mentions_rank_zero(const std::string& note) {
    const std::string s = ascii_lower(note);
    for (size_t at = s.find("rank 0"); at != std::string::npos; at = s.find("rank 0", at + 1)) {
        const size_t end = at + 6;
        const bool word_start = at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]));
        const bool word_end = end == s.size() || !(std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '-');
        if (word_start && word_end) return true;
    }
    return false;
}

Measured measured_from_json(const json& j, const std::string& path) {
    Measured m;
    if (j.is_null()) return m;
    Reader r(j, path);
    auto opt = [&](const char* key) -> std::optional<double> {
        if (!r.has(key)) return std::nullopt;
        return r.number(key, 0);
    };
    m.tokens_per_s_per_gpu = opt("tokens_per_s_per_gpu");
    m.step_time_s = opt("step_time_s");
    m.mfu_pct = opt("mfu_pct");
    m.hfu_pct = opt("hfu_pct");
    m.tflops_per_gpu = opt("tflops_per_gpu");
    m.peak_tflops_for_mfu = opt("peak_tflops_for_mfu");
    m.memory_gb_per_gpu = opt("memory_gb_per_gpu");
    m.tflops_kind = r.string("tflops_kind", "");
    m.memory_kind = r.string("memory_kind", "");
    if (r.has("memory_stage")) {
        m.memory_stage = r.integer("memory_stage", 0);
        if (*m.memory_stage < 0) throw ConfigError(r.at("memory_stage"), "a pipeline stage index >= 0");
    } else if (mentions_rank_zero(r.string("memory_note", ""))) {
        m.memory_stage = 0;
    }
    return m;
}

namespace {
// A published run's micro-batch and global batch decide its pipeline's fill and how often DP reduces;
// a case that leaves them null is planned with the layout's defaults or, for the global batch, what its
// own measurements imply, and says which (Case::unstated).
void note_unstated_batch(Case& c, const json& layout) {
    const Reader stated(layout, "layout");  // read already: an object
    Layout& l = c.layout;
    if (!stated.has("micro_batch"))
        c.unstated.push_back(fmt::format("layout.micro_batch: not stated; planned at {} sequence a micro-batch", l.micro_batch));
    if (stated.has("global_batch")) return;
    // The step's sequences come in whole micro-batches a DP rank. In double: neither degree is checked yet
    // (check_layout refuses what is out of range, with its field).
    const double per = double(l.micro_batch) * double(l.dp);
    const Measured& m = c.measured;
    if (l.micro_batch > 0 && l.dp > 0 && per <= 1e12 && l.seq_len > 0 && m.tokens_per_s_per_gpu && m.step_time_s &&
        *m.tokens_per_s_per_gpu > 0 && *m.step_time_s > 0) {
        // tokens/s per GPU × GPUs × step time = the step's tokens: the batch the source's own two figures
        // imply, kept where it is whole micro-batches a DP rank to within 2 % (the figures' rounding).
        const double sequences = *m.tokens_per_s_per_gpu * double(c.cluster.gpus) * *m.step_time_s / double(l.seq_len);
        const double steps = std::max(1.0, std::round(sequences / per));
        if (std::fabs(steps * per - sequences) <= 0.02 * sequences && steps * per <= 1e15) {
            l.global_batch = static_cast<int64_t>(steps * per);
            c.unstated.push_back(fmt::format("layout.global_batch: not stated; {} sequences, from the measured "
                                             "tokens/s per GPU × GPUs × step time", l.global_batch));
            return;
        }
    }
    c.unstated.push_back(fmt::format("layout.global_batch: not stated; planned as one micro-batch a DP rank ({:.0f})", per));
}
}  // namespace

Case case_from_json(const json& j, const std::string& path, const FileAccess* files) {
    Reader r(j, path);
    auto sub = [&](const char* key) { return path.empty() ? std::string(key) : path + "." + key; };
    Case c;
    c.id = r.string("id", "");
    c.source = r.string("source", "");
    r.require("model");
    r.require("cluster");
    r.require("layout");
    c.model = model_from_json(r.raw("model"), sub("model"), files);
    c.cluster = cluster_from_json(r.raw("cluster"), sub("cluster"));
    c.layout = layout_from_json(r.raw("layout"), sub("layout"), c.cluster.gpu.generation, c.model.moe.has_value());
    derive_dp(c.layout, c.cluster, sub("layout") + ".dp");
    if (r.has("measured")) c.measured = measured_from_json(r.raw("measured"), sub("measured"));
    note_unstated_batch(c, r.raw("layout"));
    if (c.measured.memory_gb_per_gpu && c.measured.memory_kind.empty())
        c.unstated.push_back("measured.memory_kind: not stated; compared with the device figure (nvidia-smi's)");
    if (r.has("derived")) {
        const json& d = r.raw("derived");
        if (!d.is_array()) throw ConfigError(sub("derived"), "an array of strings");
        for (const json& e : d) {
            if (!e.is_string()) throw ConfigError(sub("derived"), "an array of strings");
            const std::string text = e.get<std::string>();
            if (text.find("[assumed]") == std::string::npos) continue;
            // "layout.seq_len,layout.recompute: [assumed] ..." names the assumed fields before the colon.
            std::stringstream fields(text.substr(0, text.find(':')));
            for (std::string f; std::getline(fields, f, ',');) {
                f.erase(0, f.find_first_not_of(' '));
                f.erase(f.find_last_not_of(' ') + 1);
                if (!f.empty()) c.assumed.push_back(f);
            }
        }
    }
    return c;
}

void derive_dp(Layout& l, const ClusterSpec& c, const std::string& field) {
    if (l.dp != 0) return;
    struct Degree { const char* name; int64_t v; };
    for (const Degree d : {Degree{"tp", l.tp}, {"cp", l.cp}, {"pp", l.pp}})
        if (d.v <= 0 || d.v > 100'000'000)
            return;  // check_layout names the bad degree; dp stays unstated (0) and is reported with it
    // Multiplied in double first: three degrees of up to 10^8 overflow int64.
    const bool fits = double(l.tp) * double(l.cp) * double(l.pp) <= double(c.gpus);
    const int64_t inner = fits ? l.tp * l.cp * l.pp : 0;
    if (!fits || c.gpus % inner != 0)
        throw ConfigError(field, fits ? fmt::format("gpus ({}) divisible by tp·cp·pp ({}), or dp given", c.gpus, inner)
                                      : fmt::format("gpus ({}) divisible by tp·cp·pp ({}·{}·{}), or dp given", c.gpus,
                                                    l.tp, l.cp, l.pp));
    l.dp = c.gpus / inner;
}

bool Case::is_assumed(const std::string& field) const {
    for (const std::string& f : assumed) {
        if (f == field) return true;
        // "layout.*" covers every layout field
        if (f.size() > 2 && f.ends_with(".*") && field.starts_with(f.substr(0, f.size() - 1))) return true;
    }
    return false;
}

}  // namespace shardplan
