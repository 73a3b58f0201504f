#include "worker/cublaslt_fp8_gemm.hpp"

#include <cstddef>
#include <cstring>
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

constexpr const char* kWhat = "cublaslt_fp8_gemm";
constexpr int kScaleBlock = 128;  // the elements along K (and N, for B) one block scale covers

int cdiv(int a, int b) {
  return (a + b - 1) / b;
}

// B's block scales as cuBLAS reads them, in a buffer of the baseline's own when scale_b's rows
// need padding (nullopt: scale_b is read as it is).
std::optional<cuda::DeviceBuffer> padded_scale_b(const Fp8GemmOperands& g,
                                                 const ProblemBuffers& buffers) {
  const int k_blocks = cdiv(g.k, kScaleBlock);
  if (!g.block_scaled || k_blocks % 4 == 0) return std::nullopt;
  const std::vector<std::byte> bytes = buffers.download(g.scale_b_name);
  std::vector<float> scales(bytes.size() / sizeof(float));
  std::memcpy(scales.data(), bytes.data(), scales.size() * sizeof(float));
  const std::vector<float> padded = blk128x128_scales(scales, cdiv(g.n, kScaleBlock), k_blocks);
  cuda::DeviceBuffer copy(padded.size() * sizeof(float));
  copy.copy_from_host(padded.data(), padded.size() * sizeof(float));
  return copy;
}

std::string shape_text(const Fp8GemmOperands& g) {
  return "M=" + std::to_string(g.m) + " N=" + std::to_string(g.n) + " K=" + std::to_string(g.k) +
         " (A " + g.a_dtype + ", B " + g.b_dtype + ", C " + g.c_dtype + ") with " +
         (g.block_scaled ? "block scaling (A 1x128 VEC128_32F, B 128x128 BLK128x128_32F)"
                         : "per-tensor scaling");
}

// Refusals are the configuration's, not a fault: std::invalid_argument, which the engine records.
LtMatmul scaled_matmul(const Fp8GemmOperands& g, CUdeviceptr scale_b, bool fast_accumulation) {
  if (g.a_type == CUDA_R_8F_E5M2 && g.b_type == CUDA_R_8F_E5M2)
    throw std::invalid_argument(std::string(kWhat) + ": cuBLAS has no e5m2 x e5m2 matmul, " +
                                shape_text(g) + ": one of A and B must be e4m3");
  LtScales scales{g.scale_a, scale_b};
  scales.fast_accumulation = fast_accumulation;
  if (g.block_scaled) {
    scales.a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    scales.b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
  try {
    return LtMatmul(LtMatmulShape{g.m, g.n, g.k, 1, g.b_type, g.output_type, g.a_type}, scales);
  } catch (const LtNoAlgorithm& e) {
    throw std::invalid_argument(
        std::string(kWhat) + ": cublasLt has no algorithm for " + shape_text(g) +
        " on this GPU: " + e.what() + "; cuBLAS needs K a multiple of 16 and N of 8" +
        (g.block_scaled ? ", and for block scaling M a multiple of 4 and a Hopper GPU" : ""));
  }
}

nlohmann::json scaling_description(const Fp8GemmOperands& g, bool scale_b_padded) {
  if (!g.block_scaled)
    return {{"mode", "per_tensor"},
            {"a", "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: " + g.scale_a_name + "[0]"},
            {"b", "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: " + g.scale_b_name + "[0]"}};
  return {{"mode", "block"},
          {"a", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F: one per 1x128 block, " + g.scale_a_name +
                    " [cdiv(K,128)][M] as given"},
          {"b", "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: one per 128x128 block, " +
                    g.scale_b_name + " [cdiv(N,128)][cdiv(K,128)] " +
                    (scale_b_padded ? "copied at construction with its rows padded to a multiple "
                                      "of 4 floats, cuBLAS's layout (untimed)"
                                    : "as given (its rows are a multiple of 4 floats already)")}};
}

// The matmuls a per-tensor problem's baseline chooses from: the heuristic's top algorithms with
// fp32 promotion and with fast accumulation (kerntune's PROMOTE = 0 variants accumulate like
// that, so the library may too; every choice passes the same check). Block scaling promotes by
// construction: one matmul.
std::vector<LtMatmul> candidate_matmuls(const Fp8GemmOperands& g, CUdeviceptr scale_b,
                                        std::optional<bool> only_fast) {
  std::vector<LtMatmul> out;
  if (!only_fast || !*only_fast) out.push_back(scaled_matmul(g, scale_b, false));
  if (!g.block_scaled && (!only_fast || *only_fast)) {
    try {
      out.push_back(scaled_matmul(g, scale_b, true));
    } catch (const std::invalid_argument&) {
      if (only_fast) throw;  // asked for by the job: say why it cannot run
    }
  }
  return out;
}

std::optional<bool> fast_accumulation_param(const nlohmann::json& params) {
  if (!params.contains("fast_accumulation")) return std::nullopt;
  if (!params["fast_accumulation"].is_boolean())
    throw std::invalid_argument(std::string(kWhat) + ": fast_accumulation must be true or false");
  return params["fast_accumulation"].get<bool>();
}

class CublasLtFp8Gemm final : public Baseline {
 public:
  CublasLtFp8Gemm(const ProblemInstance& problem, const ProblemBuffers& buffers,
                  WorkerDevice& device)
      : workspace_(kCublasLtWorkspaceBytes),
        gemm_(fp8_gemm_operands(problem.baseline->params, buffers, kWhat)),
        fixed_index_(fixed_algorithm(problem.baseline->params, "algorithm_index", kWhat)),
        padded_scale_b_(padded_scale_b(gemm_, buffers)),
        matmuls_(candidate_matmuls(
            gemm_, padded_scale_b_ ? padded_scale_b_->get() : gemm_.scale_b,
            fixed_index_ ? std::optional<bool>(
                               fast_accumulation_param(problem.baseline->params).value_or(false))
                         : std::nullopt)),
        params_(problem.baseline->params) {
    for (std::size_t m = 0; m < matmuls_.size(); ++m)
      for (std::size_t i = 0; i < matmuls_[m].algorithm_count(); ++i) candidates_.push_back({m, i});
    if (fixed_index_) {  // chosen before on this GPU model: the same library, the same list
      if (*fixed_index_ >= matmuls_.front().algorithm_count())
        throw std::invalid_argument(std::string(kWhat) + ": algorithm_index " +
                                    std::to_string(*fixed_index_) + " but the heuristic gave " +
                                    std::to_string(matmuls_.front().algorithm_count()) +
                                    " algorithms");
      chosen_ = *fixed_index_;
      ranking_ = {chosen_};
      return;
    }
    std::vector<std::function<void(CUstream)>> launches;
    for (std::size_t c = 0; c < candidates_.size(); ++c)
      launches.push_back([this, c](CUstream stream) { run(c, stream); });
    selection_us_ = time_in_rounds(launches, device);
    ranking_ = fastest_first(selection_us_);
    chosen_ = ranking_.front();
  }

  void launch(CUstream stream) override { run(chosen_, stream); }

  bool reject_and_try_next(const std::string& why) override {
    rejected_.push_back({{"index", candidates_[chosen_].second},
                         {"fast_accumulation", is_fast(chosen_)},
                         {"reason", why}});
    if (++rank_ >= ranking_.size()) return false;
    chosen_ = ranking_[rank_];
    return true;
  }

  nlohmann::json describe() const override {
    nlohmann::json selection = nlohmann::json::array();
    for (std::size_t c = 0; c < selection_us_.size(); ++c)
      selection.push_back({{"index", candidates_[c].second},
                           {"fast_accumulation", is_fast(c)},
                           {"median_us", selection_us_[c]},
                           {"workspace_bytes", facts(c)["workspace_bytes"]}});
    const auto& [matmul, index] = candidates_[chosen_];
    nlohmann::json described = {
        {"kind", kWhat},
        {"library", "cublasLt " + std::to_string(cublasLtGetVersion())},
        {"inputs", {{"a", gemm_.a_dtype}, {"b", gemm_.b_dtype}, {"c", gemm_.c_dtype}}},
        {"scaling", scaling_description(gemm_, padded_scale_b_.has_value())},
        {"workspace_limit_bytes", kCublasLtWorkspaceBytes},
        {"heuristic_algorithms", matmuls_.front().algorithm_count()},
        {"algorithm_index", index},
        {"fast_accumulation", is_fast(chosen_)},
        {"chosen_by", fixed_index_        ? "given (the job's choice on this GPU model)"
                      : rejected_.empty() ? "timing each on this GPU"
                                          : "timing each on this GPU; faster ones computed a wrong "
                                            "result (rejected)"},
        {"algorithm", facts(chosen_)},
        {"selection", std::move(selection)}};
    if (!rejected_.empty()) described["rejected"] = rejected_;
    return described;
  }

 private:
  // Candidate c: algorithm candidates_[c].second of matmul candidates_[c].first.
  void run(std::size_t c, CUstream stream) {
    const auto& [matmul, index] = candidates_[c];
    matmuls_[matmul].run(index, gemm_.a, gemm_.b, gemm_.c, workspace_.get(), stream);
  }
  nlohmann::json facts(std::size_t c) const {
    return matmuls_[candidates_[c].first].facts(candidates_[c].second);
  }
  bool is_fast(std::size_t c) const {
    return fixed_index_ ? fast_accumulation_param(params_).value_or(false)
                        : candidates_[c].first == 1;
  }

  cuda::DeviceBuffer workspace_;
  Fp8GemmOperands gemm_;
  std::optional<std::size_t> fixed_index_;
  std::optional<cuda::DeviceBuffer> padded_scale_b_;  // B's scales in cuBLAS's layout, if copied
  std::vector<LtMatmul> matmuls_;  // promoting, then (per-tensor) fast accumulation
  std::vector<std::pair<std::size_t, std::size_t>> candidates_;  // (matmul, algorithm index)
  nlohmann::json params_;
  std::vector<double> selection_us_;
  std::vector<std::size_t> ranking_;  // candidates, fastest first; chosen_ is ranking_[rank_]
  std::size_t rank_ = 0;
  std::size_t chosen_ = 0;
  nlohmann::json rejected_ = nlohmann::json::array();  // {"index", "reason"} of wrong ones
};

}  // namespace

std::vector<float> blk128x128_scales(const std::vector<float>& scales, int n_blocks, int k_blocks) {
  const std::size_t stride = static_cast<std::size_t>(cdiv(k_blocks, 4)) * 4;
  if (scales.size() < static_cast<std::size_t>(n_blocks) * k_blocks)
    throw std::invalid_argument(std::string(kWhat) + ": " + std::to_string(scales.size()) +
                                " block scales for " + std::to_string(n_blocks) + "x" +
                                std::to_string(k_blocks) + " blocks");
  std::vector<float> padded(stride * n_blocks, 0.0f);
  for (int row = 0; row < n_blocks; ++row)
    for (int col = 0; col < k_blocks; ++col)
      padded[row * stride + col] = scales[static_cast<std::size_t>(row) * k_blocks + col];
  return padded;
}

std::unique_ptr<Baseline> make_cublaslt_fp8_gemm(const ProblemInstance& problem,
                                                 const ProblemBuffers& buffers,
                                                 WorkerDevice& device) {
  return std::make_unique<CublasLtFp8Gemm>(problem, buffers, device);
}

}  // namespace kt
