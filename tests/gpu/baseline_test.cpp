// The baseline at its best and the final comparison, on a real GPU through the worker client:
// cublasLt's heuristic algorithms are timed and the fastest kept; an interleaved comparison gives
// every side (variants and baseline) the same timing method at every size; a variant compared
// with itself is a tie whose speedup interval holds 1. Skipped without a device.
#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include "support/gpu_fixture.hpp"
#include "support/naive_gemm.hpp"
#include "tuner/interleaved_protocol.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

// The GEMM family's baseline on a naive-GEMM problem's buffers (A, B, C).
ProblemInstance with_cublaslt_baseline(ProblemInstance problem) {
  const Shape& s = problem.shape;
  problem.baseline = ReferenceInstance{
      "cublaslt_gemm",
      {{"a", "A"}, {"b", "B"}, {"c", "C"}, {"m", s.at("M")}, {"n", s.at("N")}, {"k", s.at("K")}}};
  return problem;
}

class BaselineOnGpu : public test::WorkerGpuTest {
 protected:
  MeasureRequest request(std::int64_t id, int m, int n, int k) {
    MeasureRequest r;
    r.variant_id = id;
    r.cubin_path = write_cubin(test::naive_gemm_compile(test::NaiveGemm::correct), "gemm");
    r.kernel = test::kNaiveGemmKernel;
    r.full = with_cublaslt_baseline(test::naive_gemm_problem(m, n, k));
    r.tolerance = test::naive_gemm_tolerance();
    r.seed = 7;
    r.timing.min_trials = 10;
    r.timing.max_trials = 300;
    r.timing.max_seconds = 0.5;
    return r;
  }
};

TEST_F(BaselineOnGpu, CublasLtKeepsTheFastestOfItsHeuristicAlgorithms) {
  BaselineTimingRequest r;
  r.problem = with_cublaslt_baseline(test::naive_gemm_problem(2048, 2048, 2048));
  r.timing.max_seconds = 0.5;
  r.tolerance = test::naive_gemm_tolerance();
  std::string reason;
  const auto answer = client_->time_baseline(r, 120s, &reason);
  ASSERT_TRUE(answer) << reason;
  // Its output was checked element by element against the fp32 reference before timing.
  ASSERT_TRUE(answer->error);
  EXPECT_EQ(answer->error->bad_elements, 0);
  EXPECT_TRUE(answer->error->guard_damage.empty());
  EXPECT_LT(answer->error->rel_l2, 0.01);
  const nlohmann::json& b = answer->baseline;
  ASSERT_EQ(b.value("kind", ""), "cublaslt_gemm") << b.dump();
  EXPECT_EQ(b.value("workspace_limit_bytes", 0), 32 << 20);
  const int algorithms = b.value("heuristic_algorithms", 0);
  EXPECT_GE(algorithms, 1);
  EXPECT_LE(algorithms, 8);
  ASSERT_EQ(b.at("selection").size(), static_cast<std::size_t>(algorithms));
  const int chosen = b.value("algorithm_index", -1);
  ASSERT_GE(chosen, 0);
  ASSERT_LT(chosen, algorithms);
  double fastest = 1e30;
  for (const auto& s : b.at("selection"))
    fastest = std::min(fastest, s.at("median_us").get<double>());
  EXPECT_EQ(b.at("selection")[chosen].at("median_us").get<double>(), fastest);
  EXPECT_GE(b.at("algorithm").value("id", -1), 0) << b.dump();
  // 17 GFLOP in bf16: well above 10 us and far below a naive kernel's time on any Hopper GPU.
  EXPECT_GT(answer->timing.median_us, 10.0);
  EXPECT_LT(answer->timing.median_us, 1000.0);

  // A given algorithm (a job's final comparison reuses its first pass's choice) is used as is.
  const int given = algorithms - 1;
  r.problem.baseline->params["algorithm_index"] = given;
  const auto again = client_->time_baseline(r, 120s, &reason);
  ASSERT_TRUE(again) << reason;
  EXPECT_EQ(again->baseline.value("algorithm_index", -1), given);
  EXPECT_TRUE(again->baseline.at("selection").empty());
  ASSERT_TRUE(again->error);
  EXPECT_EQ(again->error->bad_elements, 0);
  r.problem.baseline->params["algorithm_index"] = 8;
  EXPECT_FALSE(client_->time_baseline(r, 120s, &reason));
  EXPECT_NE(reason.find("algorithm_index"), std::string::npos) << reason;
}

// A baseline whose choice computes a wrong result gives way to its next-fastest candidate; when
// every candidate fails (here: a tolerance no 16-bit output meets) the answer still times it, for
// the watchdog, and says it failed validation, listing each rejected algorithm with its reason.
TEST_F(BaselineOnGpu, AWrongBaselineFallsBackThroughItsCandidatesAndThenSaysItFailed) {
  BaselineTimingRequest r;
  r.problem = with_cublaslt_baseline(test::naive_gemm_problem(333, 517, 1031));
  r.timing.max_seconds = 0.2;
  r.tolerance = test::naive_gemm_tolerance();
  r.tolerance->atol = 0;
  r.tolerance->rtol = 0;
  r.tolerance->max_rel_l2 = 0;
  r.tolerance->magnitude = 0;
  std::string reason;
  const auto answer = client_->time_baseline(r, 120s, &reason);
  ASSERT_TRUE(answer) << reason;
  ASSERT_TRUE(answer->validation_failed) << answer->baseline.dump();
  EXPECT_NE(answer->validation_failed->find("every candidate"), std::string::npos);
  const nlohmann::json& b = answer->baseline;
  const std::size_t algorithms = b.value("heuristic_algorithms", 0);
  ASSERT_TRUE(b.contains("rejected")) << b.dump();
  EXPECT_EQ(b["rejected"].size(), algorithms) << "each candidate tried once";
  std::vector<int> tried;
  for (const auto& rejected : b["rejected"]) {
    EXPECT_NE(rejected.value("reason", "").find("bad element"), std::string::npos);
    tried.push_back(rejected.value("index", -1));
  }
  // Fastest first: the first rejected is the one timing chose.
  double fastest = 1e30;
  int fastest_index = -1;
  for (const auto& s : b.at("selection"))
    if (s.at("median_us").get<double>() < fastest) {
      fastest = s.at("median_us").get<double>();
      fastest_index = s.at("index").get<int>();
    }
  ASSERT_FALSE(tried.empty());
  EXPECT_EQ(tried.front(), fastest_index);
  std::sort(tried.begin(), tried.end());
  EXPECT_EQ(std::unique(tried.begin(), tried.end()), tried.end()) << "no candidate twice";
  EXPECT_GT(answer->timing.median_us, 0) << "still timed, for the watchdog";

  // The same problem with the family's tolerance: the first choice passes, nothing rejected.
  r.tolerance = test::naive_gemm_tolerance();
  const auto fine = client_->time_baseline(r, 120s, &reason);
  ASSERT_TRUE(fine) << reason;
  EXPECT_FALSE(fine->validation_failed);
  EXPECT_FALSE(fine->baseline.contains("rejected")) << fine->baseline.dump();
}

// Short kernels (graphs: the shortest side, cublasLt, decides for all) and long ones (events):
// whatever the method, every side gets the same.
TEST_F(BaselineOnGpu, TheFinalComparisonTimesEverySideTheSameWayAndAVariantTiesWithItself) {
  for (const int size : {128, 2048}) {
    SCOPED_TRACE("size " + std::to_string(size));
    InterleavedRequest interleaved;
    interleaved.candidates = {request(1, size, size, size), request(2, size, size, size)};
    interleaved.timing = interleaved.candidates[0].timing;
    interleaved.baseline = interleaved.candidates[0].full;
    interleaved.baseline_seed = 11;
    const InterleavedResult r = client_->measure_interleaved(interleaved);
    ASSERT_EQ(r.timings.size(), 2u);
    ASSERT_TRUE(r.baseline_timing);
    ASSERT_EQ(r.speedups.size(), 2u);
    EXPECT_EQ(r.baseline.value("kind", ""), "cublaslt_gemm");
    for (const TimingSummary& t : r.timings) {
      EXPECT_EQ(t.method, r.baseline_timing->method);
      EXPECT_EQ(t.launches_per_sample, r.baseline_timing->launches_per_sample);
    }
    EXPECT_EQ(r.baseline_timing->method, size == 128 ? "graph" : "events");
    // The same kernel twice: a tie, and the two speedups' intervals overlap.
    EXPECT_FALSE(r.distinguishable) << r.reason;
    EXPECT_LT(r.margin, 0.03) << r.reason;
    EXPECT_LE(r.speedups[0].low, r.speedups[1].high);
    EXPECT_LE(r.speedups[1].low, r.speedups[0].high);
    for (const Speedup& s : r.speedups) {
      EXPECT_LE(s.low, s.value);
      EXPECT_GE(s.high, s.value);
      // A naive one-thread-per-element GEMM is far slower than cublasLt at 2048^3.
      if (size == 2048) {
        EXPECT_LT(s.high, 1.0);
      }
    }
  }
}

}  // namespace
}  // namespace kt
