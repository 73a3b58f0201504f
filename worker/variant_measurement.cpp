#include "worker/variant_measurement.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "worker/cuda_module.hpp"
#include "worker/driver_api.hpp"
#include "worker/kernel_launch.hpp"
#include "worker/output_check.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"
#include "worker/timing.hpp"
#include "worker/validator.hpp"

namespace kt {
namespace {

// The first gate that failed; thrown inside the steps and turned into the result at the top.
struct GateFailure {
  VariantStatus status;
  std::string gate;
  std::string reason;
  std::optional<ErrorSummary> error;
};

// One instance's device state, kept from the check to timing and the repeat check.
struct Instance {
  const ProblemInstance& problem;
  ProblemBuffers buffers;
  KernelArguments args;
  std::unique_ptr<Reference> reference;
  std::optional<ReferenceResults> computed;  // the fp32 reference output (and magnitude)

  Instance(const ProblemInstance& p, cuda::CublasHandle& cublas,
           const cuda::SupportKernels& support)
      : problem(p),
        buffers(p.buffers),
        args(p.args, buffers),
        reference(make_reference(p, buffers, cublas, support)) {}
};

class VariantGates {
 public:
  VariantGates(WorkerDevice& device, const MeasureRequest& request, const NoticeFn& notice)
      : device_(device), request_(request), notice_(notice) {
    result_.variant_id = request.variant_id;
  }

  MeasureOutcome run() {
    try {
      load();
      check_resources();
      if (request_.smoke) check_instance(*request_.smoke, "smoke", request_.seed ^ 0x5EEDull);
      std::unique_ptr<Instance> full = check_instance(request_.full, "full", request_.seed);
      if (request_.time) {
        time(*full);
        check_repeat(*full);
      }
      result_.status = VariantStatus::measured;
    } catch (const GateFailure& failure) {
      result_.status = failure.status;
      result_.failed_gate = failure.gate;
      result_.reason = failure.reason;
      if (failure.error) result_.error = failure.error;
    }
    return {result_, context_lost_};
  }

 private:
  // Runs one step; a CUDA error in it becomes the gate's failure.
  template <typename Step>
  auto gate(const std::string& name, Step&& step) -> decltype(step()) {
    try {
      return step();
    } catch (const cuda::CudaError& e) {
      throw failure_of(name, e.code(), e.what());
    } catch (const cuda::CublasError& e) {
      // cuBLAS hides the CUDA error: ask the stream whether the context survived.
      const CUresult state = cuda::driver().cuStreamSynchronize(device_.stream.get());
      if (cuda::is_context_lost(state))
        throw failure_of(name, state, std::string(e.what()) + " after " + cuda::error_name(state));
      throw std::runtime_error(std::string("the reference failed: ") + e.what());
    }
  }

  GateFailure failure_of(const std::string& gate, CUresult code, const std::string& what) {
    if (cuda::is_context_lost(code)) {
      context_lost_ = true;
      const std::string reason = "sticky CUDA error at gate " + gate + ": " + what;
      notice_({{"notice", "illegal_access"}, {"reason", reason}});  // before anything can crash
      return {VariantStatus::illegal_access, gate, reason, std::nullopt};
    }
    const bool resources =
        code == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES || code == CUDA_ERROR_OUT_OF_MEMORY;
    return {resources ? VariantStatus::resource_exceeded : VariantStatus::launch_failed, gate, what,
            std::nullopt};
  }

  void load() {
    std::vector<char> image;
    try {
      image = cuda::read_binary_file(request_.cubin_path);
    } catch (const std::exception& e) {
      throw GateFailure{VariantStatus::launch_failed, "load", e.what(), std::nullopt};
    }
    gate("load", [&] {
      module_.emplace(image);
      function_ = module_->function(request_.kernel);
    });
  }

  int function_attribute(CUfunction_attribute which) {
    int value = 0;
    KT_CU(cuFuncGetAttribute, &value, which, function_);
    return value;
  }

  void check_resources() {
    gate("resources", [&] {
      result_.registers = function_attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
      result_.static_smem_bytes = function_attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
      const int max_threads = function_attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
      std::uint32_t dynamic_smem = request_.full.launch.dynamic_smem;
      if (request_.smoke)
        dynamic_smem = std::max(dynamic_smem, request_.smoke->launch.dynamic_smem);
      const std::int64_t smem = std::int64_t{result_.static_smem_bytes} + dynamic_smem;
      if (smem > device_.info.smem_per_block_optin)
        throw GateFailure{VariantStatus::resource_exceeded, "resources",
                          fmt::format("needs {} bytes of shared memory per block ({} static + {} "
                                      "dynamic); the device allows {}",
                                      smem, result_.static_smem_bytes, dynamic_smem,
                                      device_.info.smem_per_block_optin),
                          std::nullopt};
      for (const ProblemInstance* p :
           {&request_.full, request_.smoke ? &*request_.smoke : nullptr}) {
        if (p == nullptr) continue;
        const auto& b = p->launch.block;
        const std::int64_t threads = std::int64_t{b[0]} * b[1] * b[2];
        if (threads > max_threads)
          throw GateFailure{VariantStatus::resource_exceeded, "resources",
                            fmt::format("block of {} threads; with {} registers per thread the "
                                        "kernel allows at most {}",
                                        threads, result_.registers, max_threads),
                            std::nullopt};
      }
      KT_CU(cuFuncSetAttribute, function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(dynamic_smem));
      const auto& c = request_.full.launch.cluster;
      if (std::int64_t{c[0]} * c[1] * c[2] > 8)  // beyond the portable cluster size
        KT_CU(cuFuncSetAttribute, function_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
              1);
    });
  }

  void launch_and_wait(Instance& instance) {
    launch_kernel(function_, instance.problem.launch, instance.args, device_.stream.get());
    device_.stream.synchronize();
  }

  // Element by element against the fp32 reference (with the magnitude term, when the tolerance
  // has one), and the guards around every output.
  ErrorSummary validate(Instance& instance) {
    return check_output(instance.buffers, *instance.reference, *instance.computed,
                        request_.tolerance);
  }

  std::unique_ptr<Instance> check_instance(const ProblemInstance& problem, const std::string& name,
                                           std::uint64_t seed) {
    auto instance = gate(name, [&] {
      auto created = std::make_unique<Instance>(problem, device_.cublas, device_.support);
      created->buffers.prepare(device_.support, seed, device_.stream.get());
      return created;
    });
    gate(name, [&] { launch_and_wait(*instance); });
    gate(name, [&] {
      instance->computed =
          compute_reference(*instance->reference, request_.tolerance, device_.stream.get());
    });
    const ErrorSummary error = gate(name, [&] { return validate(*instance); });
    result_.error = error;
    if (!passes(error))
      throw GateFailure{VariantStatus::wrong_result, name, describe(error), error};
    return instance;
  }

  void time(Instance& instance) {
    gate("timing", [&] {
      TimingPipeline pipeline(device_.stream.get(), &device_.flusher, device_.clocks.get());
      result_.timing = pipeline.run(
          [&](CUstream stream) {
            launch_kernel(function_, instance.problem.launch, instance.args, stream);
          },
          request_.timing);
    });
  }

  void check_repeat(Instance& instance) {
    // The timed runs wrote the same outputs many times over: their guards first.
    const std::string timed_damage = gate("repeat", [&] {
      device_.stream.synchronize();
      return guard_damage(instance.buffers);
    });
    if (!timed_damage.empty()) {
      result_.timing.reset();
      const std::string reason = "during the timed runs: " + timed_damage;
      std::optional<ErrorSummary> error = result_.error;  // the full check's, plus the damage
      if (error) error->guard_damage = reason;
      throw GateFailure{VariantStatus::wrong_result, "repeat", reason, error};
    }
    const ErrorSummary error = gate("repeat", [&] {
      instance.buffers.poison_outputs(device_.stream.get());
      launch_and_wait(instance);
      return validate(instance);
    });
    if (!passes(error)) {
      result_.timing.reset();
      throw GateFailure{VariantStatus::wrong_result, "repeat",
                        "correct on the first run, wrong after repeated runs (state left "
                        "behind in scratch?): " +
                            describe(error),
                        error};
    }
  }

  WorkerDevice& device_;
  const MeasureRequest& request_;
  const NoticeFn& notice_;
  MeasureResult result_;
  bool context_lost_ = false;
  std::optional<cuda::Module> module_;
  CUfunction function_ = nullptr;
};

}  // namespace

MeasureOutcome measure_variant(WorkerDevice& device, const MeasureRequest& request,
                               const NoticeFn& notice) {
  return VariantGates(device, request, notice).run();
}

}  // namespace kt
