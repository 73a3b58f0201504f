// The stream-K decode-shape GEMM template ("skinny_stream_k") on a real sm_90a GPU through the
// worker, against cuBLAS: token tiles of 8..128 (one and several per M), weight tiles of 64..256
// rows over one or two consumer warpgroups, token tiles multicast in clusters of 2, one- and
// two-panel stages, tiles shared by up to SPLIT_K CTAs (summed by the last to arrive) and whole
// tiles (SPLIT_K = 1), fp16; shapes ragged in M (1, 7, 33, 64, 100, 130) and N (not a multiple of
// any tile), K a multiple of 8 (the copy engine's row pitch; the manifest prunes other K) but not
// of the 64-deep k-block. Then the decode shapes timed beside cuBLAS.
#include <string>
#include <vector>

#include "gpu/gemm_template_fixture.hpp"

namespace kt {
namespace {

using test::gemm_shape;

Config config(int bm, int bn, int bk, int stages, int consumers, int split_k, int l2_hint = 1,
              int cluster = 1) {
  return {{"BM", bm},
          {"BN", bn},
          {"BK", bk},
          {"STAGES", stages},
          {"CONSUMERS", consumers},
          {"SPLIT_K", split_k},
          {"L2_HINT", l2_hint},
          {"CLUSTER", cluster}};
}

struct Variant {
  const char* dtype;
  Config config;
};

const std::vector<Variant> kVariants = {
    {"bf16", config(8, 128, 64, 8, 1, 6)},          // M = 1
    {"bf16", config(16, 128, 64, 6, 2, 12)},        // 128-row tiles over two consumers
    {"bf16", config(64, 128, 128, 4, 2, 6)},        // two-panel stages
    {"bf16", config(128, 128, 64, 6, 2, 4)},        // M = 128
    {"bf16", config(16, 128, 64, 4, 1, 1, 0)},      // whole tiles, no partials, no L2 policy
    {"bf16", config(8, 64, 256, 6, 1, 8)},          // four-panel stages
    {"bf16", config(64, 64, 256, 3, 1, 4, 1, 2)},   // token tiles multicast in clusters of 2
    {"fp16", config(128, 128, 64, 4, 2, 6, 1, 2)},  // clusters of 2, 32-row multicast slices
    {"fp16", config(32, 64, 128, 8, 1, 16)},        // many pieces per tile
};

const std::vector<Shape> kShapes = {gemm_shape(1, 4096, 7168),  gemm_shape(7, 1000, 1000),
                                    gemm_shape(33, 4100, 4096), gemm_shape(64, 333, 7168),
                                    gemm_shape(100, 4097, 72),  gemm_shape(130, 1000, 512),
                                    gemm_shape(1, 1, 8),        gemm_shape(67, 45, 200)};

class SkinnyStreamKOnGpu : public test::GemmTemplateOnGpu {
 protected:
  SkinnyStreamKOnGpu() : GemmTemplateOnGpu("skinny_stream_k") {}
};

TEST_F(SkinnyStreamKOnGpu, EveryTileShapeIsRightOnRaggedShapes) {
  for (const Variant& v : kVariants)
    for (const Shape& s : kShapes)
      if (!expect_correct(v.config, v.dtype, s)) break;  // hung or crashed: next variant
  EXPECT_EQ(client_->starts(), 1) << "no variant lost the worker's context";
}

TEST_F(SkinnyStreamKOnGpu, DecodeShapesAgainstCublas) {
  const double one = ratio_to_cublas(config(8, 64, 256, 4, 1, 4, 0), gemm_shape(1, 4096, 7168));
  const double sixty_four =
      ratio_to_cublas(config(64, 64, 128, 4, 1, 4, 1, 2), gemm_shape(64, 4096, 7168));
  const double one_twenty_eight =
      ratio_to_cublas(config(128, 64, 128, 4, 1, 4, 1, 2), gemm_shape(128, 4096, 7168));
  // Loose: far slower than cuBLAS means a broken pipeline.
  EXPECT_GT(one, 0.8);
  EXPECT_GT(sixty_four, 0.5);
  EXPECT_GT(one_twenty_eight, 0.4);
}

}  // namespace
}  // namespace kt
