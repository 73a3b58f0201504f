// What the daemon asks its compile processes (kerntune-worker --compile) and what they answer:
// one JSON line each way, as the measurement protocol. The cubin travels base64-encoded; the
// resources are the ones the child read from the cubin it compiled.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {

nlohmann::json to_json(const CompileRequest& request);
// Throws nlohmann::json::exception for a malformed request.
CompileRequest compile_request_from_json(const nlohmann::json& json);

nlohmann::json to_json(const CompileResult& result);
// Throws std::runtime_error (or nlohmann::json::exception) for a malformed answer.
CompileResult compile_result_from_json(const nlohmann::json& json);

std::string base64_encode(const std::vector<char>& bytes);
// Throws std::runtime_error for text that is not base64.
std::vector<char> base64_decode(const std::string& text);

}  // namespace kt
