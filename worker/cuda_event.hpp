// A CUDA event with timing enabled, destroyed with the owner.
#pragma once

#include <cuda.h>

namespace kt::cuda {

class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  CUevent get() const { return event_; }
  void record(CUstream stream) const;
  void synchronize() const;

 private:
  void destroy() noexcept;
  CUevent event_ = nullptr;
};

// Milliseconds between two recorded, completed events (cuEventElapsedTime, ~0.5 us resolution).
float elapsed_ms(const Event& start, const Event& stop);

}  // namespace kt::cuda
