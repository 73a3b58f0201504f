// A variant's kernel launch: its arguments packed from the problem instance (buffer addresses and
// scalars in manifest order) and cuLaunchKernelEx with the cluster dimension attribute when the
// variant uses thread-block clusters.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <vector>

#include "tuner/measure/problem_buffers.hpp"
#include "tuner/measure/protocol.hpp"

namespace kt {

class KernelArguments {
 public:
  // Throws std::invalid_argument for an unknown buffer or a scalar out of its type's range.
  KernelArguments(const std::vector<ArgInstance>& args, const ProblemBuffers& buffers);
  KernelArguments(const KernelArguments&) = delete;
  KernelArguments& operator=(const KernelArguments&) = delete;
  // cuLaunchKernel's kernelParams: one pointer per argument, into this object.
  void** pointers() { return pointers_.data(); }

 private:
  std::vector<std::array<std::byte, 8>> storage_;  // every kernel argument fits in 8 bytes
  std::vector<void*> pointers_;
};

bool uses_clusters(const LaunchDims& launch);

// Enqueues the launch; throws CudaError if the driver refuses it.
void launch_kernel(CUfunction function, const LaunchDims& launch, KernelArguments& args,
                   CUstream stream);

}  // namespace kt
