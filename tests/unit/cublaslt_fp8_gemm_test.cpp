// B's 128x128 block scales in the layout cuBLAS's BLK128x128_32F reads (pure host code; the
// baseline itself needs a Hopper GPU).
#include <gtest/gtest.h>

#include <stdexcept>

#include "worker/cublaslt_fp8_gemm.hpp"

namespace kt {
namespace {

TEST(Blk128x128Scales, PadsEveryRowOfBlockScalesToAMultipleOfFourFloats) {
  // 2 blocks along N, 3 along K: rows 4 floats apart, the fourth zero.
  EXPECT_EQ(blk128x128_scales({1, 2, 3, 4, 5, 6}, 2, 3),
            (std::vector<float>{1, 2, 3, 0, 4, 5, 6, 0}));
  // 5 along K: rows 8 floats apart.
  EXPECT_EQ(blk128x128_scales({1, 2, 3, 4, 5}, 1, 5), (std::vector<float>{1, 2, 3, 4, 5, 0, 0, 0}));
}

TEST(Blk128x128Scales, KeepsRowsThatAreAMultipleOfFourAndIgnoresTheBuffersTail) {
  EXPECT_EQ(blk128x128_scales({1, 2, 3, 4, 5, 6, 7, 8, 9}, 2, 4),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Blk128x128Scales, RefusesFewerScalesThanBlocks) {
  EXPECT_THROW(blk128x128_scales({1, 2, 3}, 2, 2), std::invalid_argument);
}

}  // namespace
}  // namespace kt
