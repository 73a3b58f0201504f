#include "worker/compile_server.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tuner/compile/compile_protocol.hpp"

namespace kt {
namespace {

nlohmann::json error_answer(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}

// The test hook (see the header): does nothing unless KERNTUNE_TEST_COMPILE_FAULT is set.
void injected_fault(const CompileRequest& request) {
  const char* fault = std::getenv("KERNTUNE_TEST_COMPILE_FAULT");
  if (fault == nullptr) return;
  const std::string_view text(fault);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view how = text.substr(0, colon);
  const std::string option(text.substr(colon + 1));
  if (std::find(request.options.begin(), request.options.end(), option) == request.options.end())
    return;
  if (how == "segv") raise(SIGSEGV);
  if (how == "abort") std::abort();
  if (how == "hang")
    for (;;) pause();
}

// The headers this process was sent, by id: a family's sources come once, not with each variant.
// A few families' worth; beyond that it forgets them all, and is sent each again when needed.
constexpr std::size_t kKeptHeaderSets = 16;
using Headers = std::vector<std::pair<std::string, std::string>>;
std::map<std::string, Headers>& kept_headers() {
  static std::map<std::string, Headers> kept;
  return kept;
}

}  // namespace

CompileServerAnswer handle_compile_line(const std::string& line) {
  const nlohmann::json request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string())
    return {error_answer("not a request object with an op").dump()};
  const std::string op = request["op"].get<std::string>();
  if (op == "shutdown") return {nlohmann::json{{"ok", true}}.dump(), true};
  if (op != "compile") return {error_answer("unknown op '" + op + "'").dump()};
  CompileRequest compile;
  try {
    const nlohmann::json& body = request.at("request");
    compile = compile_request_from_json(body);
    const std::string id = body.at("headers_id").get<std::string>();
    auto& kept = kept_headers();
    if (body.contains("headers")) {
      if (kept.size() >= kKeptHeaderSets) kept.clear();
      kept[id] = compile.headers;
    } else if (const auto found = kept.find(id); found != kept.end()) {
      compile.headers = found->second;
    } else {
      nlohmann::json answer = error_answer("headers " + id + " not held: send them");
      answer["unknown_headers"] = true;
      return {answer.dump()};
    }
  } catch (const std::exception& e) {
    return {error_answer(std::string("malformed compile request: ") + e.what()).dump()};
  }
  injected_fault(compile);
  const CompileResult result = compile_kernel(compile);
  return {nlohmann::json{{"ok", true}, {"result", to_json(result)}}.dump()};
}

}  // namespace kt
