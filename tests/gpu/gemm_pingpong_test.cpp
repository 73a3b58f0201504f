// The ping-pong wgmma GEMM template ("wgmma_pingpong") on a real sm_90a GPU through the worker,
// against cuBLAS: both epilogues (TMA store, and its fallback on a ragged N), stream-K with tiles
// split over two and more CTAs, 2-CTA clusters with multicast of A and of B (also where the
// cluster sticks out of the tile grid), both tile shapes, fp16; shapes ragged in M, N and K
// (K % 64 != 0; K % 8 == 0 as TMA needs). Then the large squares timed beside cuBLAS.
#include <string>
#include <vector>

#include "gpu/gemm_template_fixture.hpp"

namespace kt {
namespace {

using test::gemm_shape;

Config config(int bm, int bn, int stages, int cluster_m, int cluster_n, int raster, int group,
              int epilogue, int split_k) {
  return {{"BM", bm},
          {"BN", bn},
          {"BK", 64},
          {"STAGES", stages},
          {"CLUSTER_M", cluster_m},
          {"CLUSTER_N", cluster_n},
          {"RASTER", raster},
          {"GROUP", group},
          {"EPILOGUE", epilogue},
          {"SPLIT_K", split_k}};
}

struct Variant {
  const char* dtype;
  Config config;
};

// Every value of every axis at least once.
const std::vector<Variant> kVariants = {
    {"bf16", config(128, 128, 5, 1, 1, 0, 8, 1, 1)},   // TMA store, data-parallel
    {"bf16", config(128, 128, 4, 1, 1, 1, 16, 1, 2)},  // TMA store, stream-K
    {"bf16", config(64, 256, 4, 2, 1, 0, 8, 0, 1)},    // B multicast, register stores
    {"bf16", config(128, 128, 6, 1, 2, 1, 8, 0, 1)},   // A multicast
    {"fp16", config(64, 256, 3, 1, 1, 0, 16, 1, 2)},   // stream-K, 64x256, fp16
    {"bf16", config(64, 176, 6, 1, 1, 0, 8, 0, 1)},    // 176: a trailing half strip
    {"bf16", config(64, 176, 5, 1, 1, 1, 8, 0, 2)},    // 176, stream-K
    {"fp16", config(64, 192, 5, 2, 1, 0, 8, 1, 1)},    // 192, TMA store, B multicast
};

// Ragged in every dimension; several exceed 132 tiles so that stream-K splits a partial wave
// (1500x2000x200: 4 k-tiles per tile over ~6 per CTA, tiles across three CTAs).
const std::vector<Shape> kShapes = {gemm_shape(2000, 3000, 1040), gemm_shape(1500, 2000, 200),
                                    gemm_shape(777, 4001, 520),   gemm_shape(1000, 1000, 1000),
                                    gemm_shape(1, 1000, 264),     gemm_shape(129, 4000, 72),
                                    gemm_shape(3000, 200, 4104)};

class PingpongOnGpu : public test::GemmTemplateOnGpu {
 protected:
  PingpongOnGpu() : GemmTemplateOnGpu("wgmma_pingpong") {}
};

TEST_F(PingpongOnGpu, EveryFeatureIsRightOnRaggedShapes) {
  for (const Variant& v : kVariants)
    for (const Shape& s : kShapes)
      if (!expect_correct(v.config, v.dtype, s)) break;  // hung or crashed: next variant
  EXPECT_EQ(client_->starts(), 1) << "no variant lost the worker's context";
}

TEST_F(PingpongOnGpu, LargeSquaresAgainstCublas) {
  const Shape square4k = gemm_shape(4096, 4096, 4096), square8k = gemm_shape(8192, 8192, 8192);
  for (const Shape& s : {square4k, square8k}) {
    double best = 0;
    for (const Config& c :
         {config(128, 128, 5, 1, 1, 0, 8, 1, 1), config(128, 128, 5, 1, 1, 0, 8, 1, 2),
          config(128, 128, 5, 2, 1, 0, 16, 1, 1), config(64, 256, 4, 1, 1, 0, 8, 1, 2)})
      best = std::max(best, ratio_to_cublas(c, s));
    // Loose: a broken pipeline (half speed) fails, noise does not.
    EXPECT_GT(best, 0.8) << test::shape_text(s);
  }
}

}  // namespace
}  // namespace kt
