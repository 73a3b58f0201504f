#include "worker/baseline.hpp"

#include <stdexcept>

#include "worker/cublaslt_fp8_gemm.hpp"
#include "worker/cublaslt_gemm.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/reference.hpp"
#include "worker/unfused_dual_gemm.hpp"

namespace kt {
namespace {

// A family with no in-process baseline: its reference's own-dtype run stands in, named as such.
// A kernel reference has no such run: its fp32 run is timed instead, for the hang watchdog only
// (the daemon never turns it into a speedup).
class ReferenceRun final : public Baseline {
 public:
  ReferenceRun(const ProblemInstance& problem, const ProblemBuffers& buffers, WorkerDevice& device)
      : kind_(problem.reference.kind),
        reference_(make_reference(problem, buffers, device.cublas, device.support)) {
    if (kind_ == "kernel")
      scratch_ = cuda::DeviceBuffer(static_cast<std::size_t>(reference_->output_elements()) *
                                    sizeof(float));
  }

  void launch(CUstream stream) override {
    if (kind_ == "kernel")
      reference_->compute_f32(scratch_.get(), stream);
    else
      reference_->run_native(stream);
  }
  nlohmann::json describe() const override {
    if (kind_ == "kernel")
      return {{"kind", "reference_kernel"},
              {"note",
               "the family's fp32 reference kernel: its time sets the hang watchdog, never a "
               "speedup"}};
    return {{"kind", kind_}, {"note", "the family's reference, run in the problem's dtype"}};
  }

 private:
  std::string kind_;
  std::unique_ptr<Reference> reference_;
  cuda::DeviceBuffer scratch_;
};

}  // namespace

std::unique_ptr<Baseline> make_baseline(const ProblemInstance& problem,
                                        const ProblemBuffers& buffers, WorkerDevice& device) {
  if (!problem.baseline) return std::make_unique<ReferenceRun>(problem, buffers, device);
  if (problem.baseline->kind == "cublaslt_gemm")
    return make_cublaslt_gemm(problem, buffers, device);
  if (problem.baseline->kind == "cublaslt_fp8_gemm")
    return make_cublaslt_fp8_gemm(problem, buffers, device);
  if (problem.baseline->kind == "unfused_dual_gemm_silu")
    return make_unfused_dual_gemm(problem, buffers, device);
  throw std::invalid_argument("baseline kind '" + problem.baseline->kind +
                              "' is not built into this worker");
}

}  // namespace kt
