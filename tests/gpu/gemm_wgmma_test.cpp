// The Hopper wgmma GEMM template ("wgmma_tma_ws") on a real sm_90 GPU through the measurement
// worker, exactly as a tuning job runs it: manifest -> instantiate (tensor-map arguments, cluster
// launch) -> NVRTC -> worker -> cuBLAS reference on fresh random inputs with a poisoned output.
// Variants span every feature axis (tile shapes, 1 and 2 consumers, stage counts, BK 128,
// clusters 2x1 / 1x2 / 2x2 with multicast, persistent and one-CTA-per-tile grids, raster orders,
// reverse K, TMA-store epilogue, stream-K, fp16); shapes are ragged in every dimension: M, N and K
// not multiples of any tile, M = 1, K a multiple of 8 but not of 64; 2000x3000 has more tiles
// than an H100 has SMs, so stream-K splits its last wave.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/gemm_templates.hpp"
#include "support/gpu_fixture.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

using test::gemm_family;

const TemplateSpec& wgmma_template() {
  return test::gemm_template("wgmma_tma_ws");
}

struct Variant {
  const char* dtype;
  Config config;
};

Config config(int bm, int bn, int bk, int stages, int consumers, int cluster_m, int cluster_n,
              int raster, int group, int k_order, int grid, int epilogue = 0, int split_k = 1) {
  return {{"BM", bm},
          {"BN", bn},
          {"BK", bk},
          {"STAGES", stages},
          {"CONSUMERS", consumers},
          {"CLUSTER_M", cluster_m},
          {"CLUSTER_N", cluster_n},
          {"RASTER", raster},
          {"GROUP", group},
          {"K_ORDER", k_order},
          {"GRID", grid},
          {"EPILOGUE", epilogue},
          {"SPLIT_K", split_k}};
}

// Every value of every axis at least once.
const std::vector<Variant> kVariants = {
    {"bf16", config(128, 256, 64, 4, 2, 1, 1, 0, 8, 0, 1)},    // the usual winner
    {"bf16", config(128, 256, 64, 3, 2, 2, 1, 1, 16, 0, 1)},   // B multicast, raster along M
    {"bf16", config(256, 128, 64, 4, 2, 1, 2, 0, 8, 0, 0)},    // A multicast, a CTA per tile
    {"bf16", config(128, 128, 64, 6, 1, 2, 2, 1, 8, 0, 0)},    // 2x2 cluster, one consumer
    {"bf16", config(128, 128, 128, 3, 2, 1, 1, 0, 16, 1, 0)},  // BK 128, reverse K
    {"fp16", config(128, 256, 64, 4, 2, 2, 1, 0, 8, 1, 1)},
    {"fp16", config(128, 128, 64, 5, 2, 1, 2, 0, 8, 0, 1)},
    {"bf16", config(128, 256, 64, 3, 2, 1, 1, 0, 16, 0, 1, 1, 2)},  // TMA store + stream-K
    {"bf16", config(128, 256, 64, 3, 2, 2, 1, 0, 16, 0, 1, 1, 1)},  // TMA store, B multicast
    {"fp16", config(128, 128, 64, 4, 2, 1, 1, 1, 8, 0, 1, 0, 2)},   // stream-K, register stores
    {"bf16", config(128, 176, 64, 5, 2, 1, 1, 0, 8, 0, 1)},         // 176: a trailing half strip
    {"fp16", config(128, 176, 64, 4, 2, 1, 2, 1, 8, 0, 0)},         // 176, A multicast
    {"bf16", config(128, 176, 64, 5, 2, 1, 1, 0, 8, 0, 1, 0, 2)},   // 176, stream-K
    {"bf16", config(128, 192, 64, 5, 2, 2, 1, 0, 16, 0, 1)},        // 192, B multicast
    {"fp16", config(128, 192, 64, 4, 2, 1, 1, 0, 8, 0, 1, 1, 1)},   // 192, TMA store
    {"bf16", config(64, 64, 64, 12, 1, 2, 1, 0, 8, 0, 0)},          // decode: B shared by 2
    {"fp16", config(64, 128, 128, 4, 1, 2, 1, 1, 8, 0, 1, 1, 1)},   // decode, BK 128, TMA store
    {"bf16", config(64, 64, 64, 8, 1, 1, 1, 0, 8, 0, 1)},           // decode, persistent
};

// Ragged everywhere; K % 8 == 0 (the tensor maps' row pitch) but mostly K % 64 != 0.
const std::vector<Shape> kShapes = {
    {{"M", 1}, {"N", 1000}, {"K", 264}},     {{"M", 257}, {"N", 193}, {"K", 136}},
    {{"M", 1000}, {"N", 1000}, {"K", 1000}}, {{"M", 513}, {"N", 771}, {"K", 520}},
    {{"M", 129}, {"N", 4000}, {"K", 72}},    {{"M", 3000}, {"N", 200}, {"K", 4104}},
    {{"M", 2000}, {"N", 3000}, {"K", 1040}},
};

class WgmmaOnGpu : public test::WorkerGpuTest {
 protected:
  void SetUp() override {
    WorkerGpuTest::SetUp();
    if (IsSkipped()) return;
    if (device_.arch != "sm_90a") GTEST_SKIP() << "wgmma needs sm_90a, found " << device_.arch;
  }

  std::string compile(const Variant& variant, int index) {
    return write_cubin(
        compile_request(gemm_family(), wgmma_template(), variant.config, variant.dtype, limits_),
        "wgmma_" + std::to_string(index));
  }

  MeasureRequest request(const Variant& variant, const std::string& cubin, const Shape& shape,
                         int id) {
    MeasureRequest r;
    r.variant_id = id;
    r.cubin_path = cubin;
    r.kernel = wgmma_template().kernel;
    r.full =
        instantiate(gemm_family(), wgmma_template(), variant.config, shape, variant.dtype, limits_);
    r.tolerance = gemm_family().tolerance.at(variant.dtype);
    r.seed = 1000 + static_cast<std::uint64_t>(id);
    r.time = false;
    return r;
  }
};

TEST_F(WgmmaOnGpu, EveryFeatureIsRightOnRaggedShapes) {
  int id = 0;
  for (std::size_t v = 0; v < kVariants.size(); ++v) {
    const Variant& variant = kVariants[v];
    const std::string cubin = compile(variant, static_cast<int>(v));
    for (const Shape& shape : kShapes) {
      const MeasureResult r = client_->measure(request(variant, cubin, shape, ++id), 20s);
      const std::string where = std::string(variant.dtype) + " " + canonical_key(variant.config) +
                                " on " + canonical_key(shape);
      EXPECT_EQ(r.status, VariantStatus::measured)
          << where << ": " << r.failed_gate << ": " << r.reason;
      if (r.status != VariantStatus::measured && r.status != VariantStatus::wrong_result)
        break;  // hung or crashed: its other shapes would only wait out the timeout again
      ASSERT_TRUE(r.error.has_value()) << where;
      EXPECT_EQ(r.error->non_finite, 0) << where;
      EXPECT_EQ(r.error->bad_elements, 0) << where << ": " << r.reason;
      EXPECT_LT(r.error->rel_l2, gemm_family().tolerance.at(variant.dtype).max_rel_l2) << where;
    }
  }
  EXPECT_EQ(client_->starts(), 1) << "no variant lost the worker's context";
}

TEST_F(WgmmaOnGpu, LargeSquareIsMeasuredWithTiming) {
  const Variant& variant = kVariants.front();
  MeasureRequest r =
      request(variant, compile(variant, 100), {{"M", 4096}, {"N", 4096}, {"K", 4096}}, 100);
  r.smoke = instantiate(gemm_family(), wgmma_template(), variant.config,
                        smoke_shape_for(gemm_family(), {}), variant.dtype, limits_);
  r.time = true;
  r.timing.min_trials = 10;
  r.timing.max_seconds = 1.0;
  const MeasureResult result = client_->measure(r, 120s);
  ASSERT_EQ(result.status, VariantStatus::measured) << result.failed_gate << ": " << result.reason;
  ASSERT_TRUE(result.timing.has_value());
  EXPECT_GT(result.registers, 0);
  EXPECT_LE(result.timing->min_us, result.timing->median_us);
  EXPECT_LE(result.timing->median_us, result.timing->p90_us);
  const double tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (result.timing->median_us * 1e6);
  EXPECT_GT(tflops, 300.0) << "median " << result.timing->median_us << " us";
  RecordProperty("tflops", std::to_string(tflops));
}

}  // namespace
}  // namespace kt
