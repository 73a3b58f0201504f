#include "worker/cuda_event.hpp"

#include "worker/driver_api.hpp"

namespace kt::cuda {

// Blocking sync: the host thread sleeps instead of spinning while it waits for a trial.
Event::Event() {
  CUevent event = nullptr;
  KT_CU(cuEventCreate, &event, CU_EVENT_BLOCKING_SYNC);
  event_ = UniqueHandle<CUevent, Destroy>(event);
}

void Event::record(CUstream stream) const {
  KT_CU(cuEventRecord, get(), stream);
}

void Event::synchronize() const {
  KT_CU(cuEventSynchronize, get());
}

void Event::Destroy::operator()(CUevent event) const noexcept {
  driver().cuEventDestroy(event);
}

float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  KT_CU(cuEventElapsedTime, &ms, start.get(), stop.get());
  return ms;
}

}  // namespace kt::cuda
