// A CUDA event with timing enabled, destroyed with the owner.
#pragma once

#include <cuda.h>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class Event {
 public:
  Event();

  CUevent get() const { return event_.get(); }
  void record(CUstream stream) const;
  void synchronize() const;

 private:
  struct Destroy {
    void operator()(CUevent event) const noexcept;
  };
  UniqueHandle<CUevent, Destroy> event_;
};

// Milliseconds between two recorded, completed events (cuEventElapsedTime, ~0.5 us resolution).
float elapsed_ms(const Event& start, const Event& stop);

}  // namespace kt::cuda
