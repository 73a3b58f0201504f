#include "worker/cuda_event.hpp"

#include <utility>

#include "worker/driver_api.hpp"

namespace kt::cuda {

// Blocking sync: the host thread sleeps instead of spinning while it waits for a trial.
Event::Event() {
  KT_CU(cuEventCreate, &event_, CU_EVENT_BLOCKING_SYNC);
}

Event::~Event() {
  destroy();
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(CUstream stream) const {
  KT_CU(cuEventRecord, event_, stream);
}

void Event::synchronize() const {
  KT_CU(cuEventSynchronize, event_);
}

void Event::destroy() noexcept {
  if (event_ == nullptr) return;
  driver().cuEventDestroy(event_);
  event_ = nullptr;
}

float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  KT_CU(cuEventElapsedTime, &ms, start.get(), stop.get());
  return ms;
}

}  // namespace kt::cuda
