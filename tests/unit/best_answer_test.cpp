// GET /v1/best's typed answer (engine/best_answer.cpp) read from a real SQLite store file: which
// candidate answers and why, the baseline's figures, the nearest shape on a miss, staleness.
#include "engine/best_answer.hpp"

#include <gtest/gtest.h>

#include "support/baseline_fixtures.hpp"
#include "support/shipped_family.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

class BestAnswerTest : public ::testing::Test {
 protected:
  BestAnswerTest() : store_(dir_.path() / "kerntune.db"), families_(test::shipped_families()) {}

  ProblemQuery problem(const Shape& shape, const std::string& device = "") const {
    ProblemQuery query;
    query.family = families_.find("gemm");
    query.dtype = "bf16";
    query.shape = shape;
    query.shape_key = canonical_key(shape);
    query.device_name = device;
    return query;
  }
  std::optional<BestAnswer> answer(const Shape& shape, bool nearest = false) {
    return best_answer(store_, problem(shape), nearest, {families_, devices_, devices_});
  }

  test::TempDir dir_;
  Store store_;
  FamilyRegistry families_;
  std::vector<DeviceInfo> devices_;  // no GPU on this host
};

const Shape kShape{{"M", 128}, {"N", 4096}, {"K", 7168}};

TEST_F(BestAnswerTest, NothingTunedHasNoAnswer) {
  EXPECT_FALSE(answer(kShape));
  EXPECT_FALSE(answer(kShape, /*nearest=*/true));
}

TEST_F(BestAnswerTest, OursAnswersWhenShownFasterInTheFinalComparison) {
  const auto seeded = test::seed_compared_job(store_, kShape, 25.0, 25.1, 26.6, {1.06, 1.04, 1.08});
  const auto got = answer(kShape);
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->baseline_is_answer());
  EXPECT_FALSE(got->verdict.baseline_wins);
  EXPECT_EQ(got->verdict.basis, "final_comparison");
  ASSERT_TRUE(got->own);
  EXPECT_EQ(got->own->variant.id, seeded.variant_id);
  ASSERT_TRUE(got->own->final);
  EXPECT_DOUBLE_EQ(got->own->final->timing.median_us, 25.1);
  EXPECT_EQ(got->own->final->faster_than_baseline, true);
  EXPECT_EQ(got->job.id, seeded.job_id);
  EXPECT_FALSE(got->nearest);
  EXPECT_EQ(got->reference_kind, families_.find("gemm")->reference.kind);
  // The store records the job's keys, none of which this daemon contradicts.
  EXPECT_EQ(got->staleness.stored.gpu_model, "NVIDIA H100 80GB HBM3");
}

TEST_F(BestAnswerTest, TheBaselineAnswersWhenOursIsNotShownFasterWithRatesFromOurs) {
  test::seed_compared_job(store_, kShape, 30.2, 30.5, 26.6, {0.872, 0.868, 0.875});
  const auto got = answer(kShape);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->baseline_is_answer());
  EXPECT_TRUE(got->verdict.baseline_wins);
  EXPECT_EQ(got->baseline.kind, "cublaslt_gemm");
  EXPECT_EQ(
      got->baseline.config,
      (Config{{"algorithm_index", 3}, {"id", 66}, {"split_k", 1}, {"stages", 35}, {"tile", 24}}));
  ASSERT_TRUE(got->baseline.median_us);
  EXPECT_DOUBLE_EQ(*got->baseline.median_us, 26.6);
  ASSERT_TRUE(got->baseline.tflops);
  EXPECT_NEAR(*got->baseline.tflops, 500 * 30.2 / 26.6, 1e-9);
  ASSERT_TRUE(got->own);  // ours stands beside it
}

TEST_F(BestAnswerTest, ABaselineTimedAloneAnswersWithoutAVariantOfOurs) {
  const Shape unaligned{{"M", 16}, {"N", 4096}, {"K", 4097}};
  const std::int64_t job = test::seed_baseline_only_job(store_, unaligned, 27.3);
  const auto got = answer(unaligned);
  ASSERT_TRUE(got);
  EXPECT_FALSE(got->own);
  EXPECT_TRUE(got->baseline_is_answer());
  EXPECT_EQ(got->verdict.basis, "no_variant");
  EXPECT_EQ(got->job.id, job);
  EXPECT_FALSE(got->baseline.tflops);
  EXPECT_FALSE(got->launch);
  EXPECT_FALSE(got->baseline_failed);
}

TEST_F(BestAnswerTest, AMissAnswersWithTheNearestTunedShapeOnlyWhenAsked) {
  test::seed_compared_job(store_, kShape, 25.0, 25.1, 26.6, {1.06, 1.04, 1.08});
  const Shape asked{{"M", 256}, {"N", 4096}, {"K", 7168}};
  EXPECT_FALSE(answer(asked));
  const auto got = answer(asked, /*nearest=*/true);
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->nearest);
  EXPECT_EQ(got->nearest->shape_key, canonical_key(kShape));
  EXPECT_EQ(got->nearest->asked_shape_key, canonical_key(asked));
  EXPECT_GT(got->nearest->distance, 0);
}

}  // namespace
}  // namespace kt
