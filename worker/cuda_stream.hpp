// A non-blocking CUDA stream (no implicit sync with the legacy default stream), destroyed with
// the owner.
#pragma once

#include <cuda.h>

namespace kt::cuda {

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream get() const { return stream_; }
  // Waits for all work on the stream; a kernel fault surfaces here as CudaError.
  void synchronize() const;

 private:
  void destroy() noexcept;
  CUstream stream_ = nullptr;
};

}  // namespace kt::cuda
