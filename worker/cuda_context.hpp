// The device's primary context, retained for the owner's lifetime and made current on the
// creating thread. The primary context is the one the CUDA runtime uses, so cuBLAS (runtime API
// underneath) works on the same context as our driver-API modules and buffers.
#pragma once

#include <cuda.h>

namespace kt::cuda {

class PrimaryContext {
 public:
  explicit PrimaryContext(int ordinal);
  ~PrimaryContext();
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  // Makes the context current on the calling thread.
  void make_current() const;
  CUcontext get() const { return context_; }
  CUdevice device() const { return device_; }

 private:
  void release() noexcept;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

}  // namespace kt::cuda
