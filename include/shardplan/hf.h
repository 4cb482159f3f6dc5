/// Hugging Face `config.json` → ModelSpec, for the families LlamaForCausalLM, MistralForCausalLM,
/// MixtralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV3ForCausalLM
/// and GptOssForCausalLM (docs/json.md, "Hugging Face configs"). An unknown architecture or a missing
/// key is a ConfigError that lists what is supported or needed.
///
///   if (looks_like_hf_config(j)) ModelSpec m = model_from_hf_config(j, "--model");
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "shardplan/model.h"

namespace shardplan {

/// True for an object with "architectures" or "model_type" (a Hugging Face config rather than
/// shardplan's own model object).
bool looks_like_hf_config(const nlohmann::json& j);

ModelSpec model_from_hf_config(const nlohmann::json& j, const std::string& field);

/// The architectures model_from_hf_config() reads, comma-separated.
std::string hf_supported_architectures();

}  // namespace shardplan
