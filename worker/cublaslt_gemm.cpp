#include "worker/cublaslt_gemm.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "worker/cuda_buffer.hpp"
#include "worker/gemm_operands.hpp"

namespace kt {
namespace {

constexpr const char* kWhat = "cublaslt_gemm";

class CublasLtGemm final : public Baseline {
 public:
  CublasLtGemm(const ProblemInstance& problem, const ProblemBuffers& buffers, WorkerDevice& device)
      : workspace_(kCublasLtWorkspaceBytes),
        gemm_(gemm_operands(problem.baseline->params, buffers, kWhat)),
        fixed_index_(fixed_algorithm(problem.baseline->params, "algorithm_index", kWhat)),
        matmul_(LtMatmulShape{gemm_.m, gemm_.n, gemm_.k, 1, gemm_.input_type, gemm_.output_type}) {
    if (fixed_index_) {  // chosen before on this GPU model: the same library, the same list
      if (*fixed_index_ >= matmul_.algorithm_count())
        throw std::invalid_argument("cublaslt_gemm: algorithm_index " +
                                    std::to_string(*fixed_index_) + " but the heuristic gave " +
                                    std::to_string(matmul_.algorithm_count()) + " algorithms");
      chosen_ = *fixed_index_;
      ranking_ = {chosen_};
      return;
    }
    std::vector<std::function<void(CUstream)>> launches;
    for (std::size_t i = 0; i < matmul_.algorithm_count(); ++i)
      launches.push_back([this, i](CUstream stream) { run(i, stream); });
    selection_us_ = time_in_rounds(launches, device);
    ranking_ = fastest_first(selection_us_);
    chosen_ = ranking_.front();
  }

  void launch(CUstream stream) override { run(chosen_, stream); }

  bool reject_and_try_next(const std::string& why) override {
    rejected_.push_back({{"index", chosen_}, {"reason", why}});
    if (++rank_ >= ranking_.size()) return false;
    chosen_ = ranking_[rank_];
    return true;
  }

  nlohmann::json describe() const override {
    nlohmann::json selection = nlohmann::json::array();
    for (std::size_t i = 0; i < selection_us_.size(); ++i)
      selection.push_back({{"index", i},
                           {"median_us", selection_us_[i]},
                           {"workspace_bytes", matmul_.facts(i)["workspace_bytes"]}});
    nlohmann::json described = {
        {"kind", "cublaslt_gemm"},
        {"library", "cublasLt " + std::to_string(cublasLtGetVersion())},
        {"workspace_limit_bytes", kCublasLtWorkspaceBytes},
        {"heuristic_algorithms", matmul_.algorithm_count()},
        {"algorithm_index", chosen_},
        {"chosen_by", fixed_index_ ? "given (the job's choice on this GPU model)"
                                   : rejected_.empty()
                                       ? "timing each on this GPU"
                                       : "timing each on this GPU; faster ones computed a wrong "
                                         "result (rejected)"},
        {"algorithm", matmul_.facts(chosen_)},
        {"selection", std::move(selection)}};
    if (!rejected_.empty()) described["rejected"] = rejected_;
    return described;
  }

 private:
  void run(std::size_t index, CUstream stream) {
    matmul_.run(index, gemm_.a, gemm_.b, gemm_.c, workspace_.get(), stream);
  }

  cuda::DeviceBuffer workspace_;
  GemmOperands gemm_;
  std::optional<std::size_t> fixed_index_;
  LtMatmul matmul_;
  std::vector<double> selection_us_;
  std::vector<std::size_t> ranking_;  // fastest first; chosen_ is ranking_[rank_]
  std::size_t rank_ = 0;
  std::size_t chosen_ = 0;
  nlohmann::json rejected_ = nlohmann::json::array();  // {"index", "reason"} of wrong ones
};

}  // namespace

std::optional<std::size_t> fixed_algorithm(const nlohmann::json& params, const std::string& name,
                                           const std::string& kind) {
  if (!params.contains(name)) return std::nullopt;
  const nlohmann::json& index = params[name];
  if (!index.is_number_integer() || index.get<std::int64_t>() < 0 ||
      index.get<std::int64_t>() >= kCublasLtHeuristicAlgorithms)
    throw std::invalid_argument(kind + ": " + name + " must be an integer in [0, " +
                                std::to_string(kCublasLtHeuristicAlgorithms) + ")");
  return index.get<std::size_t>();
}

std::unique_ptr<Baseline> make_cublaslt_gemm(const ProblemInstance& problem,
                                             const ProblemBuffers& buffers, WorkerDevice& device) {
  return std::make_unique<CublasLtGemm>(problem, buffers, device);
}

}  // namespace kt
