#include "support/schema_check.hpp"

#include <fstream>
#include <stdexcept>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "support/test_paths.hpp"

namespace kt::test {

std::vector<std::string> schema_violations(const nlohmann::json& document,
                                           const nlohmann::json& schema,
                                           const nlohmann::json& body) {
  nlohmann::json root = schema;
  root["components"] = document["components"];
  valijson::Schema compiled;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  const valijson::adapters::NlohmannJsonAdapter schema_adapter(root);
  parser.populateSchema(schema_adapter, compiled);
  valijson::Validator validator;
  valijson::ValidationResults results;
  const valijson::adapters::NlohmannJsonAdapter target(body);
  std::vector<std::string> found;
  if (validator.validate(compiled, target, &results)) return found;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string where;
    for (const auto& part : error.context) where += part;
    found.push_back(where + ": " + error.description);
  }
  return found;
}

nlohmann::json committed_openapi_document() {
  const auto path = source_dir() / "docs/openapi.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return nlohmann::json::parse(in);
}

}  // namespace kt::test
