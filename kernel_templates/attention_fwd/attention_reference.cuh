// Reference for the attention family: O = softmax(Q Kᵀ * scale [causal mask]) V computed plainly in
// fp32, written as fp32, for any S and any D <= 128. One block of 128 threads per query row (grid
// (S, B*H)): pass 1 finds the row's exact maximum score, pass 2 recomputes the scores chunk by
// chunk, exponentiates them against that maximum into shared memory, and thread d sums p_j *
// V[j][d]. Scores are dot products of one key row per warp (lanes split D), so every global read is
// coalesced. Q, K, V and the output are [B, H, S, D] row-major; nothing is tiled or approximated.
// kt_attention_magnitude, the same computation on |V|, gives the per-element bound its magnitude.

#include "mma_primitives.cuh"

namespace kt_attn_ref {

using kt_mma::elem_t;
using kt_mma::to_float;

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxHeadDim = 128;
constexpr int kChunk = 1024;  // keys whose probabilities are held in shared memory at once

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Scaled query row (shared, fp32) . key row; every lane of the warp gets the result.
__device__ __forceinline__ float score(const float* q, const elem_t* __restrict__ key, int D,
                                       int lane) {
  float acc = 0.f;
  for (int d = lane; d < D; d += 32) acc += q[d] * to_float(key[d]);
  return warp_sum(acc);
}

// One query row of O (or of its magnitude): Σ_j p_j V[j][d] / Σ_j p_j with kAbsV false,
// Σ_j p_j |V[j][d]| / Σ_j p_j with kAbsV true, from the same scores, maximum and exponentials.
template <bool kAbsV>
__device__ __forceinline__ void attention_row(float* __restrict__ out,
                                              const unsigned short* __restrict__ Q,
                                              const unsigned short* __restrict__ K,
                                              const unsigned short* __restrict__ V, int B, int H,
                                              int S, int D, int causal, float scale) {
  __shared__ float q[kMaxHeadDim];
  __shared__ float p[kChunk];
  __shared__ float warp_max[kWarps];
  const int row = static_cast<int>(blockIdx.x);
  const long long bh = blockIdx.y;
  if (row >= S || bh >= static_cast<long long>(B) * H || D > kMaxHeadDim) return;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const long long head = bh * S * D;

  for (int d = tid; d < D; d += kThreads)
    q[d] = to_float(Q[head + static_cast<long long>(row) * D + d]) * scale;
  __syncthreads();
  const int keys = causal ? row + 1 : S;

  float row_max = -__int_as_float(0x7f800000);
  for (int j = warp; j < keys; j += kWarps)
    row_max = fmaxf(row_max, score(q, K + head + static_cast<long long>(j) * D, D, lane));
  if (lane == 0) warp_max[warp] = row_max;
  __syncthreads();
  for (int w = 0; w < kWarps; ++w) row_max = fmaxf(row_max, warp_max[w]);

  float acc = 0.f;  // column tid of the output row (threads tid < D)
  float sum = 0.f;  // the same sum in every thread, in the same order
  for (int chunk = 0; chunk < keys; chunk += kChunk) {
    const int count = min(kChunk, keys - chunk);
    for (int j = warp; j < count; j += kWarps) {
      const float s = score(q, K + head + static_cast<long long>(chunk + j) * D, D, lane);
      if (lane == 0) p[j] = expf(s - row_max);
    }
    __syncthreads();
    for (int j = 0; j < count; ++j) {
      sum += p[j];
      if (tid < D) {
        const float v = to_float(V[head + static_cast<long long>(chunk + j) * D + tid]);
        acc += p[j] * (kAbsV ? fabsf(v) : v);
      }
    }
    __syncthreads();
  }
  if (tid < D) out[head + static_cast<long long>(row) * D + tid] = acc / sum;
}

}  // namespace kt_attn_ref

// O_ref[B,H,S,D] (fp32) for inputs Q, K, V [B,H,S,D]; causal != 0 lets query i see keys 0..i.
extern "C" __global__ void __launch_bounds__(kt_attn_ref::kThreads)
    kt_attention_reference(float* __restrict__ O_ref, const unsigned short* __restrict__ Q,
                           const unsigned short* __restrict__ K,
                           const unsigned short* __restrict__ V, int B, int H, int S, int D,
                           int causal, float scale) {
  kt_attn_ref::attention_row<false>(O_ref, Q, K, V, B, H, S, D, causal, scale);
}

// The magnitude of each element of O for the per-element bound (manifest reference.magnitude):
// m[b,h,i,d] = Σ_j p_ij |V[j][d]|, the softmax-weighted magnitude of what O[b,h,i,d] averages.
// A kernel that rounds each probability to the dtype before P V moves O[i][d] by at most
// u_out * m (each term by u_out * p_ij |V[j][d]|), and by as much again when its row sum is of
// the rounded probabilities: the bound's c * u_out * m with K = 1 (kernel_templates/README.md).
// Same arguments and launch as kt_attention_reference.
extern "C" __global__ void __launch_bounds__(kt_attn_ref::kThreads)
    kt_attention_magnitude(float* __restrict__ magnitude, const unsigned short* __restrict__ Q,
                           const unsigned short* __restrict__ K,
                           const unsigned short* __restrict__ V, int B, int H, int S, int D,
                           int causal, float scale) {
  kt_attn_ref::attention_row<true>(magnitude, Q, K, V, B, H, S, D, causal, scale);
}
