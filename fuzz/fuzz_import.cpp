// libFuzzer target: `shardplan import` — a Megatron launch script (shell words, variables), a torchtitan
// TOML, a DeepSpeed JSON. The first byte picks the format; the rest is the file. Every input ends as a
// case whose layout passed check_layout, or as a ConfigError.
#include <cstdint>
#include <string>

#include "shardplan/error.h"
#include "shardplan/import.h"
#include "shardplan/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace shardplan;
    if (size == 0) return 0;
    static const Framework formats[] = {Framework::megatron, Framework::torchtitan, Framework::deepspeed};
    const Framework f = formats[data[0] % 3];
    static const ImportContext ctx = [] {
        ImportContext c;
        c.cluster = preset_cluster("dgx-h100");
        c.seq_len = 4096;
        return c;
    }();
    ImportContext with_model = ctx;
    if (data[0] & 4) with_model.model = preset_model("mixtral-8x7b");  // else the file's own, where it has one
    if (data[0] & 8) with_model.gpus = 64;
    try {
        const Imported im = import_launch(f, std::string(reinterpret_cast<const char*>(data + 1), size - 1), with_model, "input");
        if (check_layout(im.c.model, im.c.cluster, im.c.layout)) __builtin_trap();  // import checks what it returns
        (void)imported_to_json(im, "fuzz").dump();
    } catch (const ConfigError&) {
    }
    return 0;
}
