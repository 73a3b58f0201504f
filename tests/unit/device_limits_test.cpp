#include "tuner/device_limits.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(LimitsForArch, HopperAndBlackwellFacts) {
  const auto hopper = limits_for_arch("sm_90a");
  ASSERT_TRUE(hopper.has_value());
  EXPECT_EQ(hopper->arch, "sm_90a");
  EXPECT_EQ(hopper->sm, 90);
  EXPECT_EQ(hopper->smem_optin, 227 * 1024);
  EXPECT_EQ(hopper->max_cluster, 8);
  EXPECT_EQ(hopper->tmem_columns, 0);
  EXPECT_EQ(hopper->sm_count, 132);  // compile-only jobs: a typical part, an H100 SXM

  const auto blackwell = limits_for_arch("sm_100a");
  ASSERT_TRUE(blackwell.has_value());
  EXPECT_EQ(blackwell->sm, 100);
  EXPECT_EQ(blackwell->tmem_columns, 512);
  EXPECT_EQ(blackwell->sm_count, 148);  // a B200

  const auto ampere = limits_for_arch("sm_80");
  ASSERT_TRUE(ampere.has_value());
  EXPECT_EQ(ampere->smem_optin, 163 * 1024);
  EXPECT_EQ(ampere->max_cluster, 1);  // no clusters before Hopper
}

TEST(LimitsForArch, EveryListedTargetIsKnownAndUnknownOnesAreNot) {
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100",
                           "sm_100a", "sm_103a", "sm_120", "sm_120a"}) {
    const auto limits = limits_for_arch(arch);
    ASSERT_TRUE(limits.has_value()) << arch;
    EXPECT_EQ(limits->arch, arch);
    EXPECT_GT(limits->smem_optin, 0) << arch;
    EXPECT_LE(limits->smem_optin, limits->smem_per_sm) << arch;
    // sm_103 (B300) has no part recorded: its compile-only jobs see 0, as every arch once did.
    if (std::string(arch) != "sm_103a") {
      EXPECT_GT(limits->sm_count, 0) << arch << ": no typical part recorded";
    } else {
      EXPECT_EQ(limits->sm_count, 0);
    }
  }
  EXPECT_FALSE(limits_for_arch("sm_999").has_value());
  EXPECT_FALSE(limits_for_arch("").has_value());
  EXPECT_FALSE(limits_for_arch("compute_90").has_value());
}

TEST(ArchForComputeCapability, ArchSpecificTargetsForHopperAndBlackwell) {
  EXPECT_EQ(arch_for_compute_capability(9, 0), "sm_90a");
  EXPECT_EQ(arch_for_compute_capability(10, 0), "sm_100a");
  EXPECT_EQ(arch_for_compute_capability(10, 3), "sm_103a");
  EXPECT_EQ(arch_for_compute_capability(8, 0), "sm_80");
  EXPECT_EQ(arch_for_compute_capability(8, 9), "sm_89");
  EXPECT_EQ(arch_for_compute_capability(12, 0), "sm_120");
}

DeviceInfo h100() {
  DeviceInfo d;
  d.ordinal = 1;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-12345678-abcd";
  d.sm_major = 9;
  d.sm_minor = 0;
  d.arch = "sm_90a";
  d.sm_count = 132;
  d.memory_bytes = 85899345920LL;
  d.l2_bytes = 52428800;
  d.smem_per_block_optin = 232448;
  d.smem_per_sm = 233472;
  d.max_threads_per_block = 1024;
  d.regs_per_block = 65536;
  d.clock_khz = 1980000;
  d.driver_version = 13000;
  d.nvrtc_version = "13.0";
  return d;
}

TEST(LimitsForDevice, MeasuredNumbersOverrideTheTable) {
  DeviceInfo device = h100();
  device.smem_per_block_optin = 200000;  // pretend the probe saw less than the table
  device.sm_count = 114;                 // an H100 PCIe: not the table's typical 132
  device.l2_bytes = 41943040;
  const DeviceLimits limits = limits_for_device(device);
  EXPECT_EQ(limits.arch, "sm_90a");
  EXPECT_EQ(limits.sm, 90);
  EXPECT_EQ(limits.smem_optin, 200000);
  EXPECT_EQ(limits.smem_per_sm, 233472);
  EXPECT_EQ(limits.sm_count, 114);
  EXPECT_EQ(limits.l2_bytes, 41943040);
  EXPECT_EQ(limits.max_cluster, 8);  // from the table
}

TEST(LimitsForDevice, ZeroProbedValuesKeepTheTableAndUnknownArchStillWorks) {
  DeviceInfo device = h100();
  device.smem_per_block_optin = 0;
  device.max_threads_per_block = 0;
  EXPECT_EQ(limits_for_device(device).smem_optin, 227 * 1024);
  EXPECT_EQ(limits_for_device(device).max_threads, 1024);

  DeviceInfo future = h100();
  future.arch = "sm_150";
  future.sm_major = 15;
  const DeviceLimits limits = limits_for_device(future);
  EXPECT_EQ(limits.arch, "sm_150");
  EXPECT_EQ(limits.sm, 150);
  EXPECT_EQ(limits.smem_optin, 232448);
}

TEST(DeviceInfoJson, RoundTripsEveryField) {
  const DeviceInfo original = h100();
  const nlohmann::json j = to_json(original);
  EXPECT_EQ(j.at("name"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j.at("memory_bytes"), 85899345920LL);
  const DeviceInfo back = device_info_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.uuid, original.uuid);
  EXPECT_EQ(back.nvrtc_version, "13.0");
}

TEST(DeviceInfoJson, MissingFieldsTakeDefaults) {
  const DeviceInfo d = device_info_from_json(nlohmann::json::parse(R"({"name":"x"})"));
  EXPECT_EQ(d.name, "x");
  EXPECT_EQ(d.sm_count, 0);
  EXPECT_EQ(d.arch, "");
}

}  // namespace
}  // namespace kt
