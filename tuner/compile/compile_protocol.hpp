// What the daemon asks its compile processes (kerntune-worker --compile) and what they answer:
// one JSON line each way, as the measurement protocol. The cubin travels base64-encoded; the
// resources are the ones the child read from the cubin it compiled.
//
// A request names its headers by their content (headers_id, a SHA-256): a family's sources, the
// headers of every variant (about 250 KB for GEMM), go to a compile process once, which keeps them;
// later requests send the id alone. A process asked for headers it does not hold answers
// {"ok": false, "unknown_headers": true} and the daemon sends them again.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {

// The request with its headers (with_headers) or without them; headers_id is always set.
nlohmann::json to_json(const CompileRequest& request, bool with_headers = true);
// SHA-256 over the headers' names and texts.
std::string headers_id(const std::vector<std::pair<std::string, std::string>>& headers);
// Throws nlohmann::json::exception for a malformed request. The headers come along when the
// request has them (else the request's headers are empty: the caller fills them in by id).
CompileRequest compile_request_from_json(const nlohmann::json& json);

nlohmann::json to_json(const CompileResult& result);
// Throws std::runtime_error (or nlohmann::json::exception) for a malformed answer.
CompileResult compile_result_from_json(const nlohmann::json& json);

std::string base64_encode(const std::vector<char>& bytes);
// Throws std::runtime_error for text that is not base64.
std::vector<char> base64_decode(const std::string& text);

}  // namespace kt
