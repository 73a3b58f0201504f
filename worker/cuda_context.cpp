#include "worker/cuda_context.hpp"

#include "worker/driver_api.hpp"

namespace kt::cuda {

PrimaryContext::PrimaryContext(int ordinal) {
  Retained retained;
  KT_CU(cuDeviceGet, &retained.device, ordinal);
  KT_CU(cuDevicePrimaryCtxRetain, &retained.context, retained.device);
  retained_ = UniqueHandle<Retained, Release>(retained);
  make_current();  // on failure the retain is released with retained_
}

void PrimaryContext::make_current() const {
  KT_CU(cuCtxSetCurrent, get());
}

void PrimaryContext::Release::operator()(const Retained& retained) const noexcept {
  // Errors are ignored: after a sticky fault the context is gone and release is all that's left.
  const DriverApi& api = driver();
  api.cuCtxSetCurrent(nullptr);
  api.cuDevicePrimaryCtxRelease(retained.device);
}

}  // namespace kt::cuda
