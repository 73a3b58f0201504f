// JSON bodies checked against docs/openapi.json's schemas with valijson (Debian's JSON Schema
// validator): the conformance test's and the handler tests' one way to ask "is this documented?".
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt::test {

// Every violation of `schema` (a schema of `document`, whose $refs resolve in it) by `body`,
// each as "<where>: <what>"; empty when the body conforms.
std::vector<std::string> schema_violations(const nlohmann::json& document,
                                           const nlohmann::json& schema,
                                           const nlohmann::json& body);

// The committed docs/openapi.json.
nlohmann::json committed_openapi_document();

}  // namespace kt::test
