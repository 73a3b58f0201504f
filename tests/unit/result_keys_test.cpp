// The daemon's side of what makes a stored result stale (engine/result_keys.cpp).
#include "engine/result_keys.hpp"

#include <gtest/gtest.h>

#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

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
