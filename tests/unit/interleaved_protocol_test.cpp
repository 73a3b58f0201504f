#include "tuner/interleaved_protocol.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace kt {
namespace {

using nlohmann::json;

json wire(const json& j) {
  return json::parse(j.dump());
}

MeasureRequest candidate(std::int64_t id) {
  MeasureRequest r;
  r.variant_id = id;
  r.cubin_path = "/tmp/v" + std::to_string(id) + ".cubin";
  r.kernel = "kt_gemm";
  r.full.shape = {{"M", 64}, {"N", 64}, {"K", 64}};
  r.full.dtype = "bf16";
  r.full.buffers = {{"C", "output", "bf16", 64 * 64}};
  r.reference_us = 12.5;
  return r;
}

TEST(InterleavedProtocol, RequestRoundTrips) {
  InterleavedRequest r;
  r.candidates = {candidate(3), candidate(8)};
  r.timing.max_trials = 300;
  r.timing.target_rel_noise = 0.002;
  const InterleavedRequest back = interleaved_request_from_json(wire(to_json(r)));
  ASSERT_EQ(back.candidates.size(), 2u);
  EXPECT_EQ(back.candidates[1].variant_id, 8);
  EXPECT_EQ(back.candidates[1].cubin_path, "/tmp/v8.cubin");
  EXPECT_EQ(back.candidates[0].reference_us, 12.5);
  EXPECT_EQ(back.timing.max_trials, 300);
  EXPECT_EQ(back.timing.target_rel_noise, 0.002);
}

TEST(InterleavedProtocol, ResultRoundTrips) {
  InterleavedResult r;
  r.variant_ids = {3, 8};
  TimingSummary a{10, 9.9, 9.95, 10.1, 10, 0.002, 200, true};
  a.method = "graph";
  a.launches_per_sample = 5;
  r.timings = {a, TimingSummary{10.4, 10.3, 10.35, 10.5, 10.4, 0.002, 200, true}};
  r.winner_variant_id = 3;
  r.runner_up_variant_id = 8;
  r.distinguishable = true;
  r.margin = 0.04;
  r.reason = "intervals disjoint";
  const InterleavedResult back = interleaved_result_from_json(wire(to_json(r)));
  EXPECT_EQ(back.variant_ids, r.variant_ids);
  ASSERT_EQ(back.timings.size(), 2u);
  EXPECT_EQ(back.timings[0].method, "graph");
  EXPECT_EQ(back.timings[0].launches_per_sample, 5);
  EXPECT_EQ(back.timings[1].median_us, 10.4);
  EXPECT_EQ(back.winner_variant_id, 3);
  EXPECT_EQ(back.runner_up_variant_id, 8);
  EXPECT_TRUE(back.distinguishable);
  EXPECT_EQ(back.margin, 0.04);
  EXPECT_EQ(back.reason, r.reason);
}

TEST(InterleavedProtocol, TheBaselineAndTheSpeedupsTravel) {
  InterleavedRequest r;
  r.candidates = {candidate(3)};
  r.baseline = candidate(3).full;
  r.baseline->baseline = ReferenceInstance{"cublaslt_gemm", {{"a", "A"}, {"m", 64}}};
  r.baseline_seed = 0xFFFFFFFFFFFFFFF1ull;  // above 2^53: must not pass through a double
  const InterleavedRequest back = interleaved_request_from_json(wire(to_json(r)));
  ASSERT_TRUE(back.baseline);
  ASSERT_TRUE(back.baseline->baseline);
  EXPECT_EQ(back.baseline->baseline->kind, "cublaslt_gemm");
  EXPECT_EQ(back.baseline->baseline->params.at("m"), 64);
  EXPECT_EQ(back.baseline_seed, 0xFFFFFFFFFFFFFFF1ull);
  InterleavedRequest without;
  without.candidates = {candidate(1)};
  EXPECT_FALSE(interleaved_request_from_json(wire(to_json(without))).baseline);

  InterleavedResult result;
  result.variant_ids = {3, 8};
  result.timings = {TimingSummary{10, 9.9, 9.95, 10.1, 10, 0.002, 200, true},
                    TimingSummary{10.4, 10.3, 10.35, 10.5, 10.4, 0.002, 200, true}};
  result.winner_variant_id = 3;
  result.baseline_timing = TimingSummary{11, 10.9, 10.95, 11.1, 11, 0.002, 200, true};
  result.baseline = {{"kind", "cublaslt_gemm"}, {"algorithm_index", 2}};
  result.speedups = {{1.1, 1.08, 1.12}, {1.058, 1.04, 1.07}};
  const InterleavedResult rt = interleaved_result_from_json(wire(to_json(result)));
  ASSERT_TRUE(rt.baseline_timing);
  EXPECT_EQ(rt.baseline_timing->median_us, 11);
  EXPECT_EQ(rt.baseline.at("algorithm_index"), 2);
  ASSERT_EQ(rt.speedups.size(), 2u);
  EXPECT_EQ(rt.speedups[1].low, 1.04);
  ASSERT_TRUE(winner_speedup(rt));
  EXPECT_EQ(winner_speedup(rt)->value, 1.1);
  EXPECT_EQ(speedup_of(rt, 8)->high, 1.07);
  EXPECT_FALSE(speedup_of(rt, 99));
  ASSERT_NE(final_timing_of(rt, 8), nullptr);
  EXPECT_EQ(final_timing_of(rt, 8)->median_us, 10.4);

  json mismatched = to_json(result);
  mismatched["speedups"].erase(0);
  EXPECT_THROW(interleaved_result_from_json(mismatched), std::invalid_argument);
}

TEST(InterleavedProtocol, MalformedMessagesAreRejectedWithTheField) {
  try {
    interleaved_request_from_json(json{{"timing", to_json(TimingOptions{})}});
    FAIL() << "no candidates accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("candidates"), std::string::npos) << e.what();
  }
  json result = to_json(InterleavedResult{});
  result["variant_ids"] = json::array({1, 2});  // two ids, no timings
  EXPECT_THROW(interleaved_result_from_json(result), std::invalid_argument);
  result = to_json(InterleavedResult{});
  result["margin"] = "wide";
  EXPECT_THROW(interleaved_result_from_json(result), std::invalid_argument);
  EXPECT_THROW(interleaved_request_from_json(json::array()), std::invalid_argument);
}

}  // namespace
}  // namespace kt
