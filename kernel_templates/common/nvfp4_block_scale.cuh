// NVFP4 operands, shared by the gemm_nvfp4 and dual_gemm_silu_nvfp4 families (their kernels and
// references): e2m1 values packed two per byte (element 2i in the low nibble, K-contiguous rows),
// one ue4m3 factor per 16 consecutive k-elements of a row, stored in the 128x4 "atom" layout that
// CUTLASS, cuBLASLt and the tcgen05 block-scaled MMAs use (so a k-tile's factors reach shared
// memory with one TMA box and TMEM with tcgen05.cp, untouched):
//
//   rows in blocks of 128, k in blocks of 64 (4 factors); block (r/128, k/64) is a 512-byte atom,
//   atoms of one row block consecutive along k: atom index (r/128) * cdiv(K,64) + k/64; inside
//   an atom, byte (r%32)*16 + ((r%128)/32)*4 + (k/16)%4.
//
// A buffer of R rows holds cdiv(R,128) * cdiv(K,64) * 512 factors (padding rows and k-blocks
// included; kernels multiply them only by zero-filled operands). For G groups the groups' atoms
// follow one another. Everything here is plain arithmetic, valid on the host pass too.
#pragma once

namespace kt_nvfp4 {

constexpr int kScaleVector = 16;  // k-elements per ue4m3 factor (NVFP4)
constexpr int kAtomRows = 128;    // rows of one scale atom
constexpr int kAtomK = 64;        // k-elements of one scale atom (4 factors per row)
constexpr int kAtomBytes = 512;

__device__ __forceinline__ int cdiv(int a, int b) {
  return (a + b - 1) / b;
}

// Byte offset of the factor of (row, k) in the scales of a [rows][K] operand.
__device__ __forceinline__ long long scale_offset(int row, int k, int K) {
  const long long atom = static_cast<long long>(row / kAtomRows) * cdiv(K, kAtomK) + k / kAtomK;
  return atom * kAtomBytes + (row % 32) * 16 + ((row % kAtomRows) / 32) * 4 +
         (k / kScaleVector) % 4;
}

// Scale bytes of one group of an operand with `rows` rows.
__device__ __forceinline__ long long scale_group_bytes(int rows, int K) {
  return static_cast<long long>(cdiv(rows, kAtomRows)) * cdiv(K, kAtomK) * kAtomBytes;
}

// e2m1, exactly: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal
// (0 or 0.5). All 16 codes are finite: +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}.
__device__ __forceinline__ float decode_e2m1(unsigned code) {
  const unsigned exponent = (code >> 1) & 3u, mantissa = code & 1u;
  const float magnitude = exponent == 0 ? 0.5f * static_cast<float>(mantissa)
                                        : static_cast<float>(2u + mantissa) *
                                              static_cast<float>(1u << exponent) * 0.25f;
  return (code & 8u) ? -magnitude : magnitude;
}

// Element k of a packed e2m1 row.
__device__ __forceinline__ float e2m1_at(const unsigned char* row, int k) {
  return decode_e2m1((row[k / 2] >> (4 * (k % 2))) & 0xFu);
}

// ue4m3, exactly: e4m3 without a sign (the bit is ignored), 4 exponent bits (bias 7), 3 mantissa
// bits, subnormals below 2^-6; 0x7F (and 0xFF) is NaN, 448 the largest value.
__device__ __forceinline__ float decode_ue4m3(unsigned char bits) {
  const int exponent = (bits >> 3) & 0xF, mantissa = bits & 7;
  if (exponent == 0xF && mantissa == 7) return __int_as_float(0x7FC00000);
  return exponent == 0 ? ldexpf(static_cast<float>(mantissa), -9)
                       : ldexpf(static_cast<float>(mantissa + 8), exponent - 10);
}

// Element (row, k) of a [rows][K] NVFP4 operand times its block factor, exactly (one fp32
// product of two short values); 0 outside the operand.
__device__ __forceinline__ float dequantized(const unsigned char* __restrict__ values,
                                             const unsigned char* __restrict__ scales, int rows,
                                             int K, int row, int k) {
  if (row >= rows || k >= K) return 0.0f;
  return e2m1_at(values + static_cast<long long>(row) * (K / 2), k) *
         decode_ue4m3(scales[scale_offset(row, k, K)]);
}

}  // namespace kt_nvfp4
