#include "tuner/measure_protocol.hpp"

#include "tuner/json_fields.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace kt {
namespace {

using nlohmann::json;

// Every nested reader names fields from the root of the message.
template <typename T, typename Parse>
T with_context(const char* what, Parse&& parse) {
  try {
    return parse();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(what) + ": " + e.what());
  }
}

std::array<std::uint32_t, 3> dims_from_json(const JsonFields& r, const char* field) {
  const json& value = r.at(field);
  if (!value.is_array() || value.size() != 3)
    throw std::invalid_argument("field '" + r.where(field) + "' must be an array of 3 integers");
  std::array<std::uint32_t, 3> dims{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!value[i].is_number_integer() || value[i].get<std::int64_t>() < 0 ||
        value[i].get<std::int64_t>() > 0xFFFFFFFFll)
      throw std::invalid_argument("field '" + r.where(field) + "' must hold 3 unsigned integers");
    dims[i] = value[i].get<std::uint32_t>();
  }
  return dims;
}

ArgInstance::Kind arg_kind_from_name(const std::string& name, const std::string& where) {
  if (name == "buffer") return ArgInstance::Kind::buffer;
  if (name == "i32") return ArgInstance::Kind::i32;
  if (name == "i64") return ArgInstance::Kind::i64;
  if (name == "f32") return ArgInstance::Kind::f32;
  if (name == "tensor_map") return ArgInstance::Kind::tensor_map;
  throw std::invalid_argument("field '" + where + "' has unknown kind '" + name + "'");
}

json to_json(const LaunchDims& l) {
  return {{"grid", l.grid},
          {"block", l.block},
          {"cluster", l.cluster},
          {"dynamic_smem", l.dynamic_smem}};
}

ProblemInstance problem_from_reader(const JsonFields& r) {
  ProblemInstance p;
  try {
    p.shape = int_map_from_json(r.at("shape"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("field '" + r.where("shape") + "': " + e.what());
  }
  p.dtype = r.get<std::string>("dtype");
  const json& buffers = r.at("buffers");
  if (!buffers.is_array())
    throw std::invalid_argument("field '" + r.where("buffers") + "' must be an array");
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const JsonFields b(buffers[i], r.where("buffers") + "[" + std::to_string(i) + "]");
    p.buffers.push_back({b.get<std::string>("name"), b.get<std::string>("role"),
                         b.get<std::string>("dtype"), b.get<std::int64_t>("elements")});
    if (b.has("range")) {
      const json& range = b.at("range");
      if (!range.is_array() || range.size() != 2 || !range[0].is_number() || !range[1].is_number())
        throw std::invalid_argument("field '" + b.where("range") + "' must be [low, high]");
      p.buffers.back().range_low = range[0].get<double>();
      p.buffers.back().range_high = range[1].get<double>();
    }
  }
  const json& args = r.at("args");
  if (!args.is_array())
    throw std::invalid_argument("field '" + r.where("args") + "' must be an array");
  for (std::size_t i = 0; i < args.size(); ++i) {
    const JsonFields a(args[i], r.where("args") + "[" + std::to_string(i) + "]");
    ArgInstance arg;
    arg.kind = arg_kind_from_name(a.get<std::string>("kind"), a.where("kind"));
    if (arg.kind == ArgInstance::Kind::buffer) {
      arg.buffer = a.get<std::string>("buffer");
    } else if (arg.kind == ArgInstance::Kind::tensor_map) {
      arg.buffer = a.get<std::string>("buffer");
      arg.swizzle = a.get<std::uint32_t>("swizzle");
      const json& dims = a.at("dims");
      const json& box = a.at("box");
      if (!dims.is_array() || !box.is_array() || dims.size() != box.size() || dims.empty() ||
          dims.size() > 5)
        throw std::invalid_argument("field '" + a.where("dims") +
                                    "' and 'box' must be lists of 1 to 5 equal-length integers");
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (!dims[d].is_number_integer() || !box[d].is_number_unsigned())
          throw std::invalid_argument("field '" + a.where("dims") + "' must hold integers");
        arg.dims.push_back(dims[d].get<std::int64_t>());
        arg.box.push_back(box[d].get<std::uint32_t>());
      }
    } else {
      arg.value = a.get<double>("value");
    }
    p.args.push_back(std::move(arg));
  }
  const JsonFields launch = r.object("launch");
  p.launch.grid = dims_from_json(launch, "grid");
  p.launch.block = dims_from_json(launch, "block");
  p.launch.cluster = dims_from_json(launch, "cluster");
  p.launch.dynamic_smem = launch.get<std::uint32_t>("dynamic_smem");
  const JsonFields reference = r.object("reference");
  p.reference.kind = reference.get<std::string>("kind");
  p.reference.params = reference.has("params") ? reference.at("params") : json::object();
  if (r.has("baseline")) {
    const JsonFields baseline = r.object("baseline");
    p.baseline = ReferenceInstance{baseline.get<std::string>("kind"),
                                   baseline.has("params") ? baseline.at("params") : json::object()};
  }
  p.flops = r.get<double>("flops");
  p.bytes = r.get<double>("bytes");
  return p;
}

TimingOptions timing_options_from_reader(const JsonFields& r) {
  TimingOptions t;
  t.warmup_runs = r.get<int>("warmup_runs");
  t.min_trials = r.get<int>("min_trials");
  t.max_trials = r.get<int>("max_trials");
  t.max_seconds = r.get<double>("max_seconds");
  t.target_rel_noise = r.get<double>("target_rel_noise");
  t.flush_l2 = r.get<bool>("flush_l2");
  // Added with graph batching: optional, so a request written before it still reads.
  if (r.has("graph_below_us")) t.graph_below_us = r.get<double>("graph_below_us");
  if (r.has("graph_batch_us")) t.graph_batch_us = r.get<double>("graph_batch_us");
  return t;
}

TimingSummary timing_summary_from_reader(const JsonFields& r) {
  TimingSummary t;
  t.median_us = r.get<double>("median_us");
  t.min_us = r.get<double>("min_us");
  t.p10_us = r.get<double>("p10_us");
  t.p90_us = r.get<double>("p90_us");
  t.mean_us = r.get<double>("mean_us");
  t.rel_noise = r.get<double>("rel_noise");
  t.trials = r.get<int>("trials");
  t.converged = r.get<bool>("converged");
  // Added with graph batching and NVML: optional, defaults mean "one launch, no NVML".
  if (r.has("method")) t.method = r.get<std::string>("method");
  if (r.has("launches_per_sample")) t.launches_per_sample = r.get<int>("launches_per_sample");
  if (r.has("discarded_samples")) t.discarded_samples = r.get<int>("discarded_samples");
  if (r.has("sm_clock_mhz")) t.sm_clock_mhz = r.get<int>("sm_clock_mhz");
  if (r.has("throttle_reasons")) t.throttle_reasons = r.get<std::uint64_t>("throttle_reasons");
  return t;
}

Tolerance tolerance_from_reader(const JsonFields& r) {
  Tolerance t;
  t.atol = r.get<double>("atol");
  t.rtol = r.get<double>("rtol");
  t.max_rel_l2 = r.get<double>("rel_l2");
  // Added with the magnitude term: absent in a tolerance without one (and in older messages).
  if (r.has("magnitude")) t.magnitude = r.get<double>("magnitude");
  return t;
}

MagnitudeBound magnitude_bound_from_reader(const JsonFields& r) {
  MagnitudeBound b;
  b.c = r.get<double>("c");
  b.u = r.get<double>("u");
  b.u_out = r.get<double>("u_out");
  b.u_acc = r.get<double>("u_acc");
  b.reduction = r.get<std::int64_t>("reduction");
  b.magnitude = r.get<std::string>("magnitude");
  return b;
}

ErrorSummary error_summary_from_reader(const JsonFields& r) {
  ErrorSummary e;
  e.max_abs = r.get<double>("max_abs");
  e.max_rel = r.get<double>("max_rel");
  e.rel_l2 = r.get<double>("rel_l2");
  e.first_bad_index = r.get<std::int64_t>("first_bad_index");
  e.non_finite = r.get<std::int64_t>("non_finite");
  // Added with per-element checks: optional, so a summary written before them still reads.
  if (r.has("bad_elements")) e.bad_elements = r.get<std::int64_t>("bad_elements");
  if (r.has("first_bad_output")) e.first_bad_output = r.get<double>("first_bad_output");
  if (r.has("first_bad_reference")) e.first_bad_reference = r.get<double>("first_bad_reference");
  if (r.has("tolerance")) e.tolerance = tolerance_from_reader(r.object("tolerance"));
  if (r.has("guard_damage")) e.guard_damage = r.get<std::string>("guard_damage");
  // Added with the magnitude term.
  if (r.has("bound")) e.magnitude_bound = magnitude_bound_from_reader(r.object("bound"));
  if (r.has("first_bad_magnitude")) e.first_bad_magnitude = r.get<double>("first_bad_magnitude");
  if (r.has("first_bad_allowed")) e.first_bad_allowed = r.get<double>("first_bad_allowed");
  if (r.has("max_bound_fraction")) e.max_bound_fraction = r.get<double>("max_bound_fraction");
  return e;
}

// JSON has no Inf/NaN: nlohmann writes them as null. Errors can legitimately be infinite (a
// zero reference), so they travel as strings and come back as numbers.
json number_or_text(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

}  // namespace

const char* arg_kind_name(ArgInstance::Kind kind) {
  switch (kind) {
    case ArgInstance::Kind::buffer:
      return "buffer";
    case ArgInstance::Kind::i32:
      return "i32";
    case ArgInstance::Kind::i64:
      return "i64";
    case ArgInstance::Kind::f32:
      return "f32";
    case ArgInstance::Kind::tensor_map:
      return "tensor_map";
  }
  return "buffer";
}

json to_json(const ProblemInstance& p) {
  json buffers = json::array();
  for (const auto& b : p.buffers) {
    buffers.push_back(
        {{"name", b.name}, {"role", b.role}, {"dtype", b.dtype}, {"elements", b.elements}});
    if (b.range_low != -1.0 || b.range_high != 1.0)
      buffers.back()["range"] = {b.range_low, b.range_high};
  }
  json args = json::array();
  for (const auto& a : p.args) {
    json arg = {{"kind", arg_kind_name(a.kind)}};
    if (a.kind == ArgInstance::Kind::buffer) {
      arg["buffer"] = a.buffer;
    } else if (a.kind == ArgInstance::Kind::tensor_map) {
      arg["buffer"] = a.buffer;
      arg["dims"] = a.dims;
      arg["box"] = a.box;
      arg["swizzle"] = a.swizzle;
    } else {
      arg["value"] = a.value;
    }
    args.push_back(std::move(arg));
  }
  json j = {{"shape", to_json(p.shape)},
            {"dtype", p.dtype},
            {"buffers", std::move(buffers)},
            {"args", std::move(args)},
            {"launch", to_json(p.launch)},
            {"reference", {{"kind", p.reference.kind}, {"params", p.reference.params}}},
            {"flops", p.flops},
            {"bytes", p.bytes}};
  if (p.baseline) j["baseline"] = {{"kind", p.baseline->kind}, {"params", p.baseline->params}};
  return j;
}

ProblemInstance problem_instance_from_json(const json& j) {
  return with_context<ProblemInstance>("problem instance",
                                       [&] { return problem_from_reader(JsonFields(j, "")); });
}

json to_json(const TimingOptions& t) {
  return {{"warmup_runs", t.warmup_runs},
          {"min_trials", t.min_trials},
          {"max_trials", t.max_trials},
          {"max_seconds", t.max_seconds},
          {"target_rel_noise", t.target_rel_noise},
          {"flush_l2", t.flush_l2},
          {"graph_below_us", t.graph_below_us},
          {"graph_batch_us", t.graph_batch_us}};
}

TimingOptions timing_options_from_json(const json& j) {
  return with_context<TimingOptions>("timing options",
                                     [&] { return timing_options_from_reader(JsonFields(j, "")); });
}

json to_json(const TimingSummary& t) {
  return {{"median_us", t.median_us},
          {"min_us", t.min_us},
          {"p10_us", t.p10_us},
          {"p90_us", t.p90_us},
          {"mean_us", t.mean_us},
          {"rel_noise", t.rel_noise},
          {"trials", t.trials},
          {"converged", t.converged},
          {"method", t.method},
          {"launches_per_sample", t.launches_per_sample},
          {"discarded_samples", t.discarded_samples},
          {"sm_clock_mhz", t.sm_clock_mhz},
          {"throttle_reasons", t.throttle_reasons}};
}

TimingSummary timing_summary_from_json(const json& j) {
  return with_context<TimingSummary>("timing summary",
                                     [&] { return timing_summary_from_reader(JsonFields(j, "")); });
}

json to_json(const Tolerance& t) {
  json j = {{"atol", t.atol}, {"rtol", t.rtol}, {"rel_l2", t.max_rel_l2}};
  if (t.magnitude != 0) j["magnitude"] = t.magnitude;
  return j;
}

Tolerance tolerance_from_json(const json& j) {
  return with_context<Tolerance>("tolerance",
                                 [&] { return tolerance_from_reader(JsonFields(j, "")); });
}

json to_json(const MagnitudeBound& b) {
  return {{"form", "|out - ref| <= atol + rtol * |ref| + c * u * m, u = u_out / sqrt(K) + u_acc"},
          {"c", b.c},
          {"u", b.u},
          {"u_out", b.u_out},
          {"u_acc", b.u_acc},
          {"reduction", b.reduction},
          {"magnitude", b.magnitude}};
}

MagnitudeBound magnitude_bound_from_json(const json& j) {
  return with_context<MagnitudeBound>(
      "magnitude bound", [&] { return magnitude_bound_from_reader(JsonFields(j, "")); });
}

json to_json(const ErrorSummary& e) {
  json j = {{"max_abs", number_or_text(e.max_abs)},
            {"max_rel", number_or_text(e.max_rel)},
            {"rel_l2", number_or_text(e.rel_l2)},
            {"first_bad_index", e.first_bad_index},
            {"non_finite", e.non_finite},
            {"bad_elements", e.bad_elements},
            {"first_bad_output", number_or_text(e.first_bad_output)},
            {"first_bad_reference", number_or_text(e.first_bad_reference)},
            {"guard_damage", e.guard_damage},
            {"first_bad_magnitude", number_or_text(e.first_bad_magnitude)},
            {"first_bad_allowed", number_or_text(e.first_bad_allowed)},
            {"max_bound_fraction", number_or_text(e.max_bound_fraction)}};
  if (e.tolerance) j["tolerance"] = to_json(*e.tolerance);
  if (e.magnitude_bound) j["bound"] = to_json(*e.magnitude_bound);
  return j;
}

ErrorSummary error_summary_from_json(const json& j) {
  // Undo number_or_text before the typed reads.
  json copy = j;
  if (copy.is_object()) {
    for (const char* field :
         {"max_abs", "max_rel", "rel_l2", "first_bad_output", "first_bad_reference",
          "first_bad_magnitude", "first_bad_allowed", "max_bound_fraction"}) {
      if (!copy.contains(field) || !copy[field].is_string()) continue;
      const std::string text = copy[field].get<std::string>();
      if (text == "nan")
        copy[field] = std::numeric_limits<double>::quiet_NaN();
      else if (text == "inf")
        copy[field] = std::numeric_limits<double>::infinity();
      else if (text == "-inf")
        copy[field] = -std::numeric_limits<double>::infinity();
    }
  }
  return with_context<ErrorSummary>(
      "error summary", [&] { return error_summary_from_reader(JsonFields(copy, "")); });
}

json to_json(const MeasureRequest& r) {
  json j = {{"variant_id", r.variant_id},
            {"cubin_path", r.cubin_path},
            {"kernel", r.kernel},
            {"full", to_json(r.full)},
            {"tolerance", to_json(r.tolerance)},
            {"seed", r.seed},
            {"timing", to_json(r.timing)},
            {"time", r.time},
            {"reference_us", r.reference_us}};
  if (r.smoke) j["smoke"] = to_json(*r.smoke);
  return j;
}

MeasureRequest measure_request_from_json(const json& j) {
  return with_context<MeasureRequest>("measure request", [&] {
    const JsonFields r(j, "");
    MeasureRequest m;
    m.variant_id = r.get<std::int64_t>("variant_id");
    m.cubin_path = r.get<std::string>("cubin_path");
    m.kernel = r.get<std::string>("kernel");
    if (r.has("smoke")) m.smoke = problem_from_reader(r.object("smoke"));
    m.full = problem_from_reader(r.object("full"));
    m.tolerance = tolerance_from_reader(r.object("tolerance"));
    m.seed = r.get<std::uint64_t>("seed");
    m.timing = timing_options_from_reader(r.object("timing"));
    m.time = r.get<bool>("time");
    if (r.has("reference_us")) m.reference_us = r.get<double>("reference_us");
    return m;
  });
}

json to_json(const MeasureResult& r) {
  json j = {{"variant_id", r.variant_id},   {"status", std::string(to_string(r.status))},
            {"failed_gate", r.failed_gate}, {"reason", r.reason},
            {"registers", r.registers},     {"static_smem_bytes", r.static_smem_bytes}};
  if (r.error) j["error"] = to_json(*r.error);
  if (r.timing) j["timing"] = to_json(*r.timing);
  return j;
}

MeasureResult measure_result_from_json(const json& j) {
  return with_context<MeasureResult>("measure result", [&] {
    const JsonFields r(j, "");
    MeasureResult m;
    m.variant_id = r.get<std::int64_t>("variant_id");
    const std::string status = r.get<std::string>("status");
    const auto parsed = variant_status_from_string(status);
    if (!parsed) throw std::invalid_argument("field 'status' has unknown value '" + status + "'");
    m.status = *parsed;
    m.failed_gate = r.get<std::string>("failed_gate");
    m.reason = r.get<std::string>("reason");
    m.registers = r.get<int>("registers");
    m.static_smem_bytes = r.get<int>("static_smem_bytes");
    if (r.has("error")) m.error = error_summary_from_json(r.at("error"));
    if (r.has("timing")) m.timing = timing_summary_from_reader(r.object("timing"));
    return m;
  });
}

json to_json(const BaselineTimingRequest& r) {
  json j = {{"problem", to_json(r.problem)}, {"seed", r.seed}, {"timing", to_json(r.timing)}};
  if (r.tolerance) j["tolerance"] = to_json(*r.tolerance);
  return j;
}

BaselineTimingRequest baseline_timing_request_from_json(const json& j) {
  return with_context<BaselineTimingRequest>("baseline timing request", [&] {
    const JsonFields r(j, "");
    BaselineTimingRequest t;
    t.problem = problem_from_reader(r.object("problem"));
    t.seed = r.get<std::uint64_t>("seed");
    t.timing = timing_options_from_reader(r.object("timing"));
    if (r.has("tolerance")) t.tolerance = tolerance_from_json(r.at("tolerance"));
    return t;
  });
}

}  // namespace kt
