// The Hopper (sm_90a) warp-specialised producer/consumer skeleton that the TMA + wgmma templates
// share (GEMM, ping-pong GEMM, skinny stream-K GEMM, grouped dual GEMM, attention forward):
//
//   - a STAGES-deep shared-memory ring whose slot s has a "full" mbarrier (the producer's
//     expect_tx arrival plus the copies' bytes) and an "empty" one (every reader finished);
//   - the kernel's start (one thread initialises the barriers, then the block, or the whole
//     cluster when peers multicast into this CTA's ring, synchronises) and its end (no CTA of a
//     cluster leaves while a peer may still arrive on its barriers);
//   - the role split: warpgroup 0 produces (one thread issues the copies, the warpgroup gives its
//     registers to the consumers with setmaxnreg), warpgroups 1.. consume;
//   - the consumer's main loop over ring slots with one wgmma group in flight.
//
// What differs between the templates (operands, tile walk, epilogue) stays in each template.
#pragma once

#include "hopper_primitives.cuh"
#include "pipeline_ring.cuh"

namespace kt_ws {

using kt_pipe::RingCursor;

// The barriers of a ring: slot s's full barrier at full + 8s, its empty barrier at empty + 8s.
template <int STAGES>
struct RingBarriers {
  unsigned full, empty;

  __device__ __forceinline__ unsigned full_at(int stage) const { return full + 8u * stage; }
  __device__ __forceinline__ unsigned empty_at(int stage) const { return empty + 8u * stage; }

  // By one thread before start(): a slot fills with one (expect_tx) arrival and its bytes, and
  // frees after `readers` arrivals.
  __device__ __forceinline__ void init(unsigned readers) const {
    for (int s = 0; s < STAGES; ++s) {
      kt_hopper::mbarrier_init(full_at(s), 1);
      kt_hopper::mbarrier_init(empty_at(s), readers);
    }
  }

  // Producer: waits until the cursor's slot is free (a fresh slot passes at once) and announces
  // `bytes` of copies on its full barrier, which it returns for the copies to complete.
  __device__ __forceinline__ unsigned acquire(const RingCursor<STAGES>& at, unsigned bytes) const {
    kt_hopper::mbarrier_wait(empty_at(at.stage), at.phase ^ 1u);
    kt_hopper::mbarrier_arrive_expect_tx(full_at(at.stage), bytes);
    return full_at(at.stage);
  }

  // Consumer: waits until the cursor's slot holds its bytes.
  __device__ __forceinline__ void wait_full(const RingCursor<STAGES>& at) const {
    kt_hopper::mbarrier_wait(full_at(at.stage), at.phase);
  }

  // Consumer: one arrival per READER_THREADS threads (a warpgroup, or a warp) tells the producer
  // of every CTA of the cluster that may write this CTA's slot (each counts every reader of the
  // cluster) that the slot has been read. Call it from all threads of the reader.
  template <int READER_THREADS, int CLUSTER_SIZE>
  __device__ __forceinline__ void release(int stage) const {
    if (threadIdx.x % READER_THREADS != 0) return;
    if constexpr (CLUSTER_SIZE > 1) {
#pragma unroll
      for (int r = 0; r < CLUSTER_SIZE; ++r) kt_hopper::mbarrier_arrive_cluster(empty_at(stage), r);
    } else {
      kt_hopper::mbarrier_arrive(empty_at(stage));
    }
  }
};

// Thread 0 runs init() (the ring barriers and any other mbarrier) and fences it; then every
// thread of the block, or of the cluster when peers multicast into this CTA's ring and arrive on
// its barriers, waits until all are initialised.
template <int CLUSTER_SIZE, class Init>
__device__ __forceinline__ void start(Init&& init) {
  if (threadIdx.x == 0) {
    init();
    kt_hopper::fence_mbarrier_init();
  }
  if constexpr (CLUSTER_SIZE > 1) {
    kt_hopper::cluster_sync();
  } else {
    __syncthreads();
  }
}

// No CTA of a cluster may leave while a peer can still arrive on its barriers or write its ring.
template <int CLUSTER_SIZE>
__device__ __forceinline__ void finish() {
  if constexpr (CLUSTER_SIZE > 1) kt_hopper::cluster_sync();
}

// Warpgroup 0 produces: it drops to PRODUCER_REGISTERS and its thread 0 runs produce(). The other
// warpgroups raise to CONSUMER_REGISTERS and run consume(c) with c = warpgroup - 1.
template <int PRODUCER_REGISTERS, int CONSUMER_REGISTERS, class Produce, class Consume>
__device__ __forceinline__ void split_roles(Produce&& produce, Consume&& consume) {
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    kt_hopper::setmaxnreg_dec<PRODUCER_REGISTERS>();
    if (threadIdx.x == 0) produce();
  } else {
    kt_hopper::setmaxnreg_inc<CONSUMER_REGISTERS>();
    consume(warpgroup - 1);
  }
}

// Multicast masks of a CLUSTER_M x CLUSTER_N cluster whose CTA rank is rank_m + CLUSTER_M*rank_n:
// the CTAs of one tile row (same rank_m: they share the A tile) and of one tile column (same
// rank_n: they share the B tile).
template <int CLUSTER_M, int CLUSTER_N>
struct ClusterPeers {
  static __device__ __forceinline__ unsigned short row(int rank_m) {
    unsigned mask = 0;
#pragma unroll
    for (int j = 0; j < CLUSTER_N; ++j) mask |= 1u << (rank_m + CLUSTER_M * j);
    return static_cast<unsigned short>(mask);
  }
  static __device__ __forceinline__ unsigned short column(int rank_n) {
    return static_cast<unsigned short>(((1u << CLUSTER_M) - 1u) << (CLUSTER_M * rank_n));
  }
};

// A TMA box load that is multicast to `peers` when the tile is shared across the cluster.
template <bool SHARED>
__device__ __forceinline__ void tma_load_2d(unsigned dst, const KtTensorMap* map, unsigned full,
                                            int c0, int c1, unsigned short peers) {
  if constexpr (SHARED) {
    kt_hopper::tma_load_2d_multicast(dst, map, full, c0, c1, peers);
  } else {
    kt_hopper::tma_load_2d(dst, map, full, c0, c1);
  }
}
template <bool SHARED>
__device__ __forceinline__ void tma_load_3d(unsigned dst, const KtTensorMap* map, unsigned full,
                                            int c0, int c1, int c2, unsigned short peers) {
  if constexpr (SHARED) {
    kt_hopper::tma_load_3d_multicast(dst, map, full, c0, c1, c2, peers);
  } else {
    kt_hopper::tma_load_3d(dst, map, full, c0, c1, c2);
  }
}

// A consumer warpgroup's main loop over `count` ring slots from `cursor` on: waits for each slot,
// issues its wgmmas with issue(stage, first) (first: the loop's first slot, whose first wgmma
// overwrites the accumulators) and commits them as one group; once slot i's group is issued,
// slot i-1's group has completed and that slot is released, so one group stays in flight while
// the next slot's bytes land. Returns the last slot's stage with its group still running (-1 when
// count is 0): the caller waits for it (wgmma_wait<0>) and releases it, after a hand-over to
// another consumer for instance.
template <int CLUSTER_SIZE, int STAGES, class Issue>
__device__ __forceinline__ int wgmma_ring_loop(const RingBarriers<STAGES>& ring,
                                               RingCursor<STAGES>& cursor, int count,
                                               Issue&& issue) {
  int previous_stage = -1;
  for (int i = 0; i < count; ++i) {
    ring.wait_full(cursor);
    kt_hopper::wgmma_fence();
    issue(cursor.stage, i == 0);
    kt_hopper::wgmma_commit();
    if (i > 0) {
      kt_hopper::wgmma_wait<1>();
      ring.template release<128, CLUSTER_SIZE>(previous_stage);
    }
    previous_stage = cursor.stage;
    cursor.advance();
  }
  return previous_stage;
}

}  // namespace kt_ws
