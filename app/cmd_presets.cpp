// `shardplan presets`: the built-in models, GPUs and clusters.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "shardplan/io.h"
#include "shardplan/presets.h"

namespace shardplan::app {

Run setup_presets(CLI::App& cmd) {
    auto json_out = std::make_shared<bool>(false);
    cmd.add_flag("--json", *json_out, "Print as JSON");
    return [json_out]() {
        if (*json_out) {
            const json j = presets_json();
            std::cout << j.dump(2) << "\n";
            return 0;
        }
        std::cout << "Models\n";
        std::cout << fmt::format("  {:<18} {:>18} {:>18} {:>7} {:>7} {:>6} {:>8}\n", "name", "params", "active", "layers",
                                 "hidden", "heads", "experts");
        for (const ModelSpec& m : model_presets())
            std::cout << fmt::format("  {:<18} {:>18L} {:>18L} {:>7} {:>7} {:>6} {:>8}\n", m.name, model_params_total(m),
                                     model_params_active(m), m.layers, m.hidden, m.heads,
                                     m.moe ? std::to_string(m.moe->experts) : "-");
        std::cout << "\nGPUs\n";
        std::cout << fmt::format("  {:<16} {:>9} {:>10} {:>9} {:>9} {:>7} {:>10} {:>10}\n", "id", "HBM GB", "usable GB",
                                 "bf16 TF", "fp8 TF", "domain", "up GB/s", "out GB/s");
        for (const GpuSpec& g : gpu_presets())
            std::cout << fmt::format("  {:<16} {:>9.1f} {:>10.1f} {:>9.0f} {:>9.0f} {:>7} {:>10.0f} {:>10.1f}\n", g.id,
                                     g.hbm_bytes / 1e9, g.hbm_usable_bytes / 1e9, g.peak_16_flops / 1e12,
                                     g.peak_8_flops / 1e12, g.default_domain, g.scale_up_Bps / 1e9,
                                     g.scale_out_Bps / 1e9);
        std::cout << "\nClusters\n";
        for (const ClusterSpec& c : cluster_presets())
            std::cout << fmt::format("  {:<16} {:>6} × {:<16} {} per node, {} per scale-up domain\n", c.name, c.gpus,
                                     c.gpu.id, c.gpus_per_node, c.scale_up_domain);
        return 0;
    };
}

}  // namespace shardplan::app
