// Everything a worker holds for its GPU, created once when the worker starts serving: the primary
// context (current on the serving thread), a stream, the support kernels compiled for the
// device's arch, a cuBLAS handle, the L2 flush buffer and, when NVML is there, its clock reader.
#pragma once

#include <memory>
#include <string>

#include "tuner/device_limits.hpp"
#include "worker/cublas_handle.hpp"
#include "worker/cuda_context.hpp"
#include "worker/cuda_stream.hpp"
#include "worker/l2_flusher.hpp"
#include "worker/nvml_clock_reader.hpp"
#include "worker/support_kernels.hpp"

namespace kt {

struct WorkerDevice {
  // Throws DriverUnavailable / CudaError / CublasError / std::runtime_error (NVRTC).
  explicit WorkerDevice(int ordinal);
  WorkerDevice(const WorkerDevice&) = delete;
  WorkerDevice& operator=(const WorkerDevice&) = delete;

  DeviceInfo info;  // declared first: the members below need the context only
  cuda::PrimaryContext context;
  cuda::Stream stream;
  cuda::SupportKernels support;
  cuda::CublasHandle cublas;
  cuda::L2Flusher flusher;
  std::string clocks_unavailable;           // why clocks is null
  std::unique_ptr<NvmlClockReader> clocks;  // null without NVML: timing goes on unchecked
};

}  // namespace kt
