// Position in a STAGES-deep shared-memory ring of (full, empty) mbarrier pairs, advanced in step
// by the producer and the consumers: the slot to use next and the parity of the phase to wait for.
#pragma once

namespace kt_pipe {

template <int STAGES>
struct RingCursor {
  static_assert(STAGES >= 1, "a ring has at least one slot");
  int stage = 0;
  unsigned phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

}  // namespace kt_pipe
