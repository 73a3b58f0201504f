// Decode-shape GEMM at weight-streaming speed (sm_90a): C[M,N] = A[M,K] * B[N,K]^T for few tokens
// (M up to a few hundred) and large N, K, computed as C^T = B * A^T: weight rows on the wgmma's
// m side (m64 blocks), tokens on its n side (n = BM = 8..128).
//
// Work: the output is cut into tiles of BN weight rows x BM tokens, each tile's K into units of
// BK. The tiles' units, in order (tile-major, k minor), are dealt in equal contiguous ranges to a
// persistent grid of at most one CTA per SM (stream-K), so every SM streams the same number of
// weight bytes and there is no ragged last wave. A CTA's range covers the end of one tile, maybe
// whole tiles, and the start of another; each such piece of a tile is finished on its own:
// - a tile held by one CTA is written to C from the accumulators;
// - otherwise each piece stores its fp32 partial in slot `piece` of the family's workspace
//   ([SPLIT_K][M][N], valid tokens and rows only) and counts itself on the tile's semaphore; the
//   last to arrive adds all pieces in piece (k) order from the workspace (deterministic, whoever
//   arrives last), writes C and re-zeroes the semaphore. Nobody waits for another CTA.
// The launch formula keeps every tile within SPLIT_K pieces (fewer CTAs when K is short).
//
// Block: one producer warpgroup (one thread issues TMA: 128B swizzle, zero fill past M, N, K;
// with L2_HINT, weights evict-first and tokens evict-last since every CTA reads them) into a
// STAGES-deep mbarrier ring, and CONSUMERS warpgroups, each owning BN/CONSUMERS weight rows of the
// tile, issuing wgmma m64nBMk16 from the ring with one stage in flight. setmaxnreg moves
// registers from the producer to the consumers. With CLUSTER > 1, the CTAs of a thread-block
// cluster take BN rows each of one CLUSTER*BN-row tile of the deal and share its token tiles:
// each loads BM/CLUSTER token rows and multicasts them to all (the tokens cross L2 once per
// cluster), and a slot is refilled only when every consumer of the cluster has released it.
//
// Launch: grid (CTAs, 1, 1) in clusters of (CLUSTER, 1, 1), (CONSUMERS+1)*128 threads,
// SkinnyStreamKConfig::SMEM_BYTES of dynamic shared memory. B arrives as a tensor map over
// [N][K] with box {64, BN}, A over [M][K] with box {64, BM/CLUSTER}, both 128B swizzle;
// K % 8 == 0 (the copy engine's 16-byte row pitch).

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "gemm_skinny_stream_k.cuh needs sm_90a: wgmma and setmaxnreg exist on no other target"
#endif

#include "gemm_skinny_stream_k_config.cuh"
#include "hopper_wgmma_ops.cuh"
#include "mma_primitives.cuh"
#include "warp_specialized.cuh"

namespace kt_skinny_sk {

using kt_mma::elem_t;
using kt_ws::RingCursor;

// L2 policies for the copy engine: streamed-once weights leave first, shared tokens stay.
__device__ __forceinline__ unsigned long long policy_evict_first() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

__device__ __forceinline__ unsigned long long policy_evict_last() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// kt_hopper::tma_load_2d with an L2 cache policy.
__device__ __forceinline__ void tma_load_2d_hint(unsigned dst, const KtTensorMap* map, unsigned bar,
                                                 int c0, int c1, unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "l"(policy)
      : "memory");
}

__device__ __forceinline__ int min_int(int a, int b) {
  return a < b ? a : b;
}

// kt_hopper::tma_load_2d_multicast with an L2 cache policy.
__device__ __forceinline__ void tma_load_2d_multicast_hint(unsigned dst, const KtTensorMap* map,
                                                           unsigned bar, int c0, int c1,
                                                           unsigned short cta_mask,
                                                           unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster.L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5, %6;\n" ::"r"(dst),
      "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask), "l"(policy)
      : "memory");
}

// The even deal of `total` work units over `ctas` CTAs in contiguous ranges: the first `extra`
// CTAs get per+1 units, the others per (per >= 1: the launch never has more CTAs than units).
struct Deal {
  int per, extra;
  __device__ __forceinline__ Deal(int total, int ctas) : per(total / ctas), extra(total % ctas) {}
  __device__ __forceinline__ int begin(int cta) const { return cta * per + min_int(cta, extra); }
  __device__ __forceinline__ int owner(int unit) const {
    const int big = extra * (per + 1);
    return unit < big ? unit / (per + 1) : extra + (unit - big) / per;
  }
};

// Where a CTA's work is. The deal is over the CTA's cluster (CLUSTER CTAs side by side on
// CLUSTER*BN weight rows, one "tile" of the deal, sharing its token tiles) and units of BK:
// [begin, end) of `units_per_tile` each; the granule is the deal's unit (a k-block, or a whole
// tile when SPLIT_K == 1 keeps tiles whole). CTA `rank` of the cluster owns BN of its rows.
template <class Cfg>
struct Work {
  int tiles_m, tiles, units_per_tile, begin, end, rank, cluster;
  Deal deal;
  int granule;
  __device__ __forceinline__ Work(int M, int N, int K)
      : tiles_m((M + Cfg::BM - 1) / Cfg::BM),
        tiles(tiles_m * ((N + Cfg::BN * Cfg::CLUSTER - 1) / (Cfg::BN * Cfg::CLUSTER))),
        units_per_tile((K + Cfg::BK - 1) / Cfg::BK),
        begin(0),
        end(0),
        rank(static_cast<int>(blockIdx.x) % Cfg::CLUSTER),
        cluster(static_cast<int>(blockIdx.x) / Cfg::CLUSTER),
        deal(Cfg::SPLIT_K == 1 ? tiles : tiles * units_per_tile,
             static_cast<int>(gridDim.x) / Cfg::CLUSTER),
        granule(Cfg::SPLIT_K == 1 ? units_per_tile : 1) {
    begin = deal.begin(cluster) * granule;
    end = deal.begin(cluster + 1) * granule;
  }
  __device__ __forceinline__ int owner(int unit) const { return deal.owner(unit / granule); }
  // This CTA's weight-row tile of deal tile `tile` (its index among the cdiv(N,BN) along N).
  __device__ __forceinline__ int row_tile(int tile) const {
    return (tile / tiles_m) * Cfg::CLUSTER + rank;
  }
  __device__ __forceinline__ int first_row(int tile) const { return row_tile(tile) * Cfg::BN; }
  __device__ __forceinline__ int first_token(int tile) const { return (tile % tiles_m) * Cfg::BM; }
  // The output tile's index among cdiv(M,BM)*cdiv(N,BN): its semaphore.
  __device__ __forceinline__ int output_tile(int tile) const {
    return row_tile(tile) * tiles_m + tile % tiles_m;
  }
};

__device__ __forceinline__ float4 load_global_cg4(const float* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p));
  return v;
}

struct Outputs {
  elem_t* C;
  float* workspace;
  unsigned* semaphores;
  int M, N;
};

template <class Cfg>
struct SkinnyStreamKKernel {
  using Ring = kt_ws::RingBarriers<Cfg::STAGES>;
  using Acc = float[Cfg::M_BLOCKS][Cfg::ACC];

  static __device__ __forceinline__ void run(const Outputs& out, const KtTensorMap* tma_w,
                                             const KtTensorMap* tma_t, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const unsigned base = (kt_hopper::smem_u32(smem) + 1023u) & ~1023u;
    const unsigned barriers = base + Cfg::BARRIER_OFFSET;
    const Ring ring{barriers, barriers + Cfg::STAGES * 8};
    // Every consumer of the cluster reads each slot: peers multicast token slices into it.
    kt_ws::start<Cfg::CLUSTER>([&] { ring.init(Cfg::CONSUMERS * Cfg::CLUSTER); });

    const Work<Cfg> work(out.M, out.N, K);
    kt_ws::split_roles<Cfg::PRODUCER_REGISTERS, Cfg::CONSUMER_REGISTERS>(
        [&] { produce(base, ring, work, tma_w, tma_t); },
        [&](int consumer) { consume(base, ring, work, out, consumer); });
    kt_ws::finish<Cfg::CLUSTER>();
  }

  static __device__ __forceinline__ void produce(unsigned base, const Ring& ring,
                                                 const Work<Cfg>& work, const KtTensorMap* tma_w,
                                                 const KtTensorMap* tma_t) {
    kt_hopper::prefetch_tensormap(tma_w);
    kt_hopper::prefetch_tensormap(tma_t);
    const unsigned long long streamed = policy_evict_first();
    const unsigned long long shared = policy_evict_last();
    RingCursor<Cfg::STAGES> cursor;
    // This CTA's slice of the shared token tile: rows and shared offset inside a token panel.
    const int slice = work.rank * Cfg::T_BOX_ROWS;
    const unsigned short peers = static_cast<unsigned short>((1u << Cfg::CLUSTER) - 1u);
    for (int u = work.begin; u < work.end; ++u) {
      const int tile = u / work.units_per_tile;
      const int k0 = (u % work.units_per_tile) * Cfg::BK;
      const int row = work.first_row(tile);
      const int token = work.first_token(tile) + slice;
      const unsigned bar = ring.acquire(cursor, Cfg::STAGE_BYTES);
      const unsigned w_dst = base + Cfg::W_OFFSET + cursor.stage * Cfg::W_STAGE_BYTES;
      const unsigned t_dst = base + Cfg::T_OFFSET + cursor.stage * Cfg::T_STAGE_BYTES + slice * 128;
#pragma unroll
      for (int p = 0; p < Cfg::PANELS; ++p) {
        const int k = k0 + p * Cfg::PANEL_K;
        if constexpr (Cfg::L2_HINT) {
          tma_load_2d_hint(w_dst + p * Cfg::W_PANEL_BYTES, tma_w, bar, k, row, streamed);
        } else {
          kt_hopper::tma_load_2d(w_dst + p * Cfg::W_PANEL_BYTES, tma_w, bar, k, row);
        }
        if constexpr (Cfg::CLUSTER > 1) {
          if constexpr (Cfg::L2_HINT) {
            tma_load_2d_multicast_hint(t_dst + p * Cfg::T_PANEL_BYTES, tma_t, bar, k, token, peers,
                                       shared);
          } else {
            kt_hopper::tma_load_2d_multicast(t_dst + p * Cfg::T_PANEL_BYTES, tma_t, bar, k, token,
                                             peers);
          }
        } else if constexpr (Cfg::L2_HINT) {
          tma_load_2d_hint(t_dst + p * Cfg::T_PANEL_BYTES, tma_t, bar, k, token, shared);
        } else {
          kt_hopper::tma_load_2d(t_dst + p * Cfg::T_PANEL_BYTES, tma_t, bar, k, token);
        }
      }
      cursor.advance();
    }
  }

  static __device__ __forceinline__ void consume(unsigned base, const Ring& ring,
                                                 const Work<Cfg>& work, const Outputs& out,
                                                 int consumer) {
    Acc acc;
    // Descriptors of stage 0, k step 0; a stage, panel or k step only moves the start address
    // (the descriptor's low field, in 16-byte units).
    const unsigned long long w_desc0 = kt_hopper::wgmma_descriptor_sw128(
        base + Cfg::W_OFFSET + consumer * Cfg::CONSUMER_ROWS * 128);
    const unsigned long long t_desc0 = kt_hopper::wgmma_descriptor_sw128(base + Cfg::T_OFFSET);
    RingCursor<Cfg::STAGES> cursor;
    for (int u = work.begin; u < work.end;) {
      const int tile = u / work.units_per_tile;
      const int piece_end = min_int(work.end, (tile + 1) * work.units_per_tile);
      const int last_stage = kt_ws::wgmma_ring_loop<Cfg::CLUSTER>(
          ring, cursor, piece_end - u, [&](int stage, bool first) {
            const unsigned long long w_stage = w_desc0 + ((stage * Cfg::W_STAGE_BYTES) >> 4);
            const unsigned long long t_stage = t_desc0 + ((stage * Cfg::T_STAGE_BYTES) >> 4);
#pragma unroll
            for (int ks = 0; ks < Cfg::K_STEPS; ++ks) {
              // k step ks: panel ks/4, 32 bytes further per k16 inside the 128-byte swizzled row
              const int panel = ks / 4;
              const int k_bytes = (ks % 4) * 32;
              const unsigned long long t_desc =
                  t_stage + ((panel * Cfg::T_PANEL_BYTES + k_bytes) >> 4);
#pragma unroll
              for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) {
                const unsigned long long w_desc =
                    w_stage + ((panel * Cfg::W_PANEL_BYTES + mb * 64 * 128 + k_bytes) >> 4);
                kt_hopper::wgmma_m64k16_ss(acc[mb], w_desc, t_desc, (!first || ks > 0) ? 1 : 0);
              }
            }
          });
      u = piece_end;
      kt_hopper::wgmma_wait<0>();
#pragma unroll
      for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb) kt_hopper::fence_operands(acc[mb]);
      if (last_stage >= 0) ring.template release<128, Cfg::CLUSTER>(last_stage);
      finish_piece(acc, work, out, tile, base + Cfg::FLAG_OFFSET, consumer);
    }
  }

  // Calls f(value, token, n) for each of the thread's accumulators inside C. Accumulator layout
  // (m64 block mb): element 4j + 2h + e is weight row 16w + l/4 + 8h, token 8j + 2(l%4) + e.
  template <class F>
  static __device__ __forceinline__ void for_each_output(const Acc& acc, const Outputs& out,
                                                         const Work<Cfg>& work, int tile,
                                                         int consumer, F&& f) {
    const int t = static_cast<int>(threadIdx.x) % 128;
    const int lane = t % 32;
    const int row0 =
        work.first_row(tile) + consumer * Cfg::CONSUMER_ROWS + (t / 32) * 16 + lane / 4;
    const int token0 = work.first_token(tile) + 2 * (lane % 4);
#pragma unroll
    for (int mb = 0; mb < Cfg::M_BLOCKS; ++mb)
#pragma unroll
      for (int i = 0; i < Cfg::ACC; ++i) {
        const int n = row0 + mb * 64 + 8 * ((i / 2) % 2);
        const int token = token0 + 8 * (i / 4) + (i % 2);
        if (token < out.M && n < out.N) f(acc[mb][i], token, n);
      }
  }

  static __device__ __forceinline__ void finish_piece(const Acc& acc, const Work<Cfg>& work,
                                                      const Outputs& out, int tile, unsigned flag,
                                                      int consumer) {
    const int first_owner = work.owner(tile * work.units_per_tile);
    const int pieces = work.owner((tile + 1) * work.units_per_tile - 1) - first_owner + 1;
    const int piece = work.cluster - first_owner;
    const long long N = out.N;
    if (work.first_row(tile) >= out.N) return;  // a cluster's ragged end: no rows, no semaphore
    if (pieces == 1) {
      for_each_output(acc, out, work, tile, consumer, [&](float v, int token, int n) {
        out.C[token * N + n] = kt_mma::convert_rn(v);
      });
      return;
    }
    if (pieces > Cfg::SPLIT_K) __trap();  // the launch formula keeps pieces within SPLIT_K
    const long long slot = static_cast<long long>(out.M) * N;
    float* mine = out.workspace + piece * slot;
    for_each_output(acc, out, work, tile, consumer,
                    [&](float v, int token, int n) { mine[token * N + n] = v; });
    __threadfence();
    kt_hopper::named_barrier_sync(Cfg::CONSUMER_BARRIER, Cfg::CONSUMERS * 128);
    unsigned* counter = out.semaphores + work.output_tile(tile);
    if (threadIdx.x == 128) {
      const bool last = atomicAdd(counter, 1u) == static_cast<unsigned>(pieces - 1);
      if (last) atomicExch(counter, 0u);  // every piece has arrived: ready for the next launch
      kt_mma::store_shared_4(flag, last ? 1u : 0u);
    }
    kt_hopper::named_barrier_sync(Cfg::CONSUMER_BARRIER, Cfg::CONSUMERS * 128);
    unsigned last;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(last) : "r"(flag) : "memory");
    // The next piece's flag write comes after the next barrier, which every reader passes first.
    if (last == 0u) return;
    __threadfence();
    // Every piece (this one too) is in the workspace: sum them in piece order, 4 consecutive
    // outputs of a token per thread and REDUCE_ROUNDS of them with all their pieces' loads in
    // flight at once (the sum is latency-bound otherwise: one L2 round trip per few outputs).
    const int row0 = work.first_row(tile);
    const int token0 = work.first_token(tile);
    const int rows = min_int(Cfg::BN, out.N - row0);
    const int quads = min_int(Cfg::BM, out.M - token0) * (Cfg::BN / 4);
    const bool vector = (out.N % 4) == 0;  // then every quad is 16-byte aligned and whole or out
    constexpr int kStride = Cfg::CONSUMERS * 128;
    for (int q0 = static_cast<int>(threadIdx.x) - 128; q0 < quads;
         q0 += kStride * Cfg::REDUCE_ROUNDS) {
      float4 sum[Cfg::REDUCE_ROUNDS];
#pragma unroll
      for (int r = 0; r < Cfg::REDUCE_ROUNDS; ++r) sum[r] = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int p = 0; p < Cfg::SPLIT_K; ++p) {
        if (p >= pieces) break;
#pragma unroll
        for (int r = 0; r < Cfg::REDUCE_ROUNDS; ++r) {
          const int q = q0 + r * kStride;
          const int row = (q % (Cfg::BN / 4)) * 4;
          if (q >= quads || row >= rows) continue;
          const float* at =
              out.workspace + p * slot + (token0 + q / (Cfg::BN / 4)) * N + row0 + row;
          if (vector) {
            const float4 v = load_global_cg4(at);
            sum[r].x += v.x;
            sum[r].y += v.y;
            sum[r].z += v.z;
            sum[r].w += v.w;
          } else {
            sum[r].x += kt_mma::load_global_cg(at);
            if (row + 1 < rows) sum[r].y += kt_mma::load_global_cg(at + 1);
            if (row + 2 < rows) sum[r].z += kt_mma::load_global_cg(at + 2);
            if (row + 3 < rows) sum[r].w += kt_mma::load_global_cg(at + 3);
          }
        }
      }
#pragma unroll
      for (int r = 0; r < Cfg::REDUCE_ROUNDS; ++r) {
        const int q = q0 + r * kStride;
        const int row = (q % (Cfg::BN / 4)) * 4;
        if (q >= quads || row >= rows) continue;
        elem_t* c = out.C + (token0 + q / (Cfg::BN / 4)) * N + row0 + row;
        if (vector) {
          const unsigned lo = kt_mma::pack_rn(sum[r].x, sum[r].y);
          const unsigned hi = kt_mma::pack_rn(sum[r].z, sum[r].w);
          asm volatile("st.global.v2.b32 [%0], {%1, %2};\n" ::"l"(c), "r"(lo), "r"(hi) : "memory");
        } else {
          const float parts[4] = {sum[r].x, sum[r].y, sum[r].z, sum[r].w};
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (row + e < rows) c[e] = kt_mma::convert_rn(parts[e]);
        }
      }
    }
  }
};

}  // namespace kt_skinny_sk

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) && \
    defined(KT_CONSUMERS) && defined(KT_SPLIT_K) && defined(KT_L2_HINT) && defined(KT_CLUSTER)
using KtSkinnyStreamKChosen =
    kt_skinny_sk::SkinnyStreamKConfig<KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CONSUMERS, KT_SPLIT_K,
                                      KT_L2_HINT, KT_CLUSTER>;

// Entry point; parameters in the order of the template's "args" in manifest.json: the weights'
// (B) tensor map first, then the tokens' (A); workspace and semaphores are the family's split-K
// buffers (partial tiles, per-tile arrival counters).
extern "C" __global__ void __launch_bounds__(KtSkinnyStreamKChosen::THREADS, 1)
    kt_gemm_skinny_stream_k(unsigned short* __restrict__ C,
                            const __grid_constant__ KtTensorMap tma_b,
                            const __grid_constant__ KtTensorMap tma_a, int M, int N, int K,
                            float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  const kt_skinny_sk::Outputs out{C, workspace, semaphores, M, N};
  kt_skinny_sk::SkinnyStreamKKernel<KtSkinnyStreamKChosen>::run(out, &tma_b, &tma_a, K);
}
#endif
