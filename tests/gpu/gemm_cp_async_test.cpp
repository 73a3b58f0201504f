// The cp.async wgmma GEMM template ("wgmma_cp_async") on a real sm_90a GPU through the worker,
// against cuBLAS: every copy width on a K that needs it (16-byte cp.async, 8- and 4-byte
// cp.async.ca, realigned loads for odd K), A or B on the m side (SWAP), narrow n tiles of 16..96,
// cluster split-K with empty slices (K shorter than the split), one and two warpgroups, fp16;
// shapes ragged in M, N and K, down to 1x7x1. Then the small-N and odd-K shapes timed
// beside cuBLAS.
#include <string>
#include <vector>

#include "gpu/gemm_template_fixture.hpp"

namespace kt {
namespace {

using test::gemm_shape;

Config config(int bm, int bn, int swap, int warpgroups, int stages, int split_k, int vec) {
  return {{"BM", bm},         {"BN", bn},           {"SWAP", swap}, {"WARPGROUPS", warpgroups},
          {"STAGES", stages}, {"SPLIT_K", split_k}, {"VEC", vec}};
}

struct Variant {
  const char* dtype;
  Config config;
};

const std::vector<Variant> kVariants = {
    {"bf16", config(16, 128, 1, 1, 4, 4, 2)},   // decode, odd K
    {"bf16", config(16, 64, 1, 1, 6, 2, 4)},    // 4-byte copies
    {"bf16", config(128, 96, 0, 2, 4, 2, 16)},  // small N, 16-byte cp.async
    {"bf16", config(64, 48, 0, 1, 3, 3, 8)},    // 8-byte copies, n = 48
    {"bf16", config(128, 128, 0, 2, 4, 1, 2)},  // large odd-K tile
    {"fp16", config(32, 256, 1, 2, 3, 8, 2)},   // 256-row m side over two warpgroups
    {"fp16", config(256, 16, 0, 1, 6, 1, 16)},  // n = 16, four m64 blocks per warpgroup
};

// K % 8 == 0, 4, 2 and odd; K = 1 and K shorter than SPLIT_K k-tiles (empty slices).
const std::vector<Shape> kShapes = {
    gemm_shape(16, 4096, 4097), gemm_shape(1, 1000, 4097),  gemm_shape(257, 193, 1002),
    gemm_shape(1000, 96, 4100), gemm_shape(3000, 200, 130), gemm_shape(33, 5000, 63),
    gemm_shape(1, 7, 1),        gemm_shape(67, 45, 200),    gemm_shape(700, 61, 1000)};

class CpAsyncOnGpu : public test::GemmTemplateOnGpu {
 protected:
  CpAsyncOnGpu() : GemmTemplateOnGpu("wgmma_cp_async") {}
};

TEST_F(CpAsyncOnGpu, EveryCopyWidthAndOrientationIsRightOnRaggedShapes) {
  for (const Variant& v : kVariants) {
    const std::int64_t elems_per_copy = v.config.at("VEC") / 2;
    for (const Shape& s : kShapes)
      if (s.at("K") % elems_per_copy == 0 && !expect_correct(v.config, v.dtype, s))
        break;  // hung or crashed: next variant
  }
  EXPECT_EQ(client_->starts(), 1) << "no variant lost the worker's context";
}

TEST_F(CpAsyncOnGpu, SmallNAndOddKAgainstCublas) {
  const double small_n =
      std::max(ratio_to_cublas(config(128, 96, 0, 2, 4, 4, 16), gemm_shape(4096, 96, 4096)),
               ratio_to_cublas(config(64, 96, 0, 1, 6, 2, 16), gemm_shape(4096, 96, 4096)));
  const double odd_k =
      std::max(ratio_to_cublas(config(16, 128, 1, 1, 4, 4, 2), gemm_shape(16, 4096, 4097)),
               ratio_to_cublas(config(16, 64, 1, 1, 6, 2, 2), gemm_shape(16, 4096, 4097)));
  // Loose: far slower than cuBLAS means a broken pipeline.
  EXPECT_GT(small_n, 0.5);
  EXPECT_GT(odd_k, 0.5);
}

}  // namespace
}  // namespace kt
