// The nearest tuned shapes and a new job's warm start from them (engine/warm_start.cpp), on both
// store backends.
#include "engine/warm_start.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class WarmStartTest : public StoreBackendFixture {
 protected:
  // A tune job of the shape whose variants BM = 1..times.size() measured at those times.
  std::int64_t tuned(Store& store, const Shape& shape, const std::vector<double>& times,
                     const std::string& device = "NVIDIA H100 80GB HBM3",
                     const std::string& family = "gemm") {
    NewJob job = tune_job(device, family);
    job.shape = shape;
    const auto id = store.create_job(job);
    const auto rows = plan(store, id, static_cast<int>(times.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      store.record_compile(rows[i].id, compiled(64, 0), 128, 1024);
      store.record_outcome(rows[i].id, measured(times[i], 0.001));
    }
    return id;
  }
};

const Shape kCube{{"M", 4096}, {"N", 4096}, {"K", 4096}};
const Shape kSkinny{{"M", 64}, {"N", 4096}, {"K", 7168}};
const Shape kDecode{{"M", 1}, {"N", 4096}, {"K", 7168}};
const Shape kAsked{{"M", 128}, {"N", 4096}, {"K", 7168}};

TEST_P(WarmStartTest, NearestTunedShapesAreOfTheSameFamilyDtypeAndModelNearestFirst) {
  Store store(db_path());
  tuned(store, kCube, {10});
  tuned(store, kSkinny, {10});
  tuned(store, kDecode, {10});
  tuned(store, kAsked, {10}, "NVIDIA H200");  // another model: another problem
  tuned(store, {{"M", 128}, {"N", 4096}, {"K", 4096}}, {10}, "NVIDIA H100 80GB HBM3",
        "dual_gemm_silu");  // another family

  const std::string h100 = "NVIDIA H100 80GB HBM3";
  const auto near = nearest_tuned_shapes(store, "gemm", "bf16", kAsked, h100, 5);
  ASSERT_EQ(near.size(), 3u);
  EXPECT_EQ(near[0].shape_key, canonical_key(kSkinny));
  EXPECT_NEAR(near[0].distance, std::log(2.0), 1e-12);
  EXPECT_EQ(near[0].shape, kSkinny);
  EXPECT_EQ(near[1].shape_key, canonical_key(kCube));  // log 32 + log(7168/4096) < log 128
  EXPECT_EQ(near[2].shape_key, canonical_key(kDecode));
  EXPECT_EQ(nearest_tuned_shapes(store, "gemm", "bf16", kAsked, h100, 1).size(), 1u);
  EXPECT_TRUE(nearest_tuned_shapes(store, "gemm", "fp16", kAsked, h100, 5).empty());
  // Any model: the H200's result is of the asked shape itself, which is never its own neighbour.
  EXPECT_EQ(nearest_tuned_shapes(store, "gemm", "bf16", kAsked, "", 5).size(), 3u);
  EXPECT_EQ(nearest_tuned_shapes(store, "gemm", "bf16", kAsked, "NVIDIA H200", 5).size(), 0u);
}

TEST_P(WarmStartTest, SeedsAreTheFastestConfigsOfTheTwoNearestShapesWithoutRepeats) {
  Store store(db_path());
  const auto skinny = tuned(store, kSkinny, {30, 10, 20, 40, 50, 5});  // BM 6, 2, 3, 1 fastest
  const auto cube = tuned(store, kCube, {1, 2, 3});                    // BM 1, 2, 3
  tuned(store, kDecode, {1});                                          // third nearest: not used
  const auto warm = find_warm_start(store, "gemm", "bf16", kAsked, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(warm);
  ASSERT_EQ(warm->from.size(), 2u);
  EXPECT_EQ(warm->from[0].shape_key, canonical_key(kSkinny));
  EXPECT_EQ(warm->from[0].job_id, skinny);
  EXPECT_EQ(warm->from[1].job_id, cube);
  std::vector<std::int64_t> bms;
  for (const WarmStartSeed& seed : warm->seeds) bms.push_back(seed.config.at("BM"));
  // Up to kSeedCandidatesPerShape (16) of the nearest, fastest first (the job keeps the first 4
  // that survive its constraints); the cube's repeat BM 1..3 and add nothing.
  EXPECT_EQ(bms, (std::vector<std::int64_t>{6, 2, 3, 1, 4, 5}));
  EXPECT_EQ(warm->seeds[0].shape_key, canonical_key(kSkinny));
  EXPECT_DOUBLE_EQ(warm->seeds[0].median_us, 5);

  // Stored as text and read back unchanged.
  const WarmStart again = warm_start_from_text(to_json(*warm).dump());
  ASSERT_EQ(again.seeds.size(), warm->seeds.size());
  EXPECT_EQ(again.seeds[5].config, warm->seeds[5].config);
  EXPECT_EQ(again.from[1].shape_key, canonical_key(kCube));
  EXPECT_THROW(warm_start_from_text("{\"from\":3}"), std::runtime_error);

  EXPECT_FALSE(find_warm_start(store, "gemm", "bf16", kAsked, "NVIDIA H200"));
}

INSTANTIATE_TEST_SUITE_P(Backends, WarmStartTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
