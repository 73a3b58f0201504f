// SiLU-gated product of a dual GEMM's accumulators, as inline PTX (no host header): the
// element-wise step that turns silu(A*B1^T) and A*B2^T into C without a trip through memory.
#pragma once

namespace kt_silu {

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float reciprocal_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// silu(x) = x / (1 + e^-x). For very negative x, e^-x overflows to +inf and the reciprocal to 0,
// so the result is -0 rather than NaN.
__device__ __forceinline__ float silu(float x) {
  constexpr float kLog2e = 1.4426950408889634f;
  return x * reciprocal_approx(1.0f + exp2_approx(-x * kLog2e));
}

// silu(gate) * up: the dual GEMM's output element before rounding to 16 bits.
__device__ __forceinline__ float silu_mul(float gate, float up) {
  return silu(gate) * up;
}

}  // namespace kt_silu
