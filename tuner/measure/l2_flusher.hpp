// Evicts the kernel's data from L2 before a timed trial by writing a buffer twice the L2 size,
// so every trial starts cold, as a kernel in a real model does after its neighbours ran.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "tuner/measure/cuda_buffer.hpp"

namespace kt::cuda {

class L2Flusher {
 public:
  explicit L2Flusher(std::int64_t l2_bytes);
  // Enqueues the flush (cuMemsetD32Async over the whole buffer) on stream.
  void flush(CUstream stream);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  unsigned value_ = 0;
};

}  // namespace kt::cuda
