// Position in a STAGES-deep shared-memory ring of (full, empty) mbarrier pairs, advanced in step
// by the producer and the consumers: the slot to use next and the parity of the phase to wait for.
#pragma once

namespace kt_pipe {

template <int STAGES>
struct RingCursor {
  static_assert(STAGES >= 1, "a ring has at least one slot");
  int stage = 0;
  unsigned phase = 0;
  // Where a fresh cursor stands after `position` advances.
  static __device__ __forceinline__ RingCursor at(int position) {
    RingCursor cursor;
    cursor.stage = position % STAGES;
    cursor.phase = static_cast<unsigned>(position / STAGES) & 1u;
    return cursor;
  }
  __device__ __forceinline__ void advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1u;
    }
  }
};

}  // namespace kt_pipe
