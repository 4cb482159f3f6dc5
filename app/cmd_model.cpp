// `shardplan model`: parameter counts of a model (preset, model file or Hugging Face config.json).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "scenario.h"
#include "shardplan/compute.h"
#include "shardplan/error.h"
#include "shardplan/resolve.h"

namespace shardplan::app {

Run setup_model(CLI::App& cmd) {
    struct Opts {
        std::string model;
        bool json = false;
        int64_t seq_len = 4096;
    };
    auto o = std::make_shared<Opts>();
    cmd.add_option("--model", o->model, "Model preset name, model JSON file or Hugging Face config.json")->required();
    cmd.add_option("--seq-len", o->seq_len, "Sequence length for the FLOPs per token (default 4096)");
    cmd.add_flag("--json", o->json, "Print as JSON");
    return [o]() {
        if (o->seq_len <= 0 || o->seq_len > 1'000'000'000) throw ConfigError("--seq-len", "a positive integer up to 10^9");
        const ModelSpec m = model_from_arg(o->model, "--model");
        const int64_t n_moe = moe_layers_in(m, 0, m.layers);
        const LayerParams dense = layer_params(m, false);
        const LayerParams moe = layer_params(m, true);
        const int64_t embedding = embedding_params(m), head = head_params(m);
        if (o->json) {
            std::cout << model_report_json(m, o->seq_len).dump(2) << "\n";
            return 0;
        }
        std::cout << fmt::format("{}\n  parameters   {:>20L}  ({:.2f} B)\n  active       {:>20L}  ({:.2f} B per token)\n",
                                 m.name, model_params_total(m), double(model_params_total(m)) / 1e9,
                                 model_params_active(m), double(model_params_active(m)) / 1e9);
        std::cout << fmt::format("  layers       {} ({} dense, {} MoE), hidden {}, heads {} (kv {}), vocab {}\n", m.layers,
                                 m.layers - n_moe, n_moe, m.hidden, m.heads, m.kv_heads, m.vocab);
        if (m.window_layers > 0)
            std::cout << fmt::format("  attention    {} on {} of the {} layers\n",
                                     m.window_kind == WindowKind::chunked
                                         ? fmt::format("causal inside {}-token chunks", m.sliding_window)
                                         : fmt::format("a {}-token sliding window", m.sliding_window),
                                     m.window_layers, m.layers);
        if (m.sandwich_norms) std::cout << "  norms        four a layer: after attention and after the MLP as well\n";
        auto row = [](const char* what, const LayerParams& p) {
            return fmt::format("  {:<10} attention {:>14L}  mlp/shared {:>14L}  router {:>10L}  experts {:>16L}  norms {:>8L}  total {:>16L}\n",
                               what, p.attn, p.mlp, p.router, p.experts, p.replicated, p.total());
        };
        std::cout << "  per layer\n" << row("dense", dense);
        if (n_moe > 0) std::cout << row("MoE", moe);
        std::cout << fmt::format("  embedding    {:>20L}\n  head + norm  {:>20L}\n", embedding, head);
        std::cout << fmt::format("  training FLOPs per token at {} tokens: {:.4g}\n", o->seq_len,
                                 model_flops_per_token(m, o->seq_len));
        return 0;
    };
}

}  // namespace shardplan::app
