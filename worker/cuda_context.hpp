// The device's primary context, retained for the owner's lifetime and made current on the
// creating thread. The primary context is the one the CUDA runtime uses, so cuBLAS (runtime API
// underneath) works on the same context as our driver-API modules and buffers.
#pragma once

#include <cuda.h>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class PrimaryContext {
 public:
  explicit PrimaryContext(int ordinal);

  // Makes the context current on the calling thread.
  void make_current() const;
  CUcontext get() const { return retained_.get().context; }
  CUdevice device() const { return retained_.get().device; }

 private:
  // A retain of the device's primary context; released with the device it was taken on.
  struct Retained {
    CUdevice device = 0;
    CUcontext context = nullptr;
    bool operator==(const Retained&) const = default;
  };
  struct Release {
    void operator()(const Retained& retained) const noexcept;
  };
  UniqueHandle<Retained, Release> retained_;
};

}  // namespace kt::cuda
