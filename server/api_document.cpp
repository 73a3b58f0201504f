#include "server/api_document.hpp"

namespace kt {

ApiResponse get_openapi(const ApiRequest&, AppContext&) {
  ApiResponse response;
  response.body = std::string(openapi_document());
  return response;
}

}  // namespace kt
