// A non-blocking CUDA stream (no implicit sync with the legacy default stream), destroyed with
// the owner.
#pragma once

#include <cuda.h>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class Stream {
 public:
  Stream();

  CUstream get() const { return stream_.get(); }
  // Waits for all work on the stream; a kernel fault surfaces here as CudaError.
  void synchronize() const;

 private:
  struct Destroy {
    void operator()(CUstream stream) const noexcept;
  };
  UniqueHandle<CUstream, Destroy> stream_;
};

}  // namespace kt::cuda
