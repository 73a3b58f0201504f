#include "tuner/compile/compile_protocol.hpp"

#include "tuner/compile/sha256.hpp"

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

ResourceUsage resource_usage_from_json(const nlohmann::json& json) {
  ResourceUsage usage;
  usage.registers = json.at("registers").get<int>();
  usage.spill_store_bytes = json.at("spill_store_bytes").get<int>();
  usage.spill_load_bytes = json.at("spill_load_bytes").get<int>();
  usage.stack_frame_bytes = json.at("stack_frame_bytes").get<int>();
  usage.static_smem_bytes = json.at("static_smem_bytes").get<int>();
  usage.const_bytes = json.at("const_bytes").get<int>();
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
  CompileRequest request;
  request.source_name = json.at("source_name").get<std::string>();
  request.source = json.at("source").get<std::string>();
  if (json.contains("headers"))
    for (const auto& header : json.at("headers"))
      request.headers.emplace_back(header.at(0).get<std::string>(),
                                   header.at(1).get<std::string>());
  request.kernel = json.at("kernel").get<std::string>();
  request.arch = json.at("arch").get<std::string>();
  request.options = json.at("options").get<std::vector<std::string>>();
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
  CompileResult result;
  result.ok = json.at("ok").get<bool>();
  result.log = json.at("log").get<std::string>();
  result.cubin = base64_decode(json.at("cubin").get<std::string>());
  result.resources = resource_usage_from_json(json.at("resources"));
  result.compile_ms = json.at("compile_ms").get<double>();
  result.key = json.at("key").get<std::string>();
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
