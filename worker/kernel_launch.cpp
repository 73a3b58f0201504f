#include "worker/kernel_launch.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "worker/driver_api.hpp"

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

CUtensorMapDataType tensor_map_type(const std::string& dtype) {
  if (dtype == "bf16") return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (dtype == "fp16") return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  if (dtype == "f32") return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if (dtype == "i32") return CU_TENSOR_MAP_DATA_TYPE_INT32;
  if (dtype == "u32") return CU_TENSOR_MAP_DATA_TYPE_UINT32;
  // The copy engine only moves bytes: fp8, ue4m3 factors and packed e2m1 pairs travel as bytes
  // (zero fill is their zero too).
  if (dtype == "e4m3" || dtype == "e5m2" || dtype == "ue4m3" || dtype == "e2m1x2")
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  throw std::invalid_argument("no tensor map element type for dtype '" + dtype + "'");
}

CUtensorMapSwizzle tensor_map_swizzle(std::uint32_t bytes) {
  switch (bytes) {
    case 0:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  throw std::invalid_argument("tensor map swizzle " + std::to_string(bytes) +
                              " is not 0, 32, 64 or 128 bytes");
}

// A dense row-major view of the buffer, innermost dimension first; out-of-bounds boxes read as
// zero, which is what lets a TMA kernel run ragged K without a tail loop.
CUtensorMap encode_tensor_map(const ArgInstance& arg, const ProblemBuffers& buffers) {
  const BufferInstance& spec = buffers.spec(arg.buffer);
  const auto elem_bytes = static_cast<int>(buffer_element_bytes(spec.dtype));
  const auto rank = static_cast<cuuint32_t>(arg.dims.size());
  if (rank == 0 || rank > 5 || arg.box.size() != arg.dims.size())
    throw std::invalid_argument("tensor map over " + arg.buffer +
                                " needs 1 to 5 dims and one box entry per dim");
  std::array<cuuint64_t, 5> extents{};
  std::array<cuuint64_t, 4> strides{};  // bytes, for dims 1..rank-1
  std::array<cuuint32_t, 5> box{};
  std::array<cuuint32_t, 5> element_strides{1, 1, 1, 1, 1};
  cuuint64_t stride = static_cast<cuuint64_t>(elem_bytes);
  for (cuuint32_t d = 0; d < rank; ++d) {
    if (arg.dims[d] <= 0)
      throw std::invalid_argument("tensor map over " + arg.buffer + " has a non-positive extent");
    extents[d] = static_cast<cuuint64_t>(arg.dims[d]);
    box[d] = arg.box[d];
    if (d > 0) strides[d - 1] = stride;
    stride *= extents[d];
  }
  CUtensorMap map{};
  KT_CU(cuTensorMapEncodeTiled, &map, tensor_map_type(spec.dtype), rank,
        reinterpret_cast<void*>(buffers.pointer(arg.buffer)), extents.data(), strides.data(),
        box.data(), element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
        tensor_map_swizzle(arg.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return map;
}

}  // namespace

KernelArguments::KernelArguments(const std::vector<ArgInstance>& args,
                                 const ProblemBuffers& buffers) {
  storage_.resize(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgInstance& arg = args[i];
    auto store = [&](const auto& value) {
      static_assert(sizeof(value) <= sizeof(Slot::bytes));
      std::memcpy(storage_[i].bytes.data(), &value, sizeof(value));
    };
    switch (arg.kind) {
      case ArgInstance::Kind::buffer:
        store(buffers.pointer(arg.buffer));
        break;
      case ArgInstance::Kind::i32:
        store(integral_scalar<std::int32_t>(arg.value, i));
        break;
      case ArgInstance::Kind::i64:
        store(integral_scalar<std::int64_t>(arg.value, i));
        break;
      case ArgInstance::Kind::f32:
        store(static_cast<float>(arg.value));
        break;
      case ArgInstance::Kind::tensor_map:
        store(encode_tensor_map(arg, buffers));
        break;
    }
  }
  for (auto& slot : storage_) pointers_.push_back(slot.bytes.data());
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
