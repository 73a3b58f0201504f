// Evicts the kernel's data from L2 before a timed trial by streaming a buffer twice the L2 size
// through it, so every trial starts cold, as a kernel in a real model does after its neighbours
// ran. With the support kernels it READS the buffer: L2 is left holding clean lines, so the timed
// kernel pays no write-back of the flush's own data (a memset flush left ~50 MB dirty on an H100,
// which cost a memory-bound 58 MB GEMV about 7 us of its ~30). Without them it memsets.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "worker/cuda_buffer.hpp"
#include "worker/support_kernels.hpp"

namespace kt::cuda {

class L2Flusher {
 public:
  // reader: the support kernels used for a read flush; nullptr flushes with a memset.
  explicit L2Flusher(std::int64_t l2_bytes, const SupportKernels* reader = nullptr);
  // Enqueues the flush on stream.
  void flush(CUstream stream);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  DeviceBuffer sink_;
  const SupportKernels* reader_;
  unsigned value_ = 0;
};

}  // namespace kt::cuda
