#include "worker/unfused_dual_gemm.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/cublaslt_gemm.hpp"
#include "worker/cublaslt_matmul.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/gemm_operands.hpp"

namespace kt {
namespace {

constexpr const char* kWhat = "unfused_dual_gemm_silu";

class UnfusedDualGemm final : public Baseline {
 public:
  UnfusedDualGemm(const ProblemInstance& problem, const ProblemBuffers& buffers,
                  WorkerDevice& device)
      : device_(device),
        ops_(dual_gemm_operands(problem.baseline->params, buffers, kWhat)),
        elements_(std::int64_t{ops_.g} * ops_.m * ops_.n),
        workspace_(kCublasLtWorkspaceBytes),
        gate_(static_cast<std::size_t>(elements_) * 2),
        up_(static_cast<std::size_t>(elements_) * 2),
        matmul_(LtMatmulShape{ops_.m, ops_.n, ops_.k, ops_.g, ops_.input_type, ops_.input_type}) {
    const nlohmann::json& params = problem.baseline->params;
    const auto fixed_gate = fixed_algorithm(params, "gate_algorithm_index", kWhat);
    const auto fixed_up = fixed_algorithm(params, "up_algorithm_index", kWhat);
    for (const auto& fixed : {fixed_gate, fixed_up})
      if (fixed && *fixed >= matmul_.algorithm_count())
        throw std::invalid_argument(std::string(kWhat) + ": algorithm index " +
                                    std::to_string(*fixed) + " but the heuristic gave " +
                                    std::to_string(matmul_.algorithm_count()) + " algorithms");
    // Both GEMMs have one shape and one heuristic list; each is timed on its own operands.
    gate_ranking_ = fixed_gate ? std::vector<std::size_t>{*fixed_gate}
                               : choose(ops_.b1, gate_.get(), gate_selection_us_);
    up_ranking_ = fixed_up ? std::vector<std::size_t>{*fixed_up}
                           : choose(ops_.b2, up_.get(), up_selection_us_);
    gate_index_ = gate_ranking_.front();
    up_index_ = up_ranking_.front();
    chosen_by_ = fixed_gate && fixed_up ? "given (the job's choice on this GPU model)"
                                        : "timing each on this GPU";
  }

  void launch(CUstream stream) override {
    matmul_.run(gate_index_, ops_.a, ops_.b1, gate_.get(), workspace_.get(), stream);
    matmul_.run(up_index_, ops_.a, ops_.b2, up_.get(), workspace_.get(), stream);
    device_.support.silu_multiply(ops_.c, gate_.get(), up_.get(), elements_, ops_.output_dtype,
                                  stream);
  }

  // Both GEMMs step to their next-fastest algorithm together: which of the two went wrong is not
  // known from the fused output, and a wrong one is usually a split-K choice both share.
  bool reject_and_try_next(const std::string& why) override {
    rejected_.push_back(
        {{"gate_algorithm_index", gate_index_}, {"up_algorithm_index", up_index_}, {"reason", why}});
    ++rank_;
    if (rank_ >= gate_ranking_.size() && rank_ >= up_ranking_.size()) return false;
    gate_index_ = gate_ranking_[std::min(rank_, gate_ranking_.size() - 1)];
    up_index_ = up_ranking_[std::min(rank_, up_ranking_.size() - 1)];
    chosen_by_ = "timing each on this GPU; faster ones computed a wrong result (rejected)";
    return true;
  }

  nlohmann::json describe() const override {
    auto selection = [](const std::vector<double>& us) {
      nlohmann::json out = nlohmann::json::array();
      for (std::size_t i = 0; i < us.size(); ++i)
        out.push_back({{"index", i}, {"median_us", us[i]}});
      return out;
    };
    nlohmann::json described = {{"kind", kWhat},
            {"library", "cublasLt " + std::to_string(cublasLtGetVersion())},
            {"gemms", "two strided-batched cublasLt calls over " + std::to_string(ops_.g) +
                          " groups (gate = A B1^T, up = A B2^T), 16-bit outputs"},
            {"elementwise", "kt_silu_multiply (fp32 math, exact expf)"},
            {"workspace_limit_bytes", kCublasLtWorkspaceBytes},
            {"heuristic_algorithms", matmul_.algorithm_count()},
            {"gate_algorithm_index", gate_index_},
            {"up_algorithm_index", up_index_},
            {"chosen_by", chosen_by_},
            {"gate_algorithm", matmul_.facts(gate_index_)},
            {"up_algorithm", matmul_.facts(up_index_)},
            {"gate_selection", selection(gate_selection_us_)},
            {"up_selection", selection(up_selection_us_)}};
    if (!rejected_.empty()) described["rejected"] = rejected_;
    return described;
  }

 private:
  // The heuristic's algorithms, fastest on this GPU first.
  std::vector<std::size_t> choose(CUdeviceptr b, CUdeviceptr out, std::vector<double>& medians) {
    std::vector<std::function<void(CUstream)>> launches;
    for (std::size_t i = 0; i < matmul_.algorithm_count(); ++i)
      launches.push_back([this, i, b, out](CUstream stream) {
        matmul_.run(i, ops_.a, b, out, workspace_.get(), stream);
      });
    medians = time_in_rounds(launches, device_);
    return fastest_first(medians);
  }

  WorkerDevice& device_;
  DualGemmOperands ops_;
  std::int64_t elements_;
  cuda::DeviceBuffer workspace_;
  cuda::DeviceBuffer gate_, up_;  // 16-bit intermediates, as a framework's temporaries
  LtMatmul matmul_;
  std::size_t gate_index_ = 0, up_index_ = 0;
  std::vector<std::size_t> gate_ranking_, up_ranking_;  // fastest first
  std::size_t rank_ = 0;                                 // the candidates' step in both rankings
  nlohmann::json rejected_ = nlohmann::json::array();
  std::vector<double> gate_selection_us_, up_selection_us_;
  std::string chosen_by_;
};

}  // namespace

std::unique_ptr<Baseline> make_unfused_dual_gemm(const ProblemInstance& problem,
                                                 const ProblemBuffers& buffers,
                                                 WorkerDevice& device) {
  return std::make_unique<UnfusedDualGemm>(problem, buffers, device);
}

}  // namespace kt
