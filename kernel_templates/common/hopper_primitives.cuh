// Hopper (sm_90) building blocks as inline PTX, so templates compile with NVRTC and no host
// header: mbarriers, proxy fences, TMA tensor loads (2D/3D, plain and cluster multicast) and
// stores, tensor-map prefetch, named barriers, GPU-scope flags, thread-block-cluster
// rank/barrier/remote addresses (all valid on sm_100 too), stmatrix, the wgmma matrix
// descriptors, and for sm_90a only wgmma fence/commit/wait, the accumulator fence and setmaxnreg
// (the mma instructions themselves are in hopper_wgmma_ops.cuh). Shared-memory operands are
// 32-bit shared-state-space addresses.
#pragma once

// A CUtensorMap as the worker passes it: 128 opaque bytes, by value. Declare the kernel parameter
// `const __grid_constant__ KtTensorMap name` and hand `&name` to the TMA helpers below.
struct alignas(64) KtTensorMap {
  unsigned long long opaque[16];
};

namespace kt_hopper {

// 32-bit shared-state-space address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* pointer) {
  unsigned address;
  asm("{ .reg .u64 generic;\n"
      "  cvta.to.shared.u64 generic, %1;\n"
      "  cvt.u32.u64 %0, generic; }\n"
      : "=r"(address)
      : "l"(pointer));
  return address;
}

// ---- mbarrier --------------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes barrier initialisation visible to the async proxy (TMA) and to the other CTAs of the
// cluster; follow it with a CTA or cluster barrier before anyone uses the mbarriers.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
  asm volatile(
      "{ .reg .b64 state;\n"
      "  mbarrier.arrive.shared::cta.b64 state, [%0]; }\n" ::"r"(bar)
      : "memory");
}

// One arrival that also announces `bytes` of asynchronous (TMA) transactions for this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile(
      "{ .reg .b64 state;\n"
      "  mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }\n" ::"r"(bar),
      "r"(bytes)
      : "memory");
}

// Arrives on the barrier at the same shared offset in CTA `cta_rank` of this cluster (the own
// CTA included). Default (CTA-scope) release: enough to hand a slot whose reads were wgmma or
// TMA (async proxy, already waited for) back to a producer; a cluster-scope release would put a
// MEMBAR.ALL.GPU before every arrival, which halved the GEMM's throughput.
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned bar, unsigned cta_rank) {
  asm volatile(
      "{ .reg .b32 remote;\n"
      "  mapa.shared::cluster.u32 remote, %0, %1;\n"
      "  mbarrier.arrive.shared::cluster.b64 _, [remote]; }\n" ::"r"(bar),
      "r"(cta_rank)
      : "memory");
}

// True once the phase with the given parity has completed (parity 1 of a fresh barrier counts
// as completed, which is what lets a producer pass its first wait on an empty slot).
__device__ __forceinline__ bool mbarrier_try_wait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{ .reg .pred p;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p; }\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// ---- fences ----------------------------------------------------------------------------------

// Orders this thread's ordinary shared-memory accesses before later async-proxy ones (TMA store
// reading data written by st.shared, or wgmma reading it).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ---- TMA (cp.async.bulk.tensor) --------------------------------------------------------------

__device__ __forceinline__ void prefetch_tensormap(const KtTensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(map) : "memory");
}

// Box at coordinates (c0 innermost, c1) of `map` -> shared `dst`; completes `bytes` = the whole
// box (out-of-bounds elements arrive as zeros and count too) on the mbarrier `bar`.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const KtTensorMap* map, unsigned bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

// The same box written to `dst` and completed on `bar` in every CTA of the cluster whose rank
// bit is set in `cta_mask` (same shared offsets in each).
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const KtTensorMap* map,
                                                      unsigned bar, int c0, int c1,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}

// 3D box (c0 innermost), for views such as [batch][rows][K].
__device__ __forceinline__ void tma_load_3d(unsigned dst, const KtTensorMap* map, unsigned bar,
                                            int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// The 3D box written to `dst` and completed on `bar` in every CTA of `cta_mask` (see the 2D one).
__device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const KtTensorMap* map,
                                                      unsigned bar, int c0, int c1, int c2,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
      : "memory");
}

// TMA store of a 2D box from shared `src` (laid out as the map's box and swizzle) to coordinates
// (c0 innermost, c1); elements outside the tensor are not written. Tracked by bulk groups.
__device__ __forceinline__ void tma_store_2d(const KtTensorMap* map, unsigned src, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(map),
      "r"(src), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most kPending bulk groups still read their shared-memory source (the buffer
// may then be overwritten; the global writes may still be in flight).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// Waits until at most kPending bulk groups are incomplete (their global writes done).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ---- global-memory flags between CTAs ----------------------------------------------------------

// Acquire load at GPU scope: what the releasing CTA wrote before its release is visible after.
__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* flag) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// Release increment at GPU scope: this thread's earlier writes (and those it observed, e.g.
// through a barrier after their __threadfence) are visible to an acquirer that sees the count.
__device__ __forceinline__ void red_release_gpu_add(unsigned* flag, unsigned value) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

// ---- thread-block clusters -------------------------------------------------------------------

__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ unsigned cluster_nctarank() {
  unsigned count;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(count));
  return count;
}

// Every thread of every CTA in the cluster arrives (release) and then waits (acquire).
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

// Shared address of the same offset in CTA `cta_rank` of the cluster (for ld/st.shared::cluster).
__device__ __forceinline__ unsigned map_shared_rank(unsigned address, unsigned cta_rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(address), "r"(cta_rank));
  return remote;
}

// ---- wgmma support (sm_90a) ------------------------------------------------------------------

// Shared-memory matrix descriptor of a K-major operand tile whose rows are `row_bytes` apart in
// 8-row core-matrix groups `group_bytes` apart, with the swizzle the TMA wrote (0 none, 1 128B,
// 2 64B, 3 32B). For swizzled K-major tiles the leading offset is unused (1 by convention); the
// tile base must be aligned to the swizzle repeat (1024 bytes for 128B) so base_offset is 0.
// Advancing K inside the swizzle atom is done by adding bytes>>4 to the start address field.
__device__ __forceinline__ unsigned long long wgmma_descriptor(unsigned smem_address,
                                                               unsigned group_bytes,
                                                               unsigned swizzle_mode,
                                                               unsigned leading_bytes = 16) {
  unsigned long long desc = 0;
  desc |= static_cast<unsigned long long>((smem_address & 0x3FFFF) >> 4);
  desc |= static_cast<unsigned long long>((leading_bytes & 0x3FFFF) >> 4) << 16;  // leading
  desc |= static_cast<unsigned long long>((group_bytes & 0x3FFFF) >> 4) << 32;    // stride
  desc |= static_cast<unsigned long long>(swizzle_mode & 3) << 62;
  return desc;
}

// K-major tile of 64 16-bit elements per row (128-byte rows) written by TMA with 128B swizzle.
__device__ __forceinline__ unsigned long long wgmma_descriptor_sw128(unsigned smem_address) {
  return wgmma_descriptor(smem_address, 8 * 128, 1);
}

// Four 8x8 matrices of 16-bit values to shared memory, the inverse of ldmatrix: lanes 8i..8i+7
// give the row addresses (16 bytes each) of matrix i, and register i of every lane holds its
// share of matrix i (row lane/4, columns 2*(lane%4) and +1), the layout of mma and wgmma
// accumulator fragments after packing pairs. sm_90.
__device__ __forceinline__ void stmatrix_x4(unsigned smem_address, unsigned r0, unsigned r1,
                                            unsigned r2, unsigned r3) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_address),
      "r"(r0), "r"(r1), "r"(r2), "r"(r3)
      : "memory");
}

// MN-major ("transposed") operand of 16-bit elements written by TMA with 128B swizzle as panels
// of [k rows][64 mn-elements] (128-byte rows): 8-row k groups are 1024 bytes apart (stride
// offset), panels of 64 mn-elements `panel_bytes` apart (leading offset). Advancing k by 16 rows
// adds 2048 bytes to the start address. Used with imm-trans = 1.
__device__ __forceinline__ unsigned long long wgmma_descriptor_mn_sw128(unsigned smem_address,
                                                                        unsigned panel_bytes) {
  return wgmma_descriptor(smem_address, 8 * 128, 1, panel_bytes);
}

// ---- named barriers --------------------------------------------------------------------------

// Waits until `threads` threads (a multiple of 32, counting this warp's) have reached barrier
// `id` by sync or arrive. Id 0 is __syncthreads.
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Counts this warp towards barrier `id` without waiting.
__device__ __forceinline__ void named_barrier_arrive(unsigned id, unsigned threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Visible to the host pass too, which parses kernels but emits no device code.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Before the first wgmma of a batch: orders earlier register and shared-memory accesses of the
// warpgroup before the asynchronous matrix reads.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most kPending committed wgmma groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Register values that an asynchronous wgmma reads or writes: the empty asm "modifies" them, so
// the compiler can neither move their uses above a wgmma_wait placed before this fence nor
// their definitions below a wgmma issued after it.
__device__ __forceinline__ void fence_operand(float& value) {
  asm volatile("" : "+f"(value)::"memory");
}

__device__ __forceinline__ void fence_operand(unsigned& value) {
  asm volatile("" : "+r"(value)::"memory");
}

template <int N>
__device__ __forceinline__ void fence_operands(float (&values)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) fence_operand(values[i]);
}

template <int N>
__device__ __forceinline__ void fence_operands(unsigned (&values)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) fence_operand(values[i]);
}

// Register rebalancing between warpgroups; the kernel needs a register cap at entry
// (__launch_bounds__(threads, 1)) and every warp of the warpgroup must execute the same one.
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace kt_hopper
