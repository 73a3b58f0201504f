// Paging of the list endpoints (GET /v1/jobs/{id}/variants, GET /v1/history): every answer holds
// at most `limit` rows and a `next` cursor, so neither the response nor the daemon's memory grows
// with the size of a job or of the history. Cursors are keyset positions (the last id served),
// opaque to clients.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "server/router.hpp"

namespace kt {

inline constexpr int kDefaultPageLimit = 100;
inline constexpr int kMaxPageLimit = 1000;

// The `limit` query parameter: kDefaultPageLimit when absent; 400 invalid_parameter naming the
// range when it is not an integer in 1..kMaxPageLimit.
int page_limit(const ApiRequest& request);
// The id position of the `cursor` query parameter; 0 (from the start) when absent; 400
// invalid_parameter when it is not a cursor this server hands out.
std::int64_t page_cursor(const ApiRequest& request);
// The `next` field of an answer: the cursor of the following page, or null after the last.
nlohmann::json next_cursor_json(const std::optional<std::int64_t>& next_position);

}  // namespace kt
