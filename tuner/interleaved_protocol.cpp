#include "tuner/interleaved_protocol.hpp"

#include <stdexcept>
#include <string>

namespace kt {
namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* name, const char* what) {
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + " must be a JSON object");
  if (!j.contains(name) || j.at(name).is_null())
    throw std::invalid_argument(std::string(what) + ": missing field '" + name + "'");
  return j.at(name);
}

const nlohmann::json& array_field(const nlohmann::json& j, const char* name, const char* what) {
  const nlohmann::json& value = field(j, name, what);
  if (!value.is_array())
    throw std::invalid_argument(std::string(what) + ": field '" + name + "' must be an array");
  return value;
}

}  // namespace

nlohmann::json to_json(const InterleavedRequest& r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const MeasureRequest& c : r.candidates) candidates.push_back(to_json(c));
  return {{"candidates", std::move(candidates)}, {"timing", to_json(r.timing)}};
}

InterleavedRequest interleaved_request_from_json(const nlohmann::json& j) {
  constexpr const char* what = "interleaved request";
  InterleavedRequest r;
  for (const nlohmann::json& c : array_field(j, "candidates", what))
    r.candidates.push_back(measure_request_from_json(c));
  r.timing = timing_options_from_json(field(j, "timing", what));
  return r;
}

nlohmann::json to_json(const InterleavedResult& r) {
  nlohmann::json timings = nlohmann::json::array();
  for (const TimingSummary& t : r.timings) timings.push_back(to_json(t));
  return {{"variant_ids", r.variant_ids},
          {"timings", std::move(timings)},
          {"winner_variant_id", r.winner_variant_id},
          {"runner_up_variant_id", r.runner_up_variant_id},
          {"distinguishable", r.distinguishable},
          {"margin", r.margin},
          {"reason", r.reason}};
}

InterleavedResult interleaved_result_from_json(const nlohmann::json& j) {
  constexpr const char* what = "interleaved result";
  InterleavedResult r;
  try {
    r.variant_ids = array_field(j, "variant_ids", what).get<std::vector<std::int64_t>>();
    for (const nlohmann::json& t : array_field(j, "timings", what))
      r.timings.push_back(timing_summary_from_json(t));
    r.winner_variant_id = field(j, "winner_variant_id", what).get<std::int64_t>();
    r.runner_up_variant_id = field(j, "runner_up_variant_id", what).get<std::int64_t>();
    r.distinguishable = field(j, "distinguishable", what).get<bool>();
    r.margin = field(j, "margin", what).get<double>();
    r.reason = field(j, "reason", what).get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string(what) + ": " + e.what());
  }
  if (r.timings.size() != r.variant_ids.size())
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(r.timings.size()) +
                                " timings for " + std::to_string(r.variant_ids.size()) +
                                " variants");
  return r;
}

}  // namespace kt
