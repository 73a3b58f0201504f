// The daemon's shape predictors (engine/shape_predictors.hpp) against a real SQLite store: nothing
// is fitted before a tune job of the family finishes, a finished job is fitted within seconds by
// the background thread, and a newer one refits the model with its shape added; a finished
// compile job (a predicted answer's check) refits nothing. A predicted answer's config is the
// first lowest prediction over every feasible config of the shape, remembered while its model is.
#include <algorithm>

#include <gtest/gtest.h>

#include "engine/shape_predictors.hpp"
#include "support/eventually.hpp"
#include "support/shipped_family.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"
#include "tuner/search/launch_facts.hpp"
#include "tuner/search/recorded_space_file.hpp"
#include "tuner/space_index.hpp"

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

// A predicted answer ranks the shape's feasible configs by position (no Config per candidate) and
// drops, as the trees go, those that can no longer come first: it must answer what predicting
// every feasible config as a SearchCandidate and taking the first lowest gives, with its time,
// on one thread or (thousands of candidates) several.
TEST(ShapePredictors, TheBestConfigIsTheFirstLowestPredictionOverEveryFeasibleConfig) {
  test::TempDir dir;
  Store store(dir.path() / "kerntune.db");
  const FamilyRegistry families = test::shipped_families();
  std::vector<RecordedSpace> spaces;
  for (const char* name : {"gemm-bf16-1000x3000x2000-h100-2026-11-27.json",
                           "gemm-bf16-16x4096x7168-h100-2026-11-27.json"})
    spaces.push_back(load_recorded_space(test::source_dir() / "tests/data/spaces" / name));
  DeviceLimits limits = *limits_for_arch("sm_90a");
  limits.sm_count = 132;
  ShapePredictors predictors(store, families, spaces, {limits});
  predictors.refit_all();
  ASSERT_NE(predictors.model("gemm", "bf16"), nullptr);
  const Family& gemm = *families.find("gemm");
  const SpaceIndex index(gemm, "bf16", limits);
  const std::vector<Shape> shapes{{{"M", 4096}, {"N", 4096}, {"K", 4096}},
                                  {{"M", 1}, {"N", 4096}, {"K", 7168}},
                                  {{"M", 777}, {"N", 1531}, {"K", 4099}},
                                  {{"M", 64}, {"N", 64}, {"K", 262144}},
                                  {{"M", 256}, {"N", 7168}, {"K", 2048}}};
  std::size_t most_candidates = 0;  // past 128, best_config ranks on more than one thread
  for (const Shape& shape : shapes) {
    std::vector<SearchCandidate> candidates;
    for (const SpaceIndex::Entry& e : index.feasible(shape, true)) {
      SearchCandidate& c = candidates.emplace_back();
      c.template_name = e.tmpl->name;
      c.config = e.config;
      if (e.launch) {
        const GridFacts facts = grid_facts(*e.launch, limits);
        c.grid_blocks = facts.blocks;
        c.blocks_per_sm = facts.blocks_per_sm;
      }
    }
    ASSERT_GT(candidates.size(), 10u) << canonical_key(shape);
    most_candidates = std::max(most_candidates, candidates.size());
    predictors.predict(gemm, shape, "bf16", candidates);
    std::size_t first_lowest = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i)
      if (*candidates[i].predicted < *candidates[first_lowest].predicted) first_lowest = i;
    const auto best = predictors.best_config(gemm, shape, "bf16", limits);
    ASSERT_TRUE(best.has_value()) << canonical_key(shape);
    EXPECT_EQ(best->candidates, candidates.size());
    EXPECT_EQ(best->template_name, candidates[first_lowest].template_name) << canonical_key(shape);
    EXPECT_EQ(best->config, candidates[first_lowest].config) << canonical_key(shape);
    RecordedSpace one;
    one.family = "gemm";
    one.shape = shape;
    one.dtype = "bf16";
    EXPECT_EQ(best->expected_us, std::exp(*candidates[first_lowest].predicted +
                                          search::ShapePredictor::roofline_offset(gemm, one)))
        << canonical_key(shape);
  }
  EXPECT_GT(most_candidates, 1024u);
  // Asked again, the answer is remembered; once the model is refitted, it comes from the new one.
  const auto first = predictors.best_config(gemm, shapes[0], "bf16", limits);
  const auto again = predictors.best_config(gemm, shapes[0], "bf16", limits);
  ASSERT_TRUE(first && again);
  EXPECT_EQ(again->config, first->config);
  EXPECT_EQ(again->model, first->model);
  predictors.refit_all();
  const auto refitted = predictors.best_config(gemm, shapes[0], "bf16", limits);
  ASSERT_TRUE(refitted.has_value());
  EXPECT_NE(refitted->model, first->model) << "not the answer of a model no longer current";
  EXPECT_EQ(refitted->model, predictors.model("gemm", "bf16"));
}

}  // namespace
}  // namespace kt
