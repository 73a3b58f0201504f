#include "bench/result_names.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>

namespace kt::bench {
namespace {

TEST(ResultNames, DeviceTagKeepsTheModel) {
  EXPECT_EQ(device_tag("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(device_tag("NVIDIA H200"), "h200");
  EXPECT_EQ(device_tag("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(device_tag("NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(device_tag(""), "gpu");
  EXPECT_EQ(device_tag("NVIDIA"), "gpu");
}

TEST(ResultNames, FolderNameAndDate) {
  EXPECT_EQ(results_folder_name("2026-11-23", "NVIDIA H100 80GB HBM3", "gemm"),
            "2026-11-23-h100-gemm");
  EXPECT_TRUE(std::regex_match(utc_date(), std::regex(R"(20\d\d-\d\d-\d\d)")));
}

TEST(ResultNames, ShapeLabelsRoundTrip) {
  const GemmShape shape = parse_shape_label("64x4096x7168");
  EXPECT_EQ(shape, (GemmShape{64, 4096, 7168, -1}));
  EXPECT_EQ(shape_label(shape), "64x4096x7168");
  EXPECT_EQ(parse_shape_label("8192x8192x8192:8").budget, 8);
  EXPECT_EQ(parse_shape_label("1x4096x7168:0").budget, 0);
  for (const char* bad : {"", "64x4096", "64x4096x7168x1", "0x1x1", "-1x2x3", "ax1x1",
                          "1x1x1:", "1x1x1:-2", "1x1x1:b", "1 x1x1"})
    EXPECT_THROW(parse_shape_label(bad), std::invalid_argument) << bad;
}

TEST(ResultNames, SquareSetShapes) {
  const auto shapes = square_set_shapes();
  ASSERT_EQ(shapes.size(), 9u);
  EXPECT_EQ(shape_label(shapes.front()), "8192x8192x8192");
  EXPECT_EQ(shape_label(shapes[3]), "1x4096x7168");
  EXPECT_EQ(shape_label(shapes[6]), "128x4096x7168");
  EXPECT_EQ(shape_label(shapes.back()), "512x4096x1536");
}

}  // namespace
}  // namespace kt::bench
