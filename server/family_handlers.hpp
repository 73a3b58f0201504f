// Families over the API (kerntuned --allow-user-families): a client registers a family with its
// manifest and device sources, then polls the registration while the daemon compiles one variant
// off the I/O threads (engine/family_registrar.hpp). Pure functions of (request, context).
#pragma once

#include <cstddef>
#include <string>

#include "engine/family_registrar.hpp"
#include "server/api_response.hpp"
#include "server/app_context.hpp"
#include "server/router.hpp"

namespace kt {

// POST /v1/families, body {"manifest": {...}, "sources": {"file.cuh": "text", ...}}.
//   202 + Location: checked, one variant compiling (poll the registration)
//   200: this very version is already registered (nothing compiled)
//   400: not JSON, unknown fields, a name not matching the safe patterns
//   403: the daemon was not started with --allow-user-families
//   409: the name is a shipped family's
//   413: the body, a source, or the number of sources over the limits
//   422: the manifest as load_family reads it, with every problem
ApiResponse register_family(const ApiRequest& request, AppContext& context);
// The checks register_family runs before the registrar's, apart for the fuzzer
// (tests/fuzz/family_upload_fuzz.cpp): the body (its limit, JSON with the depth limit, only
// manifest and sources, their types), the source names and sizes, the family name. Throws ApiError
// 400 or 413.
FamilyUpload parse_family_upload(const std::string& body, std::size_t max_body_bytes);
// The API's answer to an upload the registrar refused (check_family_upload): 400, 409, 413, 422.
ApiError family_upload_refusal(const FamilyUploadError& error);

// GET /v1/families/registrations/{id}: compiling, registered or failed (with the NVRTC log);
// 404 for an id this daemon does not know (registrations are kept in memory, the newest 256).
ApiResponse get_family_registration(const ApiRequest& request, AppContext& context);

}  // namespace kt
