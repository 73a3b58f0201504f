#include "worker/cuda_buffer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "worker/driver_api.hpp"

namespace kt::cuda {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  KT_CU(cuMemAlloc, &ptr_, std::max<std::size_t>(bytes, 1));
}

DeviceBuffer::~DeviceBuffer() {
  free();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    free();
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::copy_to_host(void* host, std::size_t bytes) const {
  if (bytes > bytes_)
    throw std::out_of_range("copy of " + std::to_string(bytes) + " bytes from a buffer of " +
                            std::to_string(bytes_));
  if (bytes > 0) KT_CU(cuMemcpyDtoH, host, ptr_, bytes);
}

void DeviceBuffer::copy_from_host(const void* host, std::size_t bytes) {
  if (bytes > bytes_)
    throw std::out_of_range("copy of " + std::to_string(bytes) + " bytes into a buffer of " +
                            std::to_string(bytes_));
  if (bytes > 0) KT_CU(cuMemcpyHtoD, ptr_, host, bytes);
}

void DeviceBuffer::fill_bytes(unsigned char value, CUstream stream) {
  if (bytes_ > 0) KT_CU(cuMemsetD8Async, ptr_, value, bytes_, stream);
}

void DeviceBuffer::free() noexcept {
  if (ptr_ == 0) return;
  driver().cuMemFree(ptr_);  // fails harmlessly on a context lost to a sticky error
  ptr_ = 0;
  bytes_ = 0;
}

}  // namespace kt::cuda
