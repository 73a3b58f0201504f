#include "tuner/measure_protocol.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace kt {
namespace {

using nlohmann::json;

ProblemInstance sample_problem() {
  ProblemInstance p;
  p.shape = {{"M", 67}, {"N", 45}, {"K", 40}};
  p.dtype = "bf16";
  p.buffers = {{"A", "input", "bf16", 67 * 40},
               {"B", "input", "bf16", 45 * 40},
               {"C", "output", "bf16", 67 * 45},
               {"ws", "scratch", "f32", 1}};
  ArgInstance c;
  c.buffer = "C";
  ArgInstance m;
  m.kind = ArgInstance::Kind::i32;
  m.value = 67;
  ArgInstance mk;
  mk.kind = ArgInstance::Kind::i64;
  mk.value = 67.0 * 40;
  ArgInstance alpha;
  alpha.kind = ArgInstance::Kind::f32;
  alpha.value = 0.5;
  ArgInstance map;
  map.kind = ArgInstance::Kind::tensor_map;
  map.buffer = "A";
  map.dims = {40, 67};
  map.box = {32, 64};
  map.swizzle = 64;
  p.args = {c, m, mk, alpha, map};
  p.launch.grid = {3, 2, 1};
  p.launch.block = {128, 1, 1};
  p.launch.cluster = {2, 1, 1};
  p.launch.dynamic_smem = 49152;
  p.reference.kind = "cublas_gemm";
  p.reference.params = {{"a", "A"}, {"b", "B"}, {"c", "C"}, {"m", 67}, {"n", 45}, {"k", 40}};
  p.flops = 2.0 * 67 * 45 * 40;
  p.bytes = 12345;
  return p;
}

// Through text, as it travels over the pipe.
json wire(const json& j) {
  return json::parse(j.dump());
}

void expect_same(const ProblemInstance& a, const ProblemInstance& b) {
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.dtype, b.dtype);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name);
    EXPECT_EQ(a.buffers[i].role, b.buffers[i].role);
    EXPECT_EQ(a.buffers[i].dtype, b.buffers[i].dtype);
    EXPECT_EQ(a.buffers[i].elements, b.buffers[i].elements);
  }
  ASSERT_EQ(a.args.size(), b.args.size());
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    EXPECT_EQ(a.args[i].kind, b.args[i].kind);
    EXPECT_EQ(a.args[i].buffer, b.args[i].buffer);
    EXPECT_EQ(a.args[i].value, b.args[i].value);
    EXPECT_EQ(a.args[i].dims, b.args[i].dims);
    EXPECT_EQ(a.args[i].box, b.args[i].box);
    EXPECT_EQ(a.args[i].swizzle, b.args[i].swizzle);
  }
  EXPECT_EQ(a.launch.grid, b.launch.grid);
  EXPECT_EQ(a.launch.block, b.launch.block);
  EXPECT_EQ(a.launch.cluster, b.launch.cluster);
  EXPECT_EQ(a.launch.dynamic_smem, b.launch.dynamic_smem);
  EXPECT_EQ(a.reference.kind, b.reference.kind);
  EXPECT_EQ(a.reference.params, b.reference.params);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytes, b.bytes);
}

TEST(Protocol, ProblemInstanceRoundTrips) {
  const ProblemInstance p = sample_problem();
  expect_same(p, problem_instance_from_json(wire(to_json(p))));
}

TEST(Protocol, MeasureRequestRoundTripsWithAndWithoutSmoke) {
  MeasureRequest r;
  r.variant_id = 42;
  r.cubin_path = "/tmp/x.cubin";
  r.kernel = "kt_gemm";
  r.full = sample_problem();
  r.tolerance = Tolerance{0.03125, 0.0009765625, 0.001};
  r.seed = 0xFFFFFFFFFFFFFFF1ull;  // full 64-bit range survives
  r.timing.warmup_runs = 2;
  r.timing.min_trials = 7;
  r.timing.max_trials = 70;
  r.timing.max_seconds = 1.5;
  r.timing.target_rel_noise = 0.01;
  r.timing.flush_l2 = false;
  r.time = false;
  MeasureRequest back = measure_request_from_json(wire(to_json(r)));
  EXPECT_EQ(back.variant_id, 42);
  EXPECT_EQ(back.cubin_path, r.cubin_path);
  EXPECT_EQ(back.kernel, r.kernel);
  EXPECT_FALSE(back.smoke.has_value());
  expect_same(r.full, back.full);
  EXPECT_EQ(back.tolerance, r.tolerance);
  EXPECT_EQ(back.seed, r.seed);
  EXPECT_EQ(back.timing.warmup_runs, 2);
  EXPECT_EQ(back.timing.min_trials, 7);
  EXPECT_EQ(back.timing.max_trials, 70);
  EXPECT_EQ(back.timing.max_seconds, 1.5);
  EXPECT_EQ(back.timing.target_rel_noise, 0.01);
  EXPECT_FALSE(back.timing.flush_l2);
  EXPECT_FALSE(back.time);

  r.smoke = sample_problem();
  r.smoke->shape["M"] = 3;
  back = measure_request_from_json(wire(to_json(r)));
  ASSERT_TRUE(back.smoke.has_value());
  expect_same(*r.smoke, *back.smoke);
}

TEST(Protocol, MeasureResultRoundTrips) {
  MeasureResult r;
  r.variant_id = 9;
  r.status = VariantStatus::wrong_result;
  r.failed_gate = "smoke";
  r.reason = "rel_l2 1 > tolerance 0.01";
  r.error = ErrorSummary{1.5, 0.25, 1.0, 67, 45};
  r.registers = 128;
  r.static_smem_bytes = 1024;
  MeasureResult back = measure_result_from_json(wire(to_json(r)));
  EXPECT_EQ(back.variant_id, 9);
  EXPECT_EQ(back.status, VariantStatus::wrong_result);
  EXPECT_EQ(back.failed_gate, "smoke");
  EXPECT_EQ(back.reason, r.reason);
  ASSERT_TRUE(back.error.has_value());
  EXPECT_EQ(back.error->max_abs, 1.5);
  EXPECT_EQ(back.error->max_rel, 0.25);
  EXPECT_EQ(back.error->rel_l2, 1.0);
  EXPECT_EQ(back.error->first_bad_index, 67);
  EXPECT_EQ(back.error->non_finite, 45);
  EXPECT_FALSE(back.timing.has_value());
  EXPECT_EQ(back.registers, 128);
  EXPECT_EQ(back.static_smem_bytes, 1024);

  r.status = VariantStatus::measured;
  r.timing = TimingSummary{10.5, 10.0, 10.1, 11.0, 10.6, 0.004, 55, true};
  back = measure_result_from_json(wire(to_json(r)));
  ASSERT_TRUE(back.timing.has_value());
  EXPECT_EQ(back.timing->median_us, 10.5);
  EXPECT_EQ(back.timing->min_us, 10.0);
  EXPECT_EQ(back.timing->p10_us, 10.1);
  EXPECT_EQ(back.timing->p90_us, 11.0);
  EXPECT_EQ(back.timing->mean_us, 10.6);
  EXPECT_EQ(back.timing->rel_noise, 0.004);
  EXPECT_EQ(back.timing->trials, 55);
  EXPECT_TRUE(back.timing->converged);
}

TEST(Protocol, PerElementFieldsAndTheToleranceRoundTrip) {
  ErrorSummary e;
  e.max_abs = 1.0;
  e.rel_l2 = 0.002;
  e.first_bad_index = 1507;
  e.non_finite = 1;
  e.bad_elements = 3;
  e.first_bad_output = std::numeric_limits<double>::quiet_NaN();
  e.first_bad_reference = 30.5;
  e.tolerance = Tolerance{0.03125, 0.0078125, 0.0078125};
  e.guard_damage = "wrote past the end of C: guard after C damaged at byte 0";
  const ErrorSummary back = error_summary_from_json(wire(to_json(e)));
  EXPECT_EQ(back.first_bad_index, 1507);
  EXPECT_EQ(back.non_finite, 1);
  EXPECT_EQ(back.bad_elements, 3);
  EXPECT_TRUE(std::isnan(back.first_bad_output));
  EXPECT_EQ(back.first_bad_reference, 30.5);
  ASSERT_TRUE(back.tolerance.has_value());
  EXPECT_EQ(*back.tolerance, *e.tolerance);
  EXPECT_EQ(back.guard_damage, e.guard_damage);
  // The manifest's names on the wire, so a stored result reads like the manifest.
  EXPECT_EQ(to_json(*e.tolerance),
            (nlohmann::json{{"atol", 0.03125}, {"rtol", 0.0078125}, {"rel_l2", 0.0078125}}));
  EXPECT_EQ(tolerance_from_json(to_json(*e.tolerance)), *e.tolerance);
  EXPECT_THROW(tolerance_from_json(nlohmann::json{{"atol", 0.1}, {"rtol", 0.1}}),
               std::invalid_argument);
}

TEST(Protocol, TheMagnitudeTermAndItsBoundRoundTrip) {
  const Tolerance tolerance{0.03125, 0.0078125, 0.0078125, 16};
  EXPECT_EQ(
      to_json(tolerance),
      (nlohmann::json{
          {"atol", 0.03125}, {"rtol", 0.0078125}, {"rel_l2", 0.0078125}, {"magnitude", 16.0}}));
  EXPECT_EQ(tolerance_from_json(to_json(tolerance)), tolerance);

  ErrorSummary e;
  e.tolerance = tolerance;
  e.bad_elements = 1;
  e.first_bad_index = 12;
  e.first_bad_magnitude = 4100.5;
  e.first_bad_allowed = 2.31;
  e.max_bound_fraction = std::numeric_limits<double>::infinity();
  e.magnitude_bound =
      MagnitudeBound{16, 0x1p-8 / 128 + 0x1p-24, 0x1p-8, 0x1p-24, 16384, "|A|*|B|^T"};
  const nlohmann::json j = wire(to_json(e));
  // A reader of a stored result finds the bound's form and constants.
  EXPECT_EQ(j["bound"]["form"],
            "|out - ref| <= atol + rtol * |ref| + c * u * m, u = u_out / sqrt(K) + u_acc");
  EXPECT_EQ(j["bound"]["c"], 16.0);
  EXPECT_EQ(j["bound"]["reduction"], 16384);
  EXPECT_EQ(j["bound"]["magnitude"], "|A|*|B|^T");
  EXPECT_EQ(j["tolerance"]["magnitude"], 16.0);
  const ErrorSummary back = error_summary_from_json(j);
  ASSERT_TRUE(back.magnitude_bound.has_value());
  EXPECT_EQ(*back.magnitude_bound, *e.magnitude_bound);
  EXPECT_EQ(back.first_bad_magnitude, 4100.5);
  EXPECT_EQ(back.first_bad_allowed, 2.31);
  EXPECT_TRUE(std::isinf(back.max_bound_fraction));
  EXPECT_EQ(*back.tolerance, tolerance);
  EXPECT_EQ(magnitude_bound_from_json(to_json(*e.magnitude_bound)), *e.magnitude_bound);

  // A request carries the family's c to the worker.
  MeasureRequest r;
  r.full = sample_problem();
  r.tolerance = tolerance;
  EXPECT_EQ(measure_request_from_json(wire(to_json(r))).tolerance, tolerance);
  BaselineTimingRequest b;
  b.problem = sample_problem();
  b.tolerance = tolerance;
  EXPECT_EQ(baseline_timing_request_from_json(wire(to_json(b))).tolerance, tolerance);
}

TEST(Protocol, ErrorSummaryFromBeforePerElementChecksStillReads) {
  const nlohmann::json old = {{"max_abs", 0.5},
                              {"max_rel", 0.01},
                              {"rel_l2", 0.002},
                              {"first_bad_index", -1},
                              {"non_finite", 0}};
  const ErrorSummary e = error_summary_from_json(old);
  EXPECT_EQ(e.rel_l2, 0.002);
  EXPECT_EQ(e.bad_elements, -1);  // not counted then
  EXPECT_FALSE(e.tolerance.has_value());
  EXPECT_TRUE(e.guard_damage.empty());
  EXPECT_FALSE(e.magnitude_bound.has_value());  // nor a magnitude term
  EXPECT_EQ(e.max_bound_fraction, -1);
}

TEST(Protocol, MeasureRequestNeedsAToleranceObject) {
  MeasureRequest r;
  r.full = sample_problem();
  nlohmann::json j = to_json(r);
  j["tolerance"] = 0.01;  // the old max rel_l2 alone
  try {
    measure_request_from_json(j);
    ADD_FAILURE() << "a plain-number tolerance was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tolerance"), std::string::npos) << e.what();
  }
}

TEST(Protocol, InfiniteAndNanErrorsSurviveTheWire) {
  ErrorSummary e;
  e.rel_l2 = std::numeric_limits<double>::infinity();
  e.max_rel = std::numeric_limits<double>::quiet_NaN();
  const ErrorSummary back = error_summary_from_json(wire(to_json(e)));
  EXPECT_TRUE(std::isinf(back.rel_l2));
  EXPECT_TRUE(std::isnan(back.max_rel));
}

TEST(Protocol, BaselineTimingRequestRoundTrips) {
  BaselineTimingRequest r;
  r.problem = sample_problem();
  r.seed = 77;
  r.timing.min_trials = 3;
  const BaselineTimingRequest back = baseline_timing_request_from_json(wire(to_json(r)));
  expect_same(r.problem, back.problem);
  EXPECT_EQ(back.seed, 77u);
  EXPECT_EQ(back.timing.min_trials, 3);
}

// The message of the exception a call throws, or "" if it does not throw invalid_argument.
template <typename F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Protocol, MissingFieldsAreNamed) {
  MeasureRequest r;
  r.full = sample_problem();
  json j = to_json(r);
  j.erase("kernel");
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("'kernel'"),
            std::string::npos);
  j = to_json(r);
  j["full"]["launch"].erase("grid");
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("'full.launch.grid'"),
            std::string::npos);
  j = to_json(r);
  j["full"]["buffers"][1].erase("elements");
  EXPECT_NE(
      invalid_argument_of([&] { measure_request_from_json(j); }).find("'full.buffers[1].elements'"),
      std::string::npos);
  j = to_json(r);
  j["timing"].erase("min_trials");
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("'timing.min_trials'"),
            std::string::npos);
  EXPECT_NE(invalid_argument_of([] { timing_summary_from_json(json::object()); }).find("median_us"),
            std::string::npos);
  EXPECT_NE(invalid_argument_of([] { measure_result_from_json(json::array()); }).find("object"),
            std::string::npos);
}

TEST(Protocol, WrongTypesAndValuesAreRejected) {
  MeasureRequest r;
  r.full = sample_problem();
  json j = to_json(r);
  j["variant_id"] = "42";
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("'variant_id'"),
            std::string::npos);
  j = to_json(r);
  j["full"]["launch"]["block"] = {128, 1};
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("'full.launch.block'"),
            std::string::npos);
  j = to_json(r);
  j["full"]["args"][0]["kind"] = "f64";
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("f64"),
            std::string::npos);
  j = to_json(r);
  j["seed"] = -1;
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("'seed'"),
            std::string::npos);
  j = to_json(r);
  j["full"]["shape"]["M"] = 1.5;
  EXPECT_NE(invalid_argument_of([&] { measure_request_from_json(j); }).find("shape"),
            std::string::npos);
  json result = to_json(MeasureResult{});
  result["status"] = "exploded";
  EXPECT_NE(invalid_argument_of([&] { measure_result_from_json(result); }).find("exploded"),
            std::string::npos);
}

TEST(Protocol, TimingMethodClocksAndReferenceTimeRoundTrip) {
  TimingSummary t{2.5, 2.4, 2.45, 2.6, 2.5, 0.003, 120, true};
  t.method = "graph";
  t.launches_per_sample = 20;
  t.discarded_samples = 4;
  t.sm_clock_mhz = 1980;
  t.throttle_reasons = 0x24;
  const TimingSummary back = timing_summary_from_json(wire(to_json(t)));
  EXPECT_EQ(back.method, "graph");
  EXPECT_EQ(back.launches_per_sample, 20);
  EXPECT_EQ(back.discarded_samples, 4);
  EXPECT_EQ(back.sm_clock_mhz, 1980);
  EXPECT_EQ(back.throttle_reasons, 0x24u);

  MeasureRequest r;
  r.full = sample_problem();
  r.reference_us = 176.7;
  r.timing.graph_below_us = 8;
  r.timing.graph_batch_us = 80;
  const MeasureRequest request = measure_request_from_json(wire(to_json(r)));
  EXPECT_EQ(request.reference_us, 176.7);
  EXPECT_EQ(request.timing.graph_below_us, 8);
  EXPECT_EQ(request.timing.graph_batch_us, 80);
}

TEST(Protocol, MessagesWithoutTheNewerFieldsReadWithDefaults) {
  json timing = to_json(TimingSummary{});
  for (const char* field :
       {"method", "launches_per_sample", "discarded_samples", "sm_clock_mhz", "throttle_reasons"})
    timing.erase(field);
  const TimingSummary t = timing_summary_from_json(timing);
  EXPECT_EQ(t.method, "events");
  EXPECT_EQ(t.launches_per_sample, 1);
  EXPECT_EQ(t.sm_clock_mhz, -1);

  MeasureRequest r;
  r.full = sample_problem();
  json request = to_json(r);
  request.erase("reference_us");
  request["timing"].erase("graph_below_us");
  const MeasureRequest back = measure_request_from_json(request);
  EXPECT_EQ(back.reference_us, 0);
  EXPECT_EQ(back.timing.graph_below_us, TimingOptions{}.graph_below_us);
}

}  // namespace
}  // namespace kt
