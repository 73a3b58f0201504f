// A GEMM template on a real GPU through the measurement worker, as a tuning job runs it:
// manifest -> instantiate (tensor maps, clusters) -> NVRTC -> kerntune-worker -> cuBLAS
// reference on fresh random inputs with a poisoned output. Skips without a GPU or on an arch the
// template does not target. Shared by the tests of the templates added for issue 14.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "support/gpu_fixture.hpp"

namespace kt::test {

inline std::string shape_text(const Shape& s) {
  return std::to_string(s.at("M")) + "x" + std::to_string(s.at("N")) + "x" +
         std::to_string(s.at("K"));
}

class GemmTemplateOnGpu : public WorkerGpuTest {
 protected:
  explicit GemmTemplateOnGpu(std::string tmpl) : tmpl_(std::move(tmpl)) {}

  void SetUp() override {
    WorkerGpuTest::SetUp();
    if (IsSkipped()) return;
    const auto& archs = gemm_template(tmpl_).archs;
    if (std::find(archs.begin(), archs.end(), device_.arch) == archs.end())
      GTEST_SKIP() << tmpl_ << " does not target " << device_.arch;
  }

  std::string describe(const Config& c, const std::string& dtype, const Shape& s) const {
    return tmpl_ + " " + dtype + " " + canonical_key(c) + " on " + shape_text(s);
  }

  // The cubin of (config, dtype), compiled once per test.
  std::string cubin(const Config& c, const std::string& dtype) {
    const std::string key = canonical_key(c) + "/" + dtype;
    if (auto it = cubins_.find(key); it != cubins_.end()) return it->second;
    return cubins_[key] =
               write_cubin(compile_request(gemm_family(), gemm_template(tmpl_), c, dtype, limits_),
                           std::to_string(cubins_.size()));
  }

  // The request the tuner sends for this variant and shape; the smoke instance is the family's
  // ragged smoke shape, as in a job.
  MeasureRequest request(const Config& c, const std::string& dtype, const Shape& s, bool time) {
    const TemplateSpec& tmpl = gemm_template(tmpl_);
    MeasureRequest r;
    r.variant_id = ++requests_;
    r.cubin_path = cubin(c, dtype);
    r.kernel = tmpl.kernel;
    r.smoke =
        instantiate(gemm_family(), tmpl, c, smoke_shape_for(gemm_family(), s), dtype, limits_);
    r.full = instantiate(gemm_family(), tmpl, c, s, dtype, limits_);
    r.tolerance = gemm_family().tolerance.at(dtype);
    r.seed = 500 + static_cast<std::uint64_t>(requests_);
    r.time = time;
    r.timing.warmup_runs = 3;
    r.timing.min_trials = 10;
    r.timing.max_trials = 200;
    r.timing.max_seconds = 0.5;
    return r;
  }

  // Correct against cuBLAS on the shape (and the smoke shape): every element written, small
  // error. Returns false when the variant hung or crashed, so callers can skip its other shapes
  // instead of waiting out the timeout again.
  bool expect_correct(const Config& c, const std::string& dtype, const Shape& s) {
    using namespace std::chrono_literals;
    const MeasureResult r = client_->measure(request(c, dtype, s, false), 20s);
    const std::string where = describe(c, dtype, s);
    EXPECT_EQ(r.status, VariantStatus::measured)
        << where << ": " << r.failed_gate << ": " << r.reason;
    if (r.status != VariantStatus::measured && r.status != VariantStatus::wrong_result)
      return false;
    EXPECT_GT(r.registers, 0) << where << ": the loaded function's register count";
    EXPECT_TRUE(r.error.has_value()) << where;
    if (!r.error) return true;
    // Where the first bad element lies (row, column of C) tells which part of a tile is wrong.
    const std::int64_t bad = r.error->first_bad_index;
    const std::int64_t n =
        r.failed_gate == "smoke" ? smoke_shape_for(gemm_family(), s).at("N") : s.at("N");
    const std::string detail =
        " (" + r.failed_gate + ") first bad element " +
        (bad < 0 ? std::string("none")
                 : "row " + std::to_string(bad / n) + " col " + std::to_string(bad % n)) +
        ", max_abs " + std::to_string(r.error->max_abs);
    EXPECT_EQ(r.error->non_finite, 0) << where << ": poison left in C" << detail;
    EXPECT_EQ(r.error->bad_elements, 0) << where << detail;
    EXPECT_LT(r.error->rel_l2, gemm_family().tolerance.at(dtype).max_rel_l2) << where << detail;
    return true;
  }

  // Times the variant and cuBLAS on the shape (same worker, same protocol); prints both and
  // returns cuBLAS / ours (0 when either failed, with a test failure).
  double ratio_to_cublas(const Config& c, const Shape& s) {
    using namespace std::chrono_literals;
    const MeasureResult ours = client_->measure(request(c, "bf16", s, true), 120s);
    const std::string where = describe(c, "bf16", s);
    EXPECT_EQ(ours.status, VariantStatus::measured)
        << where << ": " << ours.failed_gate << ": " << ours.reason;
    if (ours.status != VariantStatus::measured || !ours.timing) return 0;
    BaselineTimingRequest reference;
    reference.problem = instantiate(gemm_family(), gemm_template(tmpl_), c, s, "bf16", limits_);
    reference.timing = request(c, "bf16", s, true).timing;
    std::string reason;
    const auto baseline = client_->time_baseline(reference, 120s, &reason);
    const std::optional<TimingSummary> cublas =
        baseline ? std::optional(baseline->timing) : std::nullopt;
    EXPECT_TRUE(cublas.has_value()) << reason;
    if (!cublas) return 0;
    const double flops = 2.0 * s.at("M") * s.at("N") * s.at("K");
    const double ratio = cublas->median_us / ours.timing->median_us;
    std::printf("[ratio] %s: ours %.2f us (%.1f TFLOP/s), cuBLAS %.2f us, cuBLAS/ours %.3f\n",
                where.c_str(), ours.timing->median_us, flops / ours.timing->median_us / 1e6,
                cublas->median_us, ratio);
    std::fflush(stdout);
    RecordProperty(shape_text(s) + " " + canonical_key(c), std::to_string(ratio));
    return ratio;
  }

  std::string tmpl_;
  std::map<std::string, std::string> cubins_;
  int requests_ = 0;
};

}  // namespace kt::test
