#include "tuner/compile/compile_protocol.hpp"

#include "tuner/compile/sha256.hpp"
#include "tuner/json_fields.hpp"

#include <stdexcept>

#include <openssl/evp.h>

namespace kt {
namespace {

nlohmann::json to_json(const ResourceUsage& usage) {
  return {{"registers", usage.registers},
          {"spill_store_bytes", usage.spill_store_bytes},
          {"spill_load_bytes", usage.spill_load_bytes},
          {"stack_frame_bytes", usage.stack_frame_bytes},
          {"static_smem_bytes", usage.static_smem_bytes},
          {"const_bytes", usage.const_bytes}};
}

ResourceUsage resource_usage_from_json(const JsonFields& json) {
  ResourceUsage usage;
  usage.registers = json.get<int>("registers");
  usage.spill_store_bytes = json.get<int>("spill_store_bytes");
  usage.spill_load_bytes = json.get<int>("spill_load_bytes");
  usage.stack_frame_bytes = json.get<int>("stack_frame_bytes");
  usage.static_smem_bytes = json.get<int>("static_smem_bytes");
  usage.const_bytes = json.get<int>("const_bytes");
  return usage;
}

}  // namespace

nlohmann::json to_json(const CompileRequest& request, bool with_headers) {
  nlohmann::json json = {{"source_name", request.source_name},
                         {"source", request.source},
                         {"headers_id", headers_id(request.headers)},
                         {"kernel", request.kernel},
                         {"arch", request.arch},
                         {"options", request.options}};
  if (with_headers) {
    nlohmann::json headers = nlohmann::json::array();
    for (const auto& [name, text] : request.headers) headers.push_back({name, text});
    json["headers"] = std::move(headers);
  }
  return json;
}

std::string headers_id(const std::vector<std::pair<std::string, std::string>>& headers) {
  Sha256 hash;
  for (const auto& [name, text] : headers) {
    hash.update_field(name);
    hash.update_field(text);
  }
  return hash.hex_digest();
}

CompileRequest compile_request_from_json(const nlohmann::json& json) {
  const JsonFields fields(json, "compile request");
  CompileRequest request;
  request.source_name = fields.get<std::string>("source_name");
  request.source = fields.get<std::string>("source");
  if (fields.has("headers")) {
    const nlohmann::json& headers = fields.at("headers");
    if (!headers.is_array()) throw fields.wrong_type("headers", "an array of [name, text] pairs");
    for (const auto& header : headers) {
      if (!header.is_array() || header.size() != 2 || !header[0].is_string() ||
          !header[1].is_string())
        throw fields.wrong_type("headers", "an array of [name, text] pairs");
      request.headers.emplace_back(header[0].get<std::string>(), header[1].get<std::string>());
    }
  }
  request.kernel = fields.get<std::string>("kernel");
  request.arch = fields.get<std::string>("arch");
  const nlohmann::json& options = fields.at("options");
  if (!options.is_array()) throw fields.wrong_type("options", "an array of strings");
  for (const auto& option : options) {
    if (!option.is_string()) throw fields.wrong_type("options", "an array of strings");
    request.options.push_back(option.get<std::string>());
  }
  return request;
}

nlohmann::json to_json(const CompileResult& result) {
  return {{"ok", result.ok},
          {"log", result.log},
          {"cubin", base64_encode(result.cubin)},
          {"resources", to_json(result.resources)},
          {"compile_ms", result.compile_ms},
          {"key", result.key}};
}

CompileResult compile_result_from_json(const nlohmann::json& json) {
  const JsonFields fields(json, "compile answer");
  CompileResult result;
  result.ok = fields.get<bool>("ok");
  result.log = fields.get<std::string>("log");
  result.cubin = base64_decode(fields.get<std::string>("cubin"));
  result.resources = resource_usage_from_json(fields.object("resources"));
  result.compile_ms = fields.get<double>("compile_ms");
  result.key = fields.get<std::string>("key");
  if (result.ok && result.cubin.empty())
    throw std::runtime_error("compile answer says ok but carries no cubin");
  return result;
}

std::string base64_encode(const std::vector<char>& bytes) {
  std::string text(4 * ((bytes.size() + 2) / 3), '\0');
  if (bytes.empty()) return text;
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  text.resize(static_cast<std::size_t>(written));
  return text;
}

std::vector<char> base64_decode(const std::string& text) {
  if (text.empty()) return {};
  if (text.size() % 4 != 0) throw std::runtime_error("base64 text of a length not a multiple of 4");
  std::vector<char> bytes(3 * (text.size() / 4));
  const int decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                      reinterpret_cast<const unsigned char*>(text.data()),
                                      static_cast<int>(text.size()));
  if (decoded < 0) throw std::runtime_error("invalid base64 text");
  // EVP_DecodeBlock counts the padding's zero bytes too.
  std::size_t size = static_cast<std::size_t>(decoded);
  if (text.back() == '=') --size;
  if (text.size() >= 2 && text[text.size() - 2] == '=') --size;
  bytes.resize(size);
  return bytes;
}

}  // namespace kt
