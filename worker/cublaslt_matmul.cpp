#include "worker/cublaslt_matmul.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "worker/cublas_handle.hpp"
#include "worker/statistics.hpp"
#include "worker/timed_work.hpp"

namespace kt {
namespace {

// Flushed samples of each algorithm, taken in rounds over all of them, behind a choice. The
// chosen one is then timed properly by whoever measures the baseline.
constexpr int kSelectionRounds = 25;

struct DestroyPreference {
  void operator()(cublasLtMatmulPreference_t p) const noexcept {
    cublasLtMatmulPreferenceDestroy(p);
  }
};

template <typename Handle, typename Release, typename Create, typename... Args>
cuda::UniqueHandle<Handle, Release> create(Create create_fn, const char* call, Args... args) {
  Handle handle{};
  cuda::check_cublas(create_fn(&handle, args...), call, __FILE__, __LINE__);
  return cuda::UniqueHandle<Handle, Release>(handle);
}

void set_batch(cublasLtMatrixLayout_t layout, int batch, std::int64_t stride) {
  if (batch <= 1) return;
  const std::int32_t count = batch;
  KT_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof(count)));
  KT_CUBLAS(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof(stride)));
}

// cublasLt's A is our B and its B our A (C^T = B A^T in its column-major terms).
void set_scales(cublasLtMatmulDesc_t desc, const LtScales& scales) {
  const auto set = [desc](cublasLtMatmulDescAttributes_t mode_attribute,
                          cublasLtMatmulMatrixScale_t mode,
                          cublasLtMatmulDescAttributes_t pointer_attribute, CUdeviceptr scale) {
    const std::int32_t mode_value = mode;  // the attribute is an int32_t
    KT_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc, mode_attribute, &mode_value, sizeof(mode_value)));
    const void* pointer = reinterpret_cast<const void*>(scale);
    KT_CUBLAS(cublasLtMatmulDescSetAttribute(desc, pointer_attribute, &pointer, sizeof(pointer)));
  };
  set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, scales.b_mode, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
      scales.b);
  set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, scales.a_mode, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
      scales.a);
  const std::int8_t fast = scales.fast_accumulation ? 1 : 0;  // the attribute is an int8_t
  KT_CUBLAS(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)));
}

}  // namespace

LtMatmul::LtMatmul(const LtMatmulShape& shape, const std::optional<LtScales>& scales)
    : shape_(shape) {
  handle_ = create<cublasLtHandle_t, DestroyLt>(cublasLtCreate, "cublasLtCreate");
  desc_ = create<cublasLtMatmulDesc_t, DestroyDesc>(
      cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate", CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
  KT_CUBLAS(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                           sizeof(transpose)));
  KT_CUBLAS(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSB, &keep,
                                           sizeof(keep)));
  if (scales) set_scales(desc_.get(), *scales);
  const auto m = std::uint64_t(shape.m), n = std::uint64_t(shape.n), k = std::uint64_t(shape.k);
  b_layout_ = create<cublasLtMatrixLayout_t, DestroyLayout>(
      cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", shape.input_type, k, n,
      std::int64_t(k));
  a_layout_ = create<cublasLtMatrixLayout_t, DestroyLayout>(
      cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate",
      shape.a_input_type.value_or(shape.input_type), k, m, std::int64_t(k));
  c_layout_ = create<cublasLtMatrixLayout_t, DestroyLayout>(
      cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", shape.output_type, n, m,
      std::int64_t(n));
  set_batch(b_layout_.get(), shape.batch, std::int64_t(n * k));
  set_batch(a_layout_.get(), shape.batch, std::int64_t(m * k));
  set_batch(c_layout_.get(), shape.batch, std::int64_t(m * n));

  auto preference = create<cublasLtMatmulPreference_t, DestroyPreference>(
      cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  const std::uint64_t workspace = kCublasLtWorkspaceBytes;
  KT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
      preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
  std::vector<cublasLtMatmulHeuristicResult_t> results(kCublasLtHeuristicAlgorithms);
  int returned = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_.get(), desc_.get(), b_layout_.get(), a_layout_.get(), c_layout_.get(),
      c_layout_.get(), preference.get(), kCublasLtHeuristicAlgorithms, results.data(), &returned);
  // NOT_SUPPORTED is how it says that no algorithm fits (an fp8 shape off its alignment, say).
  if (status != CUBLAS_STATUS_NOT_SUPPORTED)
    cuda::check_cublas(status, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) algorithms_.push_back(results[i]);
  if (algorithms_.empty())
    throw LtNoAlgorithm(
        "cublasLt's heuristic proposed no algorithm for " + std::to_string(shape.m) + "x" +
        std::to_string(shape.n) + "x" + std::to_string(shape.k) +
        (shape.batch > 1 ? " x" + std::to_string(shape.batch) : "") +
        (status == CUBLAS_STATUS_NOT_SUPPORTED ? " (CUBLAS_STATUS_NOT_SUPPORTED)" : ""));
}

void LtMatmul::run(std::size_t index, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
                   CUdeviceptr workspace, CUstream stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  KT_CUBLAS(cublasLtMatmul(handle_.get(), desc_.get(), &alpha, reinterpret_cast<void*>(b),
                           b_layout_.get(), reinterpret_cast<void*>(a), a_layout_.get(), &beta,
                           reinterpret_cast<void*>(c), c_layout_.get(), reinterpret_cast<void*>(c),
                           c_layout_.get(), &algorithms_.at(index).algo,
                           reinterpret_cast<void*>(workspace), kCublasLtWorkspaceBytes, stream));
}

nlohmann::json LtMatmul::facts(std::size_t index) const {
  const cublasLtMatmulAlgo_t& algo = algorithms_.at(index).algo;
  // The buffer must have the attribute's exact size: asked first with none (-1: unreadable).
  auto attribute = [&](cublasLtMatmulAlgoConfigAttributes_t which) -> std::int64_t {
    std::size_t size = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, which, nullptr, 0, &size) !=
            CUBLAS_STATUS_SUCCESS ||
        size == 0 || size > sizeof(std::uint64_t))
      return -1;
    std::uint64_t value = 0;  // little-endian: a narrower attribute fills the low bytes
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, which, &value, size, &written) !=
        CUBLAS_STATUS_SUCCESS)
      return -1;
    return static_cast<std::int64_t>(value);
  };
  return {{"id", attribute(CUBLASLT_ALGO_CONFIG_ID)},
          {"tile", attribute(CUBLASLT_ALGO_CONFIG_TILE_ID)},
          {"stages", attribute(CUBLASLT_ALGO_CONFIG_STAGES_ID)},
          {"split_k", attribute(CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
          {"reduction", attribute(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)},
          {"cta_swizzling", attribute(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)},
          {"cluster_shape", attribute(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)},
          {"workspace_bytes", algorithms_.at(index).workspaceSize}};
}

std::vector<double> time_in_rounds(const std::vector<std::function<void(CUstream)>>& launches,
                                   WorkerDevice& device) {
  TimingOptions options;  // warm-up and the events-or-graph choice as for any measurement
  std::vector<std::optional<TimedWork>> works(launches.size());
  for (std::size_t i = 0; i < launches.size(); ++i)
    works[i].emplace(launches[i], options, device.stream.get(), &device.flusher);
  std::vector<std::vector<double>> samples(launches.size());
  for (int round = 0; round < kSelectionRounds; ++round)
    for (std::size_t i = 0; i < works.size(); ++i)
      samples[i].push_back(works[i]->sample(/*flush_l2=*/true));
  std::vector<double> medians;
  for (const auto& s : samples) medians.push_back(median(s));
  return medians;
}

std::vector<std::size_t> fastest_first(const std::vector<double>& medians) {
  std::vector<std::size_t> order(medians.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return medians[a] < medians[b]; });
  return order;
}

std::size_t fastest(const std::vector<double>& medians) {
  return static_cast<std::size_t>(std::min_element(medians.begin(), medians.end()) -
                                  medians.begin());
}

}  // namespace kt
