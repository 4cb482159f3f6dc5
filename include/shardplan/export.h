/// Launchable configurations from a plan: Megatron-LM command-line arguments, a torchtitan TOML job
/// file, a DeepSpeed JSON config. Option names are those the projects define today (docs/export.md
/// lists each with its source). A layout a framework cannot express is refused with the reason, never
/// approximated silently.
///
///   auto e = export_config(model, cluster, layout, Framework::megatron);
///   if (e.refusal) ...;   // "torchtitan: ZeRO-1/2 have no equivalent; FSDP shards ... (use zero 0 or 3)"
///   std::cout << e.text;
#pragma once
#include <optional>
#include <string>

#include "shardplan/hardware.h"
#include "shardplan/layout.h"
#include "shardplan/model.h"

namespace shardplan {

enum class Framework { megatron, torchtitan, deepspeed };

template <> struct EnumNames<Framework> {
    static constexpr std::array<std::pair<Framework, std::string_view>, 3> table{{
        {Framework::megatron, "megatron"}, {Framework::torchtitan, "torchtitan"}, {Framework::deepspeed, "deepspeed"}}};
};

struct Export {
    std::string text;                    // the configuration, ready to paste or save
    std::optional<std::string> refusal;  // why this framework cannot run this layout
    /// The refusal is only that the framework would run some setting otherwise than planned (the read-back
    /// check); the layout itself has a form in its configuration.
    bool refused_for_settings = false;
};

/// The configuration for `l` on `f`, or the reason `f` cannot run it. What it writes is what was planned:
/// the text is read back by the importer (the framework's defaults for whatever it leaves unsaid) and must
/// plan the same step and memory, or the export is refused naming the settings the framework would run
/// otherwise.
Export export_config(const ModelSpec& m, const ClusterSpec& c, const Layout& l, Framework f);

/// The framework's name as a layout's `framework` (and `--framework`) takes it: "Megatron-LM",
/// "torchtitan", "DeepSpeed". A plan that names no framework is exported as this one runs it: the
/// adapters plan it with this name, so its defaults fill what was not set.
std::string framework_name(Framework f);

}  // namespace shardplan
