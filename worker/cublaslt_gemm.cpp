#include "worker/cublaslt_gemm.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/cublas_handle.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/cuda_handle.hpp"
#include "worker/gemm_operands.hpp"
#include "worker/statistics.hpp"
#include "worker/timed_work.hpp"

namespace kt {
namespace {

constexpr const char* kWhat = "cublaslt_gemm";
// Flushed samples of each heuristic algorithm, taken in rounds over all of them, behind the
// choice. The chosen one is then timed properly by whoever measures the baseline.
constexpr int kSelectionRounds = 25;

struct DestroyLt {
  void operator()(cublasLtHandle_t h) const noexcept { cublasLtDestroy(h); }
};
struct DestroyDesc {
  void operator()(cublasLtMatmulDesc_t d) const noexcept { cublasLtMatmulDescDestroy(d); }
};
struct DestroyLayout {
  void operator()(cublasLtMatrixLayout_t l) const noexcept { cublasLtMatrixLayoutDestroy(l); }
};
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

// A few facts of a chosen algorithm, for the record.
nlohmann::json algorithm_facts(const cublasLtMatmulAlgo_t& algo) {
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
          {"cluster_shape", attribute(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)}};
}

class CublasLtGemm final : public Baseline {
 public:
  CublasLtGemm(const ProblemInstance& problem, const ProblemBuffers& buffers, WorkerDevice& device)
      : workspace_(kCublasLtWorkspaceBytes),
        gemm_(gemm_operands(problem.baseline->params, buffers, kWhat)) {
    const nlohmann::json& p = problem.baseline->params;
    const cudaDataType_t in_type = gemm_.input_type, out_type = gemm_.output_type;
    if (p.contains("algorithm_index")) {  // the job's choice, kept for its final comparison
      const nlohmann::json& index = p["algorithm_index"];
      if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
          index.get<std::int64_t>() >= kCublasLtHeuristicAlgorithms)
        throw std::invalid_argument("cublaslt_gemm: algorithm_index must be an integer in [0, " +
                                    std::to_string(kCublasLtHeuristicAlgorithms) + ")");
      fixed_index_ = index.get<std::size_t>();
    }

    handle_ = create<cublasLtHandle_t, DestroyLt>(cublasLtCreate, "cublasLtCreate");
    desc_ = create<cublasLtMatmulDesc_t, DestroyDesc>(
        cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate", CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const cublasOperation_t transpose = CUBLAS_OP_T, keep = CUBLAS_OP_N;
    KT_CUBLAS(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                             sizeof(transpose)));
    KT_CUBLAS(cublasLtMatmulDescSetAttribute(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSB, &keep,
                                             sizeof(keep)));
    // Stored matrices, column-major: B is k x n (ld k, used transposed), A is k x m (ld k),
    // C is n x m (ld n).
    b_layout_ = create<cublasLtMatrixLayout_t, DestroyLayout>(
        cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", in_type, std::uint64_t(gemm_.k),
        std::uint64_t(gemm_.n), std::int64_t(gemm_.k));
    a_layout_ = create<cublasLtMatrixLayout_t, DestroyLayout>(
        cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", in_type, std::uint64_t(gemm_.k),
        std::uint64_t(gemm_.m), std::int64_t(gemm_.k));
    c_layout_ = create<cublasLtMatrixLayout_t, DestroyLayout>(
        cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", out_type, std::uint64_t(gemm_.n),
        std::uint64_t(gemm_.m), std::int64_t(gemm_.n));
    choose_algorithm(device);
  }

  void launch(CUstream stream) override { run(algorithms_[chosen_].algo, stream); }

  nlohmann::json describe() const override {
    nlohmann::json selection = nlohmann::json::array();
    for (std::size_t i = 0; i < algorithms_.size() && !fixed_index_; ++i)
      selection.push_back({{"index", i},
                           {"median_us", selection_us_[i]},
                           {"workspace_bytes", algorithms_[i].workspaceSize}});
    return {{"kind", "cublaslt_gemm"},
            {"library", "cublasLt " + std::to_string(cublasLtGetVersion())},
            {"workspace_limit_bytes", kCublasLtWorkspaceBytes},
            {"heuristic_algorithms", algorithms_.size()},
            {"algorithm_index", chosen_},
            {"chosen_by", fixed_index_ ? "given (the job's choice on this GPU model)"
                                       : "timing each on this GPU"},
            {"algorithm", algorithm_facts(algorithms_[chosen_].algo)},
            {"selection", std::move(selection)}};
  }

 private:
  void run(const cublasLtMatmulAlgo_t& algo, CUstream stream) {
    const float alpha = 1.0f, beta = 0.0f;
    KT_CUBLAS(cublasLtMatmul(
        handle_.get(), desc_.get(), &alpha, reinterpret_cast<void*>(gemm_.b), b_layout_.get(),
        reinterpret_cast<void*>(gemm_.a), a_layout_.get(), &beta, reinterpret_cast<void*>(gemm_.c),
        c_layout_.get(), reinterpret_cast<void*>(gemm_.c), c_layout_.get(), &algo,
        reinterpret_cast<void*>(workspace_.get()), kCublasLtWorkspaceBytes, stream));
  }

  // The heuristic's top algorithms, each timed in rounds; the lowest median is kept.
  void choose_algorithm(WorkerDevice& device) {
    auto preference = create<cublasLtMatmulPreference_t, DestroyPreference>(
        cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
    const std::uint64_t workspace = kCublasLtWorkspaceBytes;
    KT_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        preference.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)));
    std::vector<cublasLtMatmulHeuristicResult_t> results(kCublasLtHeuristicAlgorithms);
    int returned = 0;
    KT_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_.get(), desc_.get(), b_layout_.get(),
                                             a_layout_.get(), c_layout_.get(), c_layout_.get(),
                                             preference.get(), kCublasLtHeuristicAlgorithms,
                                             results.data(), &returned));
    for (int i = 0; i < returned; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS) algorithms_.push_back(results[i]);
    if (algorithms_.empty())
      throw std::runtime_error("cublasLt's heuristic proposed no algorithm for " +
                               std::to_string(gemm_.m) + "x" + std::to_string(gemm_.n) + "x" +
                               std::to_string(gemm_.k));
    if (fixed_index_) {  // chosen before on this GPU model: the same library, the same list
      if (*fixed_index_ >= algorithms_.size())
        throw std::invalid_argument("cublaslt_gemm: algorithm_index " +
                                    std::to_string(*fixed_index_) + " but the heuristic gave " +
                                    std::to_string(algorithms_.size()) + " algorithms");
      chosen_ = *fixed_index_;
      selection_us_.assign(algorithms_.size(), 0.0);
      return;
    }

    TimingOptions options;  // warm-up and the events-or-graph choice as for any measurement
    std::vector<std::optional<TimedWork>> works(algorithms_.size());
    for (std::size_t i = 0; i < algorithms_.size(); ++i) {
      const cublasLtMatmulAlgo_t algo = algorithms_[i].algo;
      works[i].emplace([this, algo](CUstream stream) { run(algo, stream); }, options,
                       device.stream.get(), &device.flusher);
    }
    std::vector<std::vector<double>> samples(algorithms_.size());
    for (int round = 0; round < kSelectionRounds; ++round)
      for (std::size_t i = 0; i < works.size(); ++i)
        samples[i].push_back(works[i]->sample(/*flush_l2=*/true));
    selection_us_.clear();
    for (const auto& s : samples) selection_us_.push_back(median(s));
    chosen_ = static_cast<std::size_t>(
        std::min_element(selection_us_.begin(), selection_us_.end()) - selection_us_.begin());
  }

  cuda::DeviceBuffer workspace_;
  GemmOperands gemm_;
  cuda::UniqueHandle<cublasLtHandle_t, DestroyLt> handle_;
  cuda::UniqueHandle<cublasLtMatmulDesc_t, DestroyDesc> desc_;
  cuda::UniqueHandle<cublasLtMatrixLayout_t, DestroyLayout> a_layout_, b_layout_, c_layout_;
  std::vector<cublasLtMatmulHeuristicResult_t> algorithms_;
  std::vector<double> selection_us_;
  std::size_t chosen_ = 0;
  std::optional<std::size_t> fixed_index_;
};

}  // namespace

std::unique_ptr<Baseline> make_cublaslt_gemm(const ProblemInstance& problem,
                                             const ProblemBuffers& buffers, WorkerDevice& device) {
  return std::make_unique<CublasLtGemm>(problem, buffers, device);
}

}  // namespace kt
