// The attention_fwd family on a real GPU through the measurement worker: both templates
// (mma_flash2, wgmma_flash3), bf16 and fp16, D 64 and 128, causal and not, on ragged sequence
// lengths (S not a multiple of any tile; the family's smoke shape S = 67 runs first), each variant
// checked element by element against the family's reference kernel (compiled with NVRTC for the
// device, as the daemon does). A planted wrong variant (the non-causal kernel on a causal
// problem) comes back wrong_result; the reference kernel alone is what a job times for its
// watchdog (the family's baseline, PyTorch SDPA, is external). Skipped without a device.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/family_template_fixture.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

Shape attention_shape(int b, int h, int s, int d, int causal) {
  return {{"B", b}, {"H", h}, {"S", s}, {"D", d}, {"CAUSAL", causal}};
}

class AttentionMmaFlash2 : public test::FamilyTemplateOnGpu {
 protected:
  AttentionMmaFlash2() : FamilyTemplateOnGpu("attention_fwd", "mma_flash2") {}
};

class AttentionWgmmaFlash3 : public test::FamilyTemplateOnGpu {
 protected:
  AttentionWgmmaFlash3() : FamilyTemplateOnGpu("attention_fwd", "wgmma_flash3") {}
};

using ConfigPicker =
    std::function<std::vector<Config>(const Shape&, const std::string&, std::size_t)>;

// Every (dtype, D, causal) on a ragged S, a few configs each: the ones covering most axis values.
std::vector<test::FamilyCase> cases_for(std::size_t configs_per_shape, const ConfigPicker& pick) {
  std::vector<test::FamilyCase> cases;
  for (const std::string dtype : {"bf16", "fp16"})
    for (int d : {64, 128})
      for (int causal : {0, 1}) {
        // Ragged: 333 and 200 are multiples of no tile; B*H = 6 and 3 heads.
        const Shape shape =
            d == 64 ? attention_shape(2, 3, 333, d, causal) : attention_shape(1, 3, 200, d, causal);
        for (const Config& c : pick(shape, dtype, configs_per_shape))
          cases.push_back({dtype, shape, c});
      }
  return cases;
}

TEST_F(AttentionMmaFlash2, CorrectOnRaggedShapesBothDtypesCausalAndNot) {
  const auto cases = cases_for(3, [this](const Shape& s, const std::string& dt, std::size_t n) {
    return configs(s, dt, n);
  });
  ASSERT_GE(cases.size(), 16u);
  compile_all(cases);
  for (const auto& c : cases) expect_correct(c);
}

TEST_F(AttentionWgmmaFlash3, CorrectOnRaggedShapesBothDtypesCausalAndNot) {
  const auto cases = cases_for(3, [this](const Shape& s, const std::string& dt, std::size_t n) {
    return configs(s, dt, n);
  });
  ASSERT_GE(cases.size(), 16u);
  compile_all(cases);
  for (const auto& c : cases) expect_correct(c);
}

TEST_F(AttentionMmaFlash2, LongerRaggedSequenceAgainstTheReference) {
  // S = 1000 spans many key blocks (the cp.async ring wraps several times) and ends ragged.
  const Shape shape = attention_shape(1, 2, 1000, 128, 1);
  std::vector<test::FamilyCase> cases;
  for (const Config& c : configs(shape, "bf16", 2)) cases.push_back({"bf16", shape, c});
  compile_all(cases);
  for (const auto& c : cases) expect_correct(c);
}

TEST_F(AttentionMmaFlash2, PlantedWrongVariantIsWrongResult) {
  // The non-causal kernel of a valid config, run on a causal problem: every row but the last
  // attends to keys it must not see.
  const Shape causal = attention_shape(1, 2, 130, 64, 1);
  const Shape plain = attention_shape(1, 2, 130, 64, 0);
  const std::vector<Config> found = configs(plain, "bf16", 1);
  ASSERT_FALSE(found.empty());
  test::FamilyCase planted{"bf16", causal, found.front()};
  compile_all({planted});
  const MeasureResult r = client_->measure(request(planted, false), 60s);
  EXPECT_EQ(r.status, VariantStatus::wrong_result) << r.failed_gate << ": " << r.reason;
  ASSERT_TRUE(r.error.has_value());
  EXPECT_GT(r.error->bad_elements, 0);
  EXPECT_EQ(r.error->non_finite, 0) << "it wrote every element, just the wrong ones";
}

TEST_F(AttentionMmaFlash2, ReferenceKernelIsTimedForTheWatchdogNotAsABaseline) {
  const Shape shape = attention_shape(1, 4, 512, 64, 0);
  const std::vector<Config> found = configs(shape, "fp16", 1);
  ASSERT_FALSE(found.empty());
  compile_all({{"fp16", shape, found.front()}});
  BaselineTimingRequest r;
  r.problem = problem(found.front(), shape, "fp16");
  ASSERT_FALSE(r.problem.baseline.has_value()) << "the family's baseline (SDPA) is external";
  r.timing.max_seconds = 0.3;
  r.tolerance = family().tolerance.at("fp16");  // nothing to check: the reference writes fp32
  std::string reason;
  const auto answer = client_->time_baseline(r, 60s, &reason);
  ASSERT_TRUE(answer) << reason;
  EXPECT_EQ(answer->baseline.value("kind", ""), "reference_kernel") << answer->baseline.dump();
  EXPECT_GT(answer->timing.median_us, 1.0);
  EXPECT_FALSE(answer->error.has_value());
}

}  // namespace
}  // namespace kt
