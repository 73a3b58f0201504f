// Online softmax over attention score tiles held in registers, in the accumulator layout that
// mma.sync m16n8 tiles and wgmma m64nN (per warp) share: for n8 block j, element 4j + 2h + e of
// lane l is row l/4 + 8h, column 8j + 2*(l%4) + e. A row lives in the 4 lanes of a quad.
//
// Scores are raw dot products; scale_log2 = softmax scale * log2(e) turns them into base-2
// exponents, so probabilities are exp2(s * scale_log2 - max) and the running max is kept in those
// units. The running sum stays per lane (a quad's lanes hold different columns) and is reduced
// over the quad only at the end.
#pragma once

#include "mma_primitives.cuh"

namespace kt_attn {

using kt_mma::elem_t;

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

__device__ __forceinline__ float log2_approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Running statistics of the two rows (h = 0, 1) a thread holds.
struct RowStats {
  float max[2];  // in scaled base-2 units; -inf until a row has seen an unmasked score
  float sum[2];  // this lane's part of sum(exp2(s * scale_log2 - max))
};

__device__ __forceinline__ void init_row_stats(RowStats& stats) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    stats.max[h] = -__int_as_float(0x7f800000);
    stats.sum[h] = 0.f;
  }
}

// Sets the scores of keys >= seq_len (the ragged last block) and, with kCausal, of keys after
// the query to -inf. query0: query index of this thread's row h = 0; key0: key index of its
// column e = 0 in n8 block 0.
template <int N8, bool kCausal>
__device__ __forceinline__ void mask_scores(float (&s)[N8 * 4], int query0, int key0, int seq_len) {
  const float minus_inf = -__int_as_float(0x7f800000);
#pragma unroll
  for (int j = 0; j < N8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int key = key0 + 8 * j + e;
        const bool masked = key >= seq_len || (kCausal && key > query0 + 8 * h);
        if (masked) s[4 * j + 2 * h + e] = minus_inf;
      }
}

// Folds one block of scores into the running statistics: the rows' new maxima (over the quad),
// the scores replaced in place by their probabilities exp2(s * scale_log2 - max), the sums
// rescaled and extended. `correction[h]` is the factor the output accumulated so far (relative
// to the old max) must be multiplied by. A row that has seen only masked scores keeps max -inf
// and uses 0 as its exponent base, so it gets zeros rather than NaN.
template <int N8>
__device__ __forceinline__ void online_softmax(float (&s)[N8 * 4], RowStats& stats,
                                               float scale_log2, float (&correction)[2]) {
  const float minus_inf = -__int_as_float(0x7f800000);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float block_max = minus_inf;
#pragma unroll
    for (int j = 0; j < N8; ++j)
      block_max = fmaxf(block_max, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
    const float new_max = fmaxf(stats.max[h], quad_max(block_max) * scale_log2);
    const float base = new_max == minus_inf ? 0.f : new_max;
    correction[h] = kt_mma::exp2_approx(stats.max[h] - base);
    stats.max[h] = new_max;
    float block_sum = 0.f;
#pragma unroll
    for (int j = 0; j < N8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float& v = s[4 * j + 2 * h + e];
        v = kt_mma::exp2_approx(fmaf(v, scale_log2, -base));
        block_sum += v;
      }
    stats.sum[h] = stats.sum[h] * correction[h] + block_sum;
  }
}

// Multiplies an output accumulator in the same layout (D8 n8 blocks of head-dim columns) row-wise.
template <int D8>
__device__ __forceinline__ void scale_rows(float (&o)[D8 * 4], const float (&factor)[2]) {
#pragma unroll
  for (int j = 0; j < D8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      o[4 * j + 2 * h] *= factor[h];
      o[4 * j + 2 * h + 1] *= factor[h];
    }
}

// The A fragment (m16k16 of a 16-bit operand) of probabilities for keys [16t, 16t + 16) of the
// block: with this layout, n8 blocks 2t and 2t+1 are exactly the fragment's two column halves.
template <int N8>
__device__ __forceinline__ void probability_fragment(const float (&p)[N8 * 4], int t,
                                                     unsigned (&a)[4]) {
  static_assert(N8 % 2 == 0, "an even number of n8 blocks: whole k16 steps of keys");
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = kt_mma::pack_rn(p[8 * t + 2 * i], p[8 * t + 2 * i + 1]);
}

// Final row statistics: the sums reduced over the quad, 1/sum (0 for an empty row) and the
// natural log-sum-exp of the scaled scores.
__device__ __forceinline__ void finish_rows(const RowStats& stats, float (&inverse)[2],
                                            float (&lse)[2]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float sum = quad_sum(stats.sum[h]);
    inverse[h] = sum > 0.f ? 1.f / sum : 0.f;
    lse[h] = (stats.max[h] + log2_approx(sum)) * kLn2;
  }
}

}  // namespace kt_attn
