#include "bench/gemm_shape_sets.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace kt::bench {
namespace {

GemmShape budgeted(GemmShape shape, std::int64_t budget, double timeout_seconds, const char* set) {
  shape.budget = budget;
  shape.timeout_seconds = timeout_seconds;
  shape.set = set;
  return shape;
}

// The square set's shapes with the budgets of the published tables (README: 8192^3 32, 4096^3 64,
// the rest 48). Timeouts about twice the H100's tuning wall time there (92, 34, 13, 9-13 s), so
// only a job that hangs is cut short: a cut job loses its final comparison.
std::vector<GemmShape> square_set() {
  std::vector<GemmShape> shapes;
  for (const GemmShape& shape : square_set_shapes()) {
    const bool cube = shape.m == shape.n && shape.n == shape.k;
    if (cube && shape.m == 8192)
      shapes.push_back(budgeted(shape, 32, 200, kSquareSet));
    else if (cube && shape.m == 4096)
      shapes.push_back(budgeted(shape, 64, 90, kSquareSet));
    else
      shapes.push_back(budgeted(shape, 48, 45, kSquareSet));
  }
  return shapes;
}

}  // namespace

std::vector<GemmShape> model_shapes() {
  // Budget per shape from the 2026-11-25 H100 runs' cost per variant (tuning wall time /
  // variants, the final comparison included): about 2.9 s at 8192^3 (1.1 TFLOP, 67M outputs),
  // 0.5 s at 4096^3, 0.2-0.3 s for shapes of a few GFLOP. The vocabulary projections have as
  // many flops as 8192^3 and twice its outputs (about 3.5 s each, 12 variants: ~60 s with the
  // final comparison); 8x128256x4096 reads 1 GB of weights per launch (~1 s each);
  // 2000x5120x13824 is 0.28 TFLOP (~0.9 s). Estimated (not measured) sum for the ten: about
  // 4.5 minutes; with the square set's nine (3.5 minutes measured) about 8.
  return {
      // Llama-2-7B vocabulary projection (hidden 4096, vocabulary 32000), 4096 tokens
      budgeted({4096, 32000, 4096}, 12, 150, kModelsSet),
      // the same with one added token: odd N, C's rows are not 16-byte aligned
      budgeted({4096, 32001, 4096}, 12, 150, kModelsSet),
      // Llama-3-8B vocabulary projection (128256) at decode batch 8: 1 GB of weights
      budgeted({8, 128256, 4096}, 16, 90, kModelsSet),
      // Llama-2-13B MLP down projection (13824 -> 5120), 2000 tokens: M not a multiple of 128
      budgeted({2000, 5120, 13824}, 24, 90, kModelsSet),
      // small and ragged everywhere (1000 is not a multiple of 64)
      budgeted({3000, 1000, 1000}, 32, 45, kModelsSet),
      // ragged M on a Llama-7B attention projection
      budgeted({777, 4096, 4096}, 32, 45, kModelsSet),
      // small N (96)
      budgeted({4096, 96, 4096}, 32, 45, kModelsSet),
      // K % 8 != 0: A and B rows are not 16-byte aligned (no TMA)
      budgeted({16, 4096, 4097}, 32, 45, kModelsSet),
      // Llama-7B MLP up/gate projection (4096 -> 11008) at decode, one token
      budgeted({1, 11008, 4096}, 32, 45, kModelsSet),
      // K a multiple of 8 but not of 64: a partial last k-tile
      budgeted({4096, 4096, 4104}, 32, 90, kModelsSet),
  };
}

std::vector<GemmShape> fp8_shapes() {
  std::vector<GemmShape> shapes;
  // DeepGEMM's dense GEMM benchmark: N x K of DeepSeek-V3's projections at decode (64, 128) and
  // prefill (4096) token counts.
  const std::vector<std::pair<std::int64_t, std::int64_t>> layers{
      {2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}};
  for (const std::int64_t m : {64, 128, 4096})
    for (const auto& [n, k] : layers)
      // Decode jobs are seconds each: a wider search there; prefill ones tens of seconds.
      shapes.push_back(budgeted({m, n, k}, m == 4096 ? 24 : 48, m == 4096 ? 90 : 45, kFp8Set));
  shapes.push_back(budgeted({4096, 4096, 4096}, 24, 60, kFp8Set));
  shapes.push_back(budgeted({8192, 8192, 8192}, 16, 120, kFp8Set));
  return shapes;
}

std::vector<std::string> gemm_shape_set_names() {
  return {kSquareSet, kModelsSet, "all", kFp8Set};
}

std::vector<GemmShape> gemm_shape_set(const std::string& name) {
  if (name == kSquareSet) return square_set();
  if (name == kModelsSet) return model_shapes();
  if (name == kFp8Set) return fp8_shapes();
  if (name == "all") {
    std::vector<GemmShape> shapes = square_set();
    for (GemmShape& shape : model_shapes()) shapes.push_back(std::move(shape));
    return shapes;
  }
  std::string known;
  for (const std::string& set : gemm_shape_set_names()) known += (known.empty() ? "" : ", ") + set;
  throw std::invalid_argument("unknown GEMM shape set '" + name + "' (known: " + known + ")");
}

}  // namespace kt::bench
