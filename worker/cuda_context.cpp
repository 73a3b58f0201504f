#include "worker/cuda_context.hpp"

#include <utility>

#include "worker/driver_api.hpp"

namespace kt::cuda {

PrimaryContext::PrimaryContext(int ordinal) {
  KT_CU(cuDeviceGet, &device_, ordinal);
  KT_CU(cuDevicePrimaryCtxRetain, &context_, device_);
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

PrimaryContext::~PrimaryContext() {
  release();
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : device_(other.device_), context_(std::exchange(other.context_, nullptr)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void PrimaryContext::make_current() const {
  KT_CU(cuCtxSetCurrent, context_);
}

void PrimaryContext::release() noexcept {
  if (context_ == nullptr) return;
  // Errors are ignored: after a sticky fault the context is gone and release is all that's left.
  const DriverApi& api = driver();
  api.cuCtxSetCurrent(nullptr);
  api.cuDevicePrimaryCtxRelease(device_);
  context_ = nullptr;
}

}  // namespace kt::cuda
