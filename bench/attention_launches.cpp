#include "bench/attention_launches.hpp"

#include <algorithm>
#include <stdexcept>

#include "tuner/config.hpp"
#include "tuner/error_bound.hpp"
#include "tuner/measure_protocol.hpp"
#include "tuner/variant_space.hpp"

namespace kt::bench {

nlohmann::json attention_launch_entry(const Family& family, const AttentionShape& shape,
                                      const std::string& dtype, const DeviceLimits& limits,
                                      const std::vector<LaunchCandidate>& candidates) {
  const Shape dims = {{"B", shape.b},
                      {"H", shape.h},
                      {"S", shape.s},
                      {"D", shape.d},
                      {"CAUSAL", shape.causal ? 1 : 0}};
  const Tolerance& tolerance = tolerance_for(family, dtype);
  // bench/sdpa_baseline.py computes no magnitude: its inputs are uniform in [-1, 1], so an
  // element's softmax-weighted magnitude sum_j p_ij |V_jd| is at most 1 and the term c * u * m
  // at most c * u, which it gets as part of atol (the worker's bound at its loosest).
  double atol = tolerance.atol;
  if (tolerance.magnitude > 0) {
    const ProblemInstance problem = baseline_instance(family, dims, dtype, limits);
    const std::int64_t reduction =
        problem.reference.params.at("magnitude").at("reduction").get<std::int64_t>();
    atol += tolerance.magnitude * magnitude_unit_roundoff(dtype, reduction);
  }
  nlohmann::json entry = {
      {"key", attention_shape_key(shape)},
      {"dtype", dtype},
      {"B", shape.b},
      {"H", shape.h},
      {"S", shape.s},
      {"D", shape.d},
      {"causal", shape.causal},
      {"tolerance",
       {{"atol", atol}, {"rtol", tolerance.rtol}, {"rel_l2", tolerance.max_rel_l2}}},
      {"candidates", nlohmann::json::array()}};
  for (const LaunchCandidate& candidate : candidates) {
    const std::string name = candidate.config.value("template", std::string());
    const auto tmpl = std::find_if(family.templates.begin(), family.templates.end(),
                                   [&](const TemplateSpec& t) { return t.name == name; });
    if (tmpl == family.templates.end())
      throw std::invalid_argument("family " + family.name + " has no template '" + name + "'");
    Config config;
    for (const auto& [axis, value] : candidate.config.items())
      if (axis != "template") config[axis] = value.get<std::int64_t>();
    const ProblemInstance problem = instantiate(family, *tmpl, config, dims, dtype, limits);
    const nlohmann::json p = to_json(problem);
    entry["flops"] = problem.flops;
    entry["candidates"].push_back({{"variant_id", candidate.variant_id},
                                   {"config", candidate.config},
                                   {"template", tmpl->name},
                                   {"kernel", tmpl->kernel},
                                   {"cubin", candidate.cubin.string()},
                                   {"buffers", p.at("buffers")},
                                   {"args", p.at("args")},
                                   {"launch", p.at("launch")}});
  }
  return entry;
}

nlohmann::json sdpa_launch_file(const std::string& device,
                                const std::vector<nlohmann::json>& shapes) {
  return {{"format", "kerntune-sdpa-launches/1"}, {"device", device}, {"shapes", shapes}};
}

}  // namespace kt::bench
