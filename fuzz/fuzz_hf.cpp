// libFuzzer target: the Hugging Face config.json import.
#include <cstdint>
#include <string>

#include "shardplan/error.h"
#include "shardplan/hf.h"
#include "shardplan/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace shardplan;
    try {
        // The production parser: its nesting and duplicate-key limits are part of what is fuzzed.
        const json j = parse_json_text(std::string(reinterpret_cast<const char*>(data), size), "input");
        const ModelSpec m = model_from_hf_config(j, "config");
        (void)model_params_total(m);
        (void)model_params_active(m);
        (void)to_json(m).dump();
    } catch (const ConfigError&) {
    }
    return 0;
}
