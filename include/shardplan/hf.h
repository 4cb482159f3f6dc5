/// Hugging Face `config.json` → ModelSpec, for the Llama, Llama 4, Mistral, Mixtral, Qwen2, Qwen2-MoE,
/// Qwen3, Qwen3-MoE, DeepSeek-V3, gpt-oss, Phi-3 and Gemma 1-3 families; of a multimodal Gemma 3 or
/// Llama 4 config, its text_config's language model (docs/json.md, "A model may also be a Hugging Face
/// config.json"). An unknown architecture or a missing key is a ConfigError that lists what is
/// supported or needed.
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

/// Named by the config's _name_or_path (its model_type where that is empty), else by `unnamed`
/// (model_from_file: the config's folder), else its model_type; a multimodal config's language model
/// with " (text model)" after that.
ModelSpec model_from_hf_config(const nlohmann::json& j, const std::string& field, const std::string& unnamed = "");

/// The architectures model_from_hf_config() reads, comma-separated.
std::string hf_supported_architectures();

}  // namespace shardplan
