// The part of the per-element bound that grows with what was summed (Tolerance::magnitude):
//
//   |out - ref| <= atol + rtol * |ref| + c * u(dtype, K) * m
//   u(dtype, K) = u_out / sqrt(K) + u_acc
//
// m is the element's magnitude as the reference computes it (for a GEMM m = (|A| |B|^T)_ij, the
// sum of |products|), K the reduction length, u_out the unit roundoff of the output dtype (2^-8
// bf16, 2^-11 fp16, 2^-24 f32) and u_acc that of the fp32 accumulation (2^-24).
//
// Why this form. A correct kernel differs from the exact sum by three kinds of rounding:
//  1. The fp32 accumulation, in whatever order the kernel sums. Modelled as independent mean-zero
//     rounding errors (Higham & Mary, SIAM J. Sci. Comput. 41 (2019)), K products of magnitude
//     m cost at most lambda * sqrt(K) * u_acc * m; for data of mean zero, like the worker's inputs
//     (uniform in [-1, 1)), the bound is a small multiple of u_acc * m, independent of K (Higham
//     & Mary, SIAM J. Sci. Comput. 42 (2020)): the partial sums grow like sqrt(k), not like k.
//     That is the u_acc term.
//  2. Partial sums rounded to the output dtype before the end: split-K slices written in 16
//     bits, their reduction in 16 bits, a stream-K fixup. Each such rounding costs at most
//     u_out * |partial sum|. For mean-zero products a partial sum is about sigma * sqrt(K) (sigma
//     the products' standard deviation), and sigma * sqrt(K) = (sigma / E|x|) * m / sqrt(K), so
//     r of them cost lambda * sqrt(r) * (sigma / E|x|) * u_out * m / sqrt(K): the u_out / sqrt(K)
//     term. (A worst case u_out * m, every partial as large as the sum of |products|, grows like
//     K while the real error grows like sqrt(K): at K = 16384 it would allow an error as large as
//     the output itself and accept a kernel that dropped a K-block.)
//  3. The final rounding to the output dtype, at most u_out * |out|: rtol.
// The shipped c = 16 = lambda * sqrt(r) * sigma / E|x| with sigma / E|x| = 4/3 (products of two
// uniform [-1, 1) values: sigma = 1/3, E|x| = 1/4), r = 9 (a 16-slice split-K reduced slice after
// slice in 16 bits: 16 roundings of slices of sqrt(K/16) and 15 of running sums of sqrt(t K/16)
// add up to 1 + 16/2 = 9 roundings of a full-size sum) and lambda = 4 (Hoeffding: at most
// 2 exp(-8) per element counting every rounding error as u |x|; a real one is uniform within half
// an ulp, with an rms of at most u |x| / sqrt(3), so lambda = 4 is at least 7 standard deviations).
// It accepts a bf16 split-K kernel with 16-bit partials at K = 16384 and rejects one dropped
// 64-wide K-block in a tile (tests/unit/magnitude_bound_test.cpp); kernel_templates/README.md
// has the figures.
//
// A kernel reference whose output is not a plain sum names its own magnitude and K (a family
// manifest's reference.magnitude): attention's m = sum_j p_ij |V_jd| with K = 1 (each weight is
// rounded once: a deterministic bound), dual GEMM's the two GEMMs' magnitudes propagated through
// silu(gate) * up with the GEMMs' K.
#pragma once

#include <cstdint>
#include <string>

#include "tuner/measure_protocol.hpp"

namespace kt {

// The unit roundoff of fp32 accumulation.
inline constexpr double kAccumulationUnitRoundoff = 0x1p-24;

// Half an ulp of 1 in dtype: 2^-8 "bf16", 2^-11 "fp16", 2^-24 "f32". Throws std::invalid_argument
// for any other dtype.
double unit_roundoff(const std::string& dtype);

// u(dtype, K) = unit_roundoff(dtype) / sqrt(K) + kAccumulationUnitRoundoff. Throws
// std::invalid_argument for an unknown dtype or K < 1.
double magnitude_unit_roundoff(const std::string& output_dtype, std::int64_t reduction);

// The term for an output of output_dtype, from the tolerance's c, K and what m is.
MagnitudeBound magnitude_bound(const Tolerance& tolerance, const std::string& output_dtype,
                               std::int64_t reduction, std::string magnitude);

// What the built-in cublas_gemm reference computes as m.
inline constexpr const char* kGemmMagnitude = "|A|*|B|^T";

}  // namespace kt
