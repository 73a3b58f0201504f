#include "server/tuned_handlers.hpp"

#include "engine/problem_query.hpp"
#include "server/app_context.hpp"
#include "server/json_views.hpp"
#include "server/paging.hpp"
#include "server/request_parsing.hpp"
#include "tuner/config.hpp"

namespace kt {

ApiResponse get_tuned(const ApiRequest& request, AppContext& context) {
  std::string family;
  std::string device;
  for (const auto& [name, value] : request.query) {
    if (name == "family") {
      if (!value.empty()) family = require_family(context.families, value).name;
    } else if (name == "device") {
      device = value;
    } else if (name != "limit") {
      throw ApiError(HttpStatus::bad_request, "unknown_parameter",
                     "unknown query parameter " + quote_client_text(name));
    }
  }
  // Like /v1/best: a selector of a GPU the store has seen names its model, else it is a model.
  device = device_model_of(context.store, device);
  const int limit = page_limit(request);
  nlohmann::json problems = nlohmann::json::array();
  for (const TunedProblem& problem : context.store.tuned_problems(family, device, limit)) {
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& [dim, value] : parse_canonical_key(problem.shape_key)) shape[dim] = value;
    problems.push_back({{"family", problem.family},
                        {"dtype", problem.dtype},
                        {"shape", shape},
                        {"shape_key", problem.shape_key},
                        {"device", problem.device_name},
                        {"front_size", problem.front_size},
                        {"best", variant_to_json(problem.best)}});
  }
  return json_response(HttpStatus::ok, {{"count", problems.size()}, {"problems", problems}});
}

}  // namespace kt
