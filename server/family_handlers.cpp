#include "server/family_handlers.hpp"

#include "engine/family_registrar.hpp"
#include "server/request_parsing.hpp"

namespace kt {
namespace {

nlohmann::json registration_view(const FamilyRegistration& registration) {
  return {{"id", registration.id},
          {"family", registration.family},
          {"status", std::string(to_string(registration.status))},
          {"source_hash", registration.source_hash},
          {"previous_hash", registration.previous_hash.empty()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(registration.previous_hash)},
          {"unchanged", registration.unchanged},
          {"message", registration.message},
          {"compile", registration.compile_json.empty()
                          ? nlohmann::json(nullptr)
                          : nlohmann::json::parse(registration.compile_json)}};
}

FamilyRegistrar& require_registrar(AppContext& context) {
  if (context.registrar == nullptr)
    throw ApiError(HttpStatus::forbidden, "user_families_disabled",
                   "this daemon does not take families over the API: its operator starts "
                   "kerntuned with --allow-user-families to allow it");
  return *context.registrar;
}

}  // namespace

ApiError family_upload_refusal(const FamilyUploadError& error) {
  using Kind = FamilyUploadError::Kind;
  switch (error.kind()) {
    case Kind::invalid_upload:
      return ApiError(HttpStatus::bad_request, "invalid_upload", error.what());
    case Kind::too_large:
      return ApiError(HttpStatus::payload_too_large, "upload_too_large", error.what());
    case Kind::name_taken:
      return ApiError(HttpStatus::conflict, "family_name_taken", error.what());
    case Kind::invalid_manifest:
      break;
  }
  return ApiError(HttpStatus::unprocessable_entity, "invalid_manifest", error.what());
}

FamilyUpload parse_family_upload(const std::string& body, std::size_t max_body_bytes) {
  if (body.size() > max_body_bytes)
    throw ApiError(HttpStatus::payload_too_large, "body_too_large",
                   "request body of " + std::to_string(body.size()) +
                       " bytes exceeds the limit of " + std::to_string(max_body_bytes));
  const nlohmann::json parsed = parse_json_body(body);  // depth limit, clear 400s
  if (!parsed.is_object())
    throw ApiError(HttpStatus::bad_request, "invalid_body",
                   "the body must be an object {\"manifest\": {...}, \"sources\": {...}}");
  for (const auto& [key, value] : parsed.items())
    if (key != "manifest" && key != "sources")
      throw ApiError(HttpStatus::bad_request, "invalid_field",
                     "unknown field " + quote_client_text(key) + "; expected manifest, sources");
  if (!parsed.contains("manifest") || !parsed["manifest"].is_object())
    throw ApiError(HttpStatus::bad_request, "invalid_field",
                   "'manifest' must be an object: the family's manifest.json");
  if (!parsed.contains("sources") || !parsed["sources"].is_object())
    throw ApiError(HttpStatus::bad_request, "invalid_field",
                   "'sources' must be an object of file name -> source text");
  FamilyUpload upload;
  // Again, keeping the manifest's key order (axes enumerate in it); the guard above already
  // refused what a parse could not afford.
  upload.manifest = nlohmann::ordered_json::parse(body)["manifest"];
  if (parsed["sources"].size() > kMaxFamilySources)
    throw ApiError(HttpStatus::payload_too_large, "too_many_sources",
                   std::to_string(parsed["sources"].size()) + " source files; at most " +
                       std::to_string(kMaxFamilySources) + " are taken");
  for (const auto& [file, text] : parsed["sources"].items()) {
    if (!is_safe_source_name(file))
      throw ApiError(HttpStatus::bad_request, "invalid_source_name",
                     "source file name " + quote_client_text(file) +
                         " is not allowed: names match [A-Za-z0-9_]+.(cuh|cu|h), at most " +
                         std::to_string(kMaxFamilyNameChars) + " characters");
    if (!text.is_string())
      throw ApiError(
          HttpStatus::bad_request, "invalid_field",
          "sources." + file + " must be the file's text, got " + describe_client_value(text));
    if (text.get_ref<const std::string&>().size() > kMaxFamilySourceBytes)
      throw ApiError(
          HttpStatus::payload_too_large, "source_too_large",
          "source " + file + " has " + std::to_string(text.get_ref<const std::string&>().size()) +
              " bytes; at most " + std::to_string(kMaxFamilySourceBytes) + " per file are taken");
    upload.sources.emplace_back(file, text.get<std::string>());
  }
  const nlohmann::json& name =
      parsed["manifest"].contains("name") ? parsed["manifest"]["name"] : nlohmann::json(nullptr);
  if (name.is_string() && !is_safe_family_name(name.get_ref<const std::string&>()))
    throw ApiError(HttpStatus::bad_request, "invalid_family_name",
                   "family name " + quote_client_text(name.get_ref<const std::string&>()) +
                       " is not allowed: an identifier ([A-Za-z_][A-Za-z0-9_]*) of at most " +
                       std::to_string(kMaxFamilyNameChars) + " characters");
  return upload;
}

ApiResponse register_family(const ApiRequest& request, AppContext& context) {
  FamilyRegistrar& registrar = require_registrar(context);
  if (!request.query.empty())
    throw ApiError(HttpStatus::bad_request, "unknown_parameter",
                   "unknown query parameter " + quote_client_text(request.query.begin()->first));
  const FamilyUpload upload = parse_family_upload(request.http.body(), context.max_body_bytes);
  FamilyRegistration registration;
  try {
    registration = registrar.submit(upload);
  } catch (const FamilyUploadError& error) {
    throw family_upload_refusal(error);
  }
  if (registration.unchanged) return json_response(HttpStatus::ok, registration_view(registration));
  ApiResponse response = json_response(HttpStatus::accepted, registration_view(registration));
  response.headers.emplace_back("Location", "/v1/families/registrations/" + registration.id);
  return response;
}

ApiResponse get_family_registration(const ApiRequest& request, AppContext& context) {
  FamilyRegistrar& registrar = require_registrar(context);
  const std::string& id = request.path_params.at("id");
  if (const auto registration = registrar.find(id))
    return json_response(HttpStatus::ok, registration_view(*registration));
  throw ApiError(HttpStatus::not_found, "unknown_registration",
                 "no registration " + quote_client_text(id) + " (the newest " +
                     std::to_string(kKeptFamilyRegistrations) +
                     " finished registrations are kept; GET /v1/families lists the registered "
                     "families)");
}

}  // namespace kt
