#include "tuner/search/recorded_space.hpp"

#include <algorithm>
#include <stdexcept>

namespace kt {

std::optional<double> RecordedSpace::optimum_us() const {
  std::optional<double> best;
  for (const RecordedVariant& v : variants)
    if (v.median_us && (!best || *v.median_us < *best)) best = v.median_us;
  return best;
}

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* name, const std::string& where) {
  if (!j.is_object() || !j.contains(name))
    throw std::invalid_argument(where + ": missing \"" + name + "\"");
  return j.at(name);
}

int int_or(const nlohmann::json& j, const char* name) {
  return j.contains(name) && j.at(name).is_number_integer() ? j.at(name).get<int>() : -1;
}

}  // namespace

RecordedSpace recorded_space_from_json(const nlohmann::json& j) {
  const std::string format = field(j, "format", "space").get<std::string>();
  if (format != kSpaceFormat)
    throw std::invalid_argument("space: format \"" + format + "\", expected \"" + kSpaceFormat +
                                "\"");
  RecordedSpace space;
  space.family = field(j, "family", "space").get<std::string>();
  space.shape = int_map_from_json(field(j, "shape", "space"));
  space.dtype = field(j, "dtype", "space").get<std::string>();
  if (j.contains("device")) space.device = j.at("device");
  if (j.contains("provenance")) space.provenance = j.at("provenance");
  const nlohmann::json& variants = field(j, "variants", "space");
  if (!variants.is_array()) throw std::invalid_argument("space: \"variants\" is not an array");
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const nlohmann::json& v = variants[i];
    const std::string where = "space: variant " + std::to_string(i);
    RecordedVariant rv;
    rv.candidate.template_name = field(v, "template", where).get<std::string>();
    rv.candidate.config = int_map_from_json(field(v, "config", where));
    rv.status = field(v, "status", where).get<std::string>();
    if (v.contains("median_us") && v.at("median_us").is_number()) {
      const double t = v.at("median_us").get<double>();
      if (!(t > 0)) throw std::invalid_argument(where + ": median_us must be > 0");
      if (rv.status == "measured") rv.median_us = t;
    }
    if (rv.status == "measured" && !rv.median_us)
      throw std::invalid_argument(where + ": measured without median_us");
    CompileFacts facts{int_or(v, "registers"), int_or(v, "spill_bytes"), int_or(v, "smem_bytes"),
                       int_or(v, "threads")};
    if (facts.registers >= 0 || facts.threads > 0) rv.candidate.facts = facts;
    space.variants.push_back(std::move(rv));
  }
  return space;
}

nlohmann::json to_json(const RecordedSpace& space) {
  nlohmann::json j;
  j["format"] = kSpaceFormat;
  j["family"] = space.family;
  j["shape"] = to_json(space.shape);
  j["dtype"] = space.dtype;
  j["device"] = space.device;
  j["provenance"] = space.provenance;
  nlohmann::json variants = nlohmann::json::array();
  for (const RecordedVariant& v : space.variants) {
    nlohmann::json o;
    o["template"] = v.candidate.template_name;
    o["config"] = to_json(v.candidate.config);
    o["status"] = v.status;
    o["median_us"] = v.median_us ? nlohmann::json(*v.median_us) : nlohmann::json(nullptr);
    if (v.candidate.facts) {
      o["registers"] = v.candidate.facts->registers;
      o["spill_bytes"] = v.candidate.facts->spill_bytes;
      o["smem_bytes"] = v.candidate.facts->smem_bytes;
      o["threads"] = v.candidate.facts->threads;
    }
    variants.push_back(std::move(o));
  }
  j["variants"] = std::move(variants);
  return j;
}

std::string recorded_at(const RecordedSpace& space) {
  for (const char* key : {"created_at", "recorded"})
    if (space.provenance.contains(key) && space.provenance.at(key).is_string())
      return space.provenance.at(key).get<std::string>();
  return "";
}

std::vector<RecordedSpace> newest_recordings(std::vector<RecordedSpace> spaces) {
  const auto same_problem = [](const RecordedSpace& a, const RecordedSpace& b) {
    return a.family == b.family && a.dtype == b.dtype && a.shape == b.shape &&
           a.device.value("name", std::string()) == b.device.value("name", std::string());
  };
  std::vector<RecordedSpace> kept;
  for (RecordedSpace& s : spaces) {
    const auto same = std::find_if(kept.begin(), kept.end(),
                                   [&](const RecordedSpace& k) { return same_problem(k, s); });
    if (same == kept.end())
      kept.push_back(std::move(s));
    else if (recorded_at(s) > recorded_at(*same))
      *same = std::move(s);
  }
  return kept;
}

}  // namespace kt
