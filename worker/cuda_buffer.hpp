// Device memory (cuMemAlloc), freed with the owner.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace kt::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // A zero-byte request still allocates one byte, so every buffer has a valid address.
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

  void copy_to_host(void* host, std::size_t bytes) const;
  void copy_from_host(const void* host, std::size_t bytes);
  // Enqueues cuMemsetD8Async over the whole buffer on stream. (The synchronous cuMemsetD8 would
  // run on the legacy stream, unordered with our non-blocking stream.)
  void fill_bytes(unsigned char value, CUstream stream);

 private:
  void free() noexcept;
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace kt::cuda
