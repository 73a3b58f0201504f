// What makes a stored result stale (engine/result_keys.cpp).
#include "engine/result_keys.hpp"

#include <gtest/gtest.h>

#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

TEST(ResultKeys, EveryRecordedKeyThatDiffersIsChangedAndUnknownOnesAreNotCompared) {
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

TEST(ResultKeys, TheDaemonsKeysComeFromItsGpuOfTheModelItsNvrtcAndTheFamily) {
  DeviceInfo h100;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.driver_version = 13000;
  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  h200.driver_version = 12090;
  Family family;
  family.source_hash = "feed";
  const ResultKeys keys = current_keys("NVIDIA H200", {h100, h200}, &family);
  EXPECT_EQ(keys.driver_version, 12090);
  EXPECT_EQ(keys.nvrtc_version, nvrtc_version());
  EXPECT_EQ(keys.family_hash, "feed");
  EXPECT_EQ(current_keys("NVIDIA B200", {h100, h200}, nullptr).driver_version, 0);
  EXPECT_EQ(current_keys("NVIDIA B200", {h100, h200}, nullptr).family_hash, "");

  JobRecord job;
  job.device_name = "NVIDIA H200";
  job.driver_version = 12080;
  job.nvrtc_version = keys.nvrtc_version;
  job.family_hash = "feed";
  const auto changed = changed_keys(stored_keys(job), keys);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].key, "driver_version");
}

}  // namespace
}  // namespace kt
