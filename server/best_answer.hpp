// GET /v1/best's JSON: the one place its schema is written, from the engine's typed answer
// (engine/best_answer.hpp). When the baseline wins, the top-level fields describe the library call
// ("template" = the baseline's kind, "config" = its numeric choices, "median_us" = its time,
// "variant_id" null) and our best variant stands beside it as "best_own"; either way
// "baseline_wins" and "verdict" ({"answer", "basis", "reason"}) say which and why. docs/api.md
// shows the shape.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/best_answer.hpp"

namespace kt {

nlohmann::json best_answer_json(const BestAnswer& answer);

}  // namespace kt
