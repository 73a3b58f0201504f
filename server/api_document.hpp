// GET /v1/openapi.json: the API's OpenAPI 3.1 document (docs/openapi.json, compiled in by
// cmake/EmbedText.cmake). Tests/integration/openapi_conformance_test keeps it true to the routes.
#pragma once

#include <string_view>

#include "server/router.hpp"

namespace kt {

// The text of docs/openapi.json as it was at build time.
std::string_view openapi_document();

ApiResponse get_openapi(const ApiRequest& request, AppContext& context);

}  // namespace kt
