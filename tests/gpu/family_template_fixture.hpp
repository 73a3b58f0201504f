// A template of a shipped family with a kernel reference (attention_fwd, dual_gemm_silu) on a real
// GPU through the measurement worker, as a tuning job runs it: manifest -> instantiate -> NVRTC
// (variants compiled in parallel, the reference kernel compiled for the device like the daemon
// does) -> kerntune-worker -> the family's reference kernel on fresh random inputs with a
// poisoned output, checked element by element with the manifest's tolerance. Skips without a
// GPU or on an arch the template does not target.
#pragma once

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/gpu_fixture.hpp"
#include "support/shipped_family.hpp"
#include "support/variant_cover.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/variant_space.hpp"

namespace kt::test {

struct FamilyCase {
  std::string dtype;
  Shape shape;
  Config config;
};

class FamilyTemplateOnGpu : public WorkerGpuTest {
 protected:
  FamilyTemplateOnGpu(std::string family, std::string tmpl)
      : family_name_(std::move(family)), tmpl_(std::move(tmpl)) {}

  void SetUp() override {
    WorkerGpuTest::SetUp();
    if (IsSkipped()) return;
    const auto& archs = tmpl().archs;
    if (std::find(archs.begin(), archs.end(), device_.arch) == archs.end())
      GTEST_SKIP() << tmpl_ << " does not target " << device_.arch;
  }

  const Family& family() const { return shipped_family(family_name_); }
  const TemplateSpec& tmpl() const { return template_named(family(), tmpl_); }

  // Up to `count` survivors of the shape that between them cover the most axis values.
  std::vector<Config> configs(const Shape& shape, const std::string& dtype, std::size_t count) {
    std::vector<VariantPlan> cover = covering_set(
        survivors(family(), tmpl_, with_default_dims(family(), shape), dtype, limits_));
    std::vector<Config> out;
    for (const VariantPlan& plan : cover)
      if (out.size() < count) out.push_back(plan.config);
    EXPECT_FALSE(out.empty()) << tmpl_ << " has no survivor on " << canonical_key(shape);
    return out;
  }

  // Compiles every case's variant (and the reference for each dtype) at once, on every core;
  // `options` are added to every variant's NVRTC options (a test's planted fault).
  void compile_all(const std::vector<FamilyCase>& cases,
                   const std::vector<std::string>& options = {}) {
    std::vector<std::pair<std::string, CompileRequest>> jobs;
    for (const std::string& dtype : family().dtypes) {
      CompileRequest request = reference_compile_request(family(), dtype, limits_);
      jobs.emplace_back("reference/" + dtype, request);
    }
    for (const FamilyCase& c : cases) {
      const std::string key = variant_key(c.config, c.dtype);
      if (std::none_of(jobs.begin(), jobs.end(), [&](const auto& j) { return j.first == key; })) {
        CompileRequest request = compile_request(family(), tmpl(), c.config, c.dtype, limits_);
        request.options.insert(request.options.end(), options.begin(), options.end());
        jobs.emplace_back(key, std::move(request));
      }
    }
    std::vector<std::future<std::string>> futures;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      futures.push_back(std::async(std::launch::async, [this, &jobs, i] {
        return write_cubin(jobs[i].second, "k" + std::to_string(i));
      }));
    for (std::size_t i = 0; i < jobs.size(); ++i) cubins_[jobs[i].first] = futures[i].get();
  }

  static std::string variant_key(const Config& c, const std::string& dtype) {
    return canonical_key(c) + "/" + dtype;
  }

  ProblemInstance problem(const Config& c, const Shape& shape, const std::string& dtype) {
    ProblemInstance p =
        instantiate(family(), tmpl(), c, with_default_dims(family(), shape), dtype, limits_);
    p.reference.params["cubin_path"] = cubins_.at("reference/" + dtype);
    return p;
  }

  MeasureRequest request(const FamilyCase& c, bool time) {
    MeasureRequest r;
    r.variant_id = ++requests_;
    r.cubin_path = cubins_.at(variant_key(c.config, c.dtype));
    r.kernel = tmpl().kernel;
    const Shape smoke = smoke_shape_for(family(), with_default_dims(family(), c.shape));
    r.smoke = problem(c.config, smoke, c.dtype);
    r.full = problem(c.config, c.shape, c.dtype);
    r.tolerance = family().tolerance.at(c.dtype);
    r.seed = 900 + static_cast<std::uint64_t>(requests_);
    r.time = time;
    r.timing.min_trials = 10;
    r.timing.max_trials = 100;
    r.timing.max_seconds = 0.3;
    return r;
  }

  std::string describe(const FamilyCase& c) const {
    return tmpl_ + " " + c.dtype + " " + canonical_key(c.config) + " on " + canonical_key(c.shape);
  }

  // Correct against the reference kernel on the shape and the smoke shape.
  void expect_correct(const FamilyCase& c) {
    using namespace std::chrono_literals;
    const MeasureResult r = client_->measure(request(c, false), 60s);
    const std::string where = describe(c);
    EXPECT_EQ(r.status, VariantStatus::measured)
        << where << ": " << r.failed_gate << ": " << r.reason;
    ASSERT_TRUE(r.error.has_value()) << where;
    EXPECT_EQ(r.error->non_finite, 0) << where << ": poison left in the output";
    EXPECT_EQ(r.error->bad_elements, 0)
        << where << ": first bad " << r.error->first_bad_index << " max_abs " << r.error->max_abs;
    EXPECT_LE(r.error->rel_l2, family().tolerance.at(c.dtype).max_rel_l2) << where;
    EXPECT_TRUE(r.error->guard_damage.empty()) << where << ": " << r.error->guard_damage;
    std::printf("[checked] %s: rel_l2 %.2e max_abs %.2e\n", where.c_str(), r.error->rel_l2,
                r.error->max_abs);
    std::fflush(stdout);
  }

  std::string family_name_;
  std::string tmpl_;
  std::map<std::string, std::string> cubins_;
  int requests_ = 0;
};

}  // namespace kt::test
