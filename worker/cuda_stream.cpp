#include "worker/cuda_stream.hpp"

#include <utility>

#include "worker/driver_api.hpp"

namespace kt::cuda {

Stream::Stream() {
  KT_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
}

Stream::~Stream() {
  destroy();
}

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::synchronize() const {
  KT_CU(cuStreamSynchronize, stream_);
}

void Stream::destroy() noexcept {
  if (stream_ == nullptr) return;
  driver().cuStreamDestroy(stream_);
  stream_ = nullptr;
}

}  // namespace kt::cuda
