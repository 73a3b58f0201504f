// Parsing and writing the `limit`, `cursor` and `next` of paged list answers (docs/api.md).
#include "server/paging.hpp"

#include <string>

#include "server/request_parsing.hpp"

namespace kt {

int page_limit(const ApiRequest& request) {
  const auto text = request.query_param("limit");
  if (!text) return kDefaultPageLimit;
  const std::int64_t limit = parse_query_integer(*text, "limit");
  if (limit < 1 || limit > kMaxPageLimit)
    throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                   "limit must be between 1 and " + std::to_string(kMaxPageLimit) + ", got " +
                       quote_client_text(*text));
  return static_cast<int>(limit);
}

std::int64_t page_cursor(const ApiRequest& request) {
  const auto text = request.query_param("cursor");
  if (!text) return 0;
  // A cursor is the decimal id of the last row served; anything else did not come from `next`.
  const bool digits_only = !text->empty() && text->size() <= 18 &&
                           text->find_first_not_of("0123456789") == std::string::npos;
  if (!digits_only || std::stoll(*text) < 1)
    throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                   "cursor " + quote_client_text(*text) +
                       " is not a cursor from a `next` field; leave it out for the first page");
  return std::stoll(*text);
}

nlohmann::json next_cursor_json(const std::optional<std::int64_t>& next_position) {
  return next_position ? nlohmann::json(std::to_string(*next_position)) : nlohmann::json(nullptr);
}

}  // namespace kt
