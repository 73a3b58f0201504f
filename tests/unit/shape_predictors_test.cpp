// The daemon's shape predictors (engine/shape_predictors.hpp) against a real SQLite store: nothing
// is fitted before a tune job of the family finishes, a finished job is fitted within seconds by
// the background thread, and a newer one refits the model with its shape added; a finished
// compile job (a predicted answer's check) refits nothing.
#include <gtest/gtest.h>

#include "engine/shape_predictors.hpp"
#include "support/eventually.hpp"
#include "support/shipped_family.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

std::int64_t finished_job(Store& store, const Shape& shape, double fastest_us,
                          JobMode mode = JobMode::tune) {
  NewJob job = test::tune_job();
  job.shape = shape;
  job.mode = mode;
  const std::int64_t id = store.create_job(job);
  const auto rows = test::plan(store, id, 4);
  for (std::size_t i = 0; i < rows.size(); ++i)
    store.record_outcome(rows[i].id, test::measured(fastest_us * (1.0 + 0.1 * i), 0.001));
  store.set_job_status(id, JobStatus::done);
  return id;
}

TEST(ShapePredictors, AFinishedJobIsFittedInTheBackgroundAndANewerOneRefitsTheModel) {
  test::TempDir dir;
  Store store(dir.path() / "kerntune.db");
  const FamilyRegistry families = test::shipped_families();
  ShapePredictors predictors(store, families);
  predictors.start(50ms);
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(predictors.model("gemm", "bf16"), nullptr) << "nothing measured yet";

  const std::int64_t first = finished_job(store, test::kShape, 100);
  ASSERT_TRUE(test::eventually(
      [&] {
        const auto m = predictors.model("gemm", "bf16");
        return m && m->newest_job == first;
      },
      30s));
  EXPECT_EQ(predictors.model("gemm", "bf16")->shapes, 1u);
  EXPECT_EQ(predictors.model("gemm", "bf16")->variants, 4u);
  EXPECT_EQ(predictors.model("gemm", "fp16"), nullptr) << "a model per dtype";

  const std::int64_t second = finished_job(store, {{"M", 2048}, {"N", 2048}, {"K", 2048}}, 20);
  ASSERT_TRUE(test::eventually(
      [&] {
        const auto m = predictors.model("gemm", "bf16");
        return m && m->newest_job == second;
      },
      30s));
  const auto model = predictors.model("gemm", "bf16");
  EXPECT_EQ(model->shapes, 2u);
  EXPECT_EQ(model->variants, 8u);
  EXPECT_LE(model->residual_low, model->residual_high);
  EXPECT_TRUE(ShapePredictors::measured_before(*model, "gemm_mma",
                                               {{"BM", 1}, {"BN", 128}, {"STAGES", 3}}));

  // Compile jobs are not fitted on, so finishing one is no reason to refit (each predicted
  // answer's check is one: refitting on them kept the thread busy while answers were served).
  const std::size_t fits = predictors.fits();
  finished_job(store, {{"M", 512}, {"N", 512}, {"K", 512}}, 10, JobMode::compile);
  std::this_thread::sleep_for(500ms);  // ten polls
  EXPECT_EQ(predictors.fits(), fits);
  EXPECT_EQ(predictors.model("gemm", "bf16")->newest_job, second);
  EXPECT_EQ(predictors.model("gemm", "bf16")->shapes, 2u);
}

}  // namespace
}  // namespace kt
