#include "tuner/measure/kernel_launch.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "tuner/measure/driver_api.hpp"

namespace kt {
namespace {

template <typename Int>
Int integral_scalar(double value, std::size_t index) {
  if (!std::isfinite(value) || value != std::floor(value) ||
      value < static_cast<double>(std::numeric_limits<Int>::min()) ||
      value > static_cast<double>(std::numeric_limits<Int>::max()))
    throw std::invalid_argument("kernel argument " + std::to_string(index) + " = " +
                                std::to_string(value) + " does not fit its integer type");
  return static_cast<Int>(value);
}

template <typename T>
std::array<std::byte, 8> packed(T value) {
  static_assert(sizeof(T) <= 8);
  std::array<std::byte, 8> slot{};
  std::memcpy(slot.data(), &value, sizeof(T));
  return slot;
}

}  // namespace

KernelArguments::KernelArguments(const std::vector<ArgInstance>& args,
                                 const ProblemBuffers& buffers) {
  storage_.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInstance& arg = args[i];
    switch (arg.kind) {
      case ArgInstance::Kind::buffer:
        storage_.push_back(packed<CUdeviceptr>(buffers.buffer(arg.buffer).get()));
        break;
      case ArgInstance::Kind::i32:
        storage_.push_back(packed(integral_scalar<std::int32_t>(arg.value, i)));
        break;
      case ArgInstance::Kind::i64:
        storage_.push_back(packed(integral_scalar<std::int64_t>(arg.value, i)));
        break;
      case ArgInstance::Kind::f32:
        storage_.push_back(packed(static_cast<float>(arg.value)));
        break;
    }
  }
  for (auto& slot : storage_) pointers_.push_back(slot.data());
}

bool uses_clusters(const LaunchDims& launch) {
  return launch.cluster[0] > 1 || launch.cluster[1] > 1 || launch.cluster[2] > 1;
}

void launch_kernel(CUfunction function, const LaunchDims& launch, KernelArguments& args,
                   CUstream stream) {
  CUlaunchConfig config{};
  config.gridDimX = launch.grid[0];
  config.gridDimY = launch.grid[1];
  config.gridDimZ = launch.grid[2];
  config.blockDimX = launch.block[0];
  config.blockDimY = launch.block[1];
  config.blockDimZ = launch.block[2];
  config.sharedMemBytes = launch.dynamic_smem;
  config.hStream = stream;
  CUlaunchAttribute cluster{};
  if (uses_clusters(launch)) {
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = launch.cluster[0];
    cluster.value.clusterDim.y = launch.cluster[1];
    cluster.value.clusterDim.z = launch.cluster[2];
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  KT_CU(cuLaunchKernelEx, &config, function, args.pointers(), nullptr);
}

}  // namespace kt
