#include "worker/cuda_stream.hpp"

#include "worker/driver_api.hpp"

namespace kt::cuda {

Stream::Stream() {
  CUstream stream = nullptr;
  KT_CU(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  stream_ = UniqueHandle<CUstream, Destroy>(stream);
}

void Stream::synchronize() const {
  KT_CU(cuStreamSynchronize, get());
}

void Stream::Destroy::operator()(CUstream stream) const noexcept {
  driver().cuStreamDestroy(stream);
}

}  // namespace kt::cuda
