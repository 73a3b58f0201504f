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

std::optional<Speedup> speedup_of(const InterleavedResult& r, std::int64_t variant_id) {
  for (std::size_t i = 0; i < r.variant_ids.size() && i < r.speedups.size(); ++i)
    if (r.variant_ids[i] == variant_id) return r.speedups[i];
  return std::nullopt;
}

std::optional<Speedup> winner_speedup(const InterleavedResult& r) {
  return speedup_of(r, r.winner_variant_id);
}

const TimingSummary* final_timing_of(const InterleavedResult& r, std::int64_t variant_id) {
  for (std::size_t i = 0; i < r.variant_ids.size() && i < r.timings.size(); ++i)
    if (r.variant_ids[i] == variant_id) return &r.timings[i];
  return nullptr;
}

nlohmann::json speedups_to_json(const std::vector<Speedup>& speedups) {
  nlohmann::json out = nlohmann::json::array();
  for (const Speedup& s : speedups)
    out.push_back({{"value", s.value}, {"low", s.low}, {"high", s.high}});
  return out;
}

std::vector<Speedup> speedups_from_json(const nlohmann::json& j) {
  if (!j.is_array()) throw std::invalid_argument("speedups must be an array");
  std::vector<Speedup> out;
  for (const nlohmann::json& s : j)
    out.push_back(
        {s.at("value").get<double>(), s.at("low").get<double>(), s.at("high").get<double>()});
  return out;
}

nlohmann::json to_json(const InterleavedRequest& r) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const MeasureRequest& c : r.candidates) candidates.push_back(to_json(c));
  nlohmann::json j = {{"candidates", std::move(candidates)}, {"timing", to_json(r.timing)}};
  if (r.baseline) {
    j["baseline"] = to_json(*r.baseline);
    j["baseline_seed"] = std::to_string(r.baseline_seed);  // 64 bits: as text, like a seed
  }
  return j;
}

InterleavedRequest interleaved_request_from_json(const nlohmann::json& j) {
  constexpr const char* what = "interleaved request";
  InterleavedRequest r;
  for (const nlohmann::json& c : array_field(j, "candidates", what))
    r.candidates.push_back(measure_request_from_json(c));
  r.timing = timing_options_from_json(field(j, "timing", what));
  if (j.contains("baseline") && !j.at("baseline").is_null()) {
    r.baseline = problem_instance_from_json(j.at("baseline"));
    try {
      r.baseline_seed = std::stoull(field(j, "baseline_seed", what).get<std::string>());
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string(what) + ": bad baseline_seed: " + e.what());
    }
  }
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
          {"reason", r.reason},
          {"baseline_timing",
           r.baseline_timing ? to_json(*r.baseline_timing) : nlohmann::json(nullptr)},
          {"baseline", r.baseline},
          {"speedups", speedups_to_json(r.speedups)}};
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
    if (j.contains("baseline_timing") && !j.at("baseline_timing").is_null())
      r.baseline_timing = timing_summary_from_json(j.at("baseline_timing"));
    r.baseline = j.value("baseline", nlohmann::json(nullptr));
    if (j.contains("speedups")) r.speedups = speedups_from_json(j.at("speedups"));
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string(what) + ": " + e.what());
  }
  if (!r.speedups.empty() && r.speedups.size() != r.variant_ids.size())
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(r.speedups.size()) +
                                " speedups for " + std::to_string(r.variant_ids.size()) +
                                " variants");
  if (r.timings.size() != r.variant_ids.size())
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(r.timings.size()) +
                                " timings for " + std::to_string(r.variant_ids.size()) +
                                " variants");
  return r;
}

}  // namespace kt
