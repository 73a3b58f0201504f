// What makes a stored result stale: the keys a job recorded and the one comparison the store and
// the engine share (db/job_keys.cpp).
#include "db/job_keys.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(JobKeys, EveryRecordedKeyThatDiffersIsChangedAndUnknownOnesAreNotCompared) {
  const ResultKeys stored{"NVIDIA H100 80GB HBM3", 12080, "12.8", "abc"};
  EXPECT_TRUE(changed_keys(stored, stored).empty());

  ResultKeys current = stored;
  current.driver_version = 13000;
  current.family_hash = "def";
  const auto changed = changed_keys(stored, current);
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].key, "driver_version");
  EXPECT_EQ(changed[0].stored, "12080");
  EXPECT_EQ(changed[0].current, "13000");
  EXPECT_EQ(changed[1].key, "family_hash");

  current = stored;
  current.nvrtc_version = "13.0";
  ASSERT_EQ(changed_keys(stored, current).size(), 1u);
  EXPECT_EQ(changed_keys(stored, current)[0].key, "nvrtc_version");

  // A result older than the keys, or a host without a GPU of the model: nothing to compare.
  EXPECT_TRUE(changed_keys(ResultKeys{"NVIDIA H100 80GB HBM3", 0, "", ""}, current).empty());
  ResultKeys no_gpu = stored;
  no_gpu.driver_version = 0;
  EXPECT_TRUE(changed_keys(stored, no_gpu).empty());
}

TEST(JobKeys, AJobsStoredKeysAreItsRecordedOnes) {
  JobRecord job;
  job.device_name = "NVIDIA H200";
  job.driver_version = 12080;
  job.nvrtc_version = "12.8";
  job.family_hash = "feed";
  const ResultKeys keys = stored_keys(job);
  EXPECT_EQ(keys.gpu_model, "NVIDIA H200");
  EXPECT_EQ(keys.driver_version, 12080);
  EXPECT_EQ(keys.nvrtc_version, "12.8");
  EXPECT_EQ(keys.family_hash, "feed");
  // Another GPU model is another problem, not a changed key.
  ResultKeys other_model = keys;
  other_model.gpu_model = "NVIDIA H100 80GB HBM3";
  EXPECT_TRUE(changed_keys(keys, other_model).empty());
}

}  // namespace
}  // namespace kt
