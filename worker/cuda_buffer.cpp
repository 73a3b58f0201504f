#include "worker/cuda_buffer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "worker/driver_api.hpp"

namespace kt::cuda {

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  Allocation allocation{0, bytes};
  KT_CU(cuMemAlloc, &allocation.ptr, std::max<std::size_t>(bytes, 1));
  allocation_ = UniqueHandle<Allocation, Free>(allocation);
}

void DeviceBuffer::copy_to_host(void* host, std::size_t bytes) const {
  if (bytes > this->bytes())
    throw std::out_of_range("copy of " + std::to_string(bytes) + " bytes from a buffer of " +
                            std::to_string(this->bytes()));
  if (bytes > 0) KT_CU(cuMemcpyDtoH, host, get(), bytes);
}

void DeviceBuffer::copy_from_host(const void* host, std::size_t bytes) {
  if (bytes > this->bytes())
    throw std::out_of_range("copy of " + std::to_string(bytes) + " bytes into a buffer of " +
                            std::to_string(this->bytes()));
  if (bytes > 0) KT_CU(cuMemcpyHtoD, get(), host, bytes);
}

void DeviceBuffer::fill_bytes(unsigned char value, CUstream stream) {
  if (bytes() > 0) KT_CU(cuMemsetD8Async, get(), value, bytes(), stream);
}

void DeviceBuffer::Free::operator()(const Allocation& allocation) const noexcept {
  driver().cuMemFree(allocation.ptr);  // fails harmlessly on a context lost to a sticky error
}

}  // namespace kt::cuda
