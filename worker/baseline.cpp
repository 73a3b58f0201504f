#include "worker/baseline.hpp"

#include <stdexcept>

#include "worker/cublaslt_gemm.hpp"
#include "worker/reference.hpp"

namespace kt {
namespace {

// A family with no in-process baseline: its reference's own-dtype run stands in, named as such.
class ReferenceRun final : public Baseline {
 public:
  ReferenceRun(const ProblemInstance& problem, const ProblemBuffers& buffers, WorkerDevice& device)
      : kind_(problem.reference.kind),
        reference_(make_reference(problem, buffers, device.cublas)) {}

  void launch(CUstream stream) override { reference_->run_native(stream); }
  nlohmann::json describe() const override {
    return {{"kind", kind_}, {"note", "the family's reference, run in the problem's dtype"}};
  }

 private:
  std::string kind_;
  std::unique_ptr<Reference> reference_;
};

}  // namespace

std::unique_ptr<Baseline> make_baseline(const ProblemInstance& problem,
                                        const ProblemBuffers& buffers, WorkerDevice& device) {
  if (!problem.baseline) return std::make_unique<ReferenceRun>(problem, buffers, device);
  if (problem.baseline->kind == "cublaslt_gemm")
    return make_cublaslt_gemm(problem, buffers, device);
  throw std::invalid_argument("baseline kind '" + problem.baseline->kind +
                              "' is not built into this worker");
}

}  // namespace kt
