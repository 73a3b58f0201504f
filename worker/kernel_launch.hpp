// A variant's kernel launch: its arguments packed from the problem instance (buffer addresses and
// scalars in manifest order, TMA tensor maps encoded over buffers) and cuLaunchKernelEx with the
// cluster dimension attribute when the variant uses thread-block clusters.
#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <vector>

#include "tuner/measure_protocol.hpp"
#include "worker/problem_buffers.hpp"

namespace kt {

class KernelArguments {
 public:
  // Throws std::invalid_argument for an unknown buffer or a scalar out of its type's range, and
  // CudaError when the driver refuses a tensor map (alignment, stride or box limits).
  KernelArguments(const std::vector<ArgInstance>& args, const ProblemBuffers& buffers);
  KernelArguments(const KernelArguments&) = delete;
  KernelArguments& operator=(const KernelArguments&) = delete;
  // cuLaunchKernel's kernelParams: one pointer per argument, into this object.
  void** pointers() { return pointers_.data(); }

 private:
  // One slot per argument: 8 bytes for pointers and scalars, 128 for a CUtensorMap, which the
  // kernel takes by value (__grid_constant__) and which must be 64-byte aligned.
  struct alignas(64) Slot {
    std::array<std::byte, sizeof(CUtensorMap)> bytes{};
  };
  std::vector<Slot> storage_;
  std::vector<void*> pointers_;
};

bool uses_clusters(const LaunchDims& launch);

// Enqueues the launch; throws CudaError if the driver refuses it.
void launch_kernel(CUfunction function, const LaunchDims& launch, KernelArguments& args,
                   CUstream stream);

}  // namespace kt
