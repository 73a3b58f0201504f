// Device memory (cuMemAlloc), freed with the owner.
#pragma once

#include <cuda.h>

#include <cstddef>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // A zero-byte request still allocates one byte, so every buffer has a valid address.
  explicit DeviceBuffer(std::size_t bytes);

  CUdeviceptr get() const { return allocation_.get().ptr; }
  std::size_t bytes() const { return allocation_.get().bytes; }

  void copy_to_host(void* host, std::size_t bytes) const;
  void copy_from_host(const void* host, std::size_t bytes);
  // Enqueues cuMemsetD8Async over the whole buffer on stream. (The synchronous cuMemsetD8 would
  // run on the legacy stream, unordered with our non-blocking stream.)
  void fill_bytes(unsigned char value, CUstream stream);

 private:
  struct Allocation {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;  // as asked for
    bool operator==(const Allocation&) const = default;
  };
  struct Free {
    void operator()(const Allocation& allocation) const noexcept;
  };
  UniqueHandle<Allocation, Free> allocation_;
};

}  // namespace kt::cuda
