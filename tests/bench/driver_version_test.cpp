#include "bench/driver_version.hpp"

#include <gtest/gtest.h>

namespace kt::bench {
namespace {

TEST(DriverVersion, ParsesTheKernelModuleLine) {
  EXPECT_EQ(parse_nvidia_version_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  "
                                      "580.159.04  Thu Oct 30 12:00:00 UTC 2025"),
            "580.159.04");
  EXPECT_EQ(parse_nvidia_version_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                      "570.86.15  Release Build  (dvs-builder@U16)"),
            "570.86.15");
  EXPECT_EQ(parse_nvidia_version_text("nothing here 1.2.3"), "");
  EXPECT_EQ(parse_nvidia_version_text(""), "");
}

TEST(DriverVersion, CudaVersionText) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
}

}  // namespace
}  // namespace kt::bench
