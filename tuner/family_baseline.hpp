// What a family's results are measured against, and its reference kernel as NVRTC compiles it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt {

// Whether a variant's speedup has something in-process to stand on: the family's baseline when it
// names one that runs in the worker, else (no baseline) a library reference's own-dtype run. A
// kernel reference (fp32 output, written to be obviously right, not fast) or an external baseline
// (PyTorch SDPA, timed by a bench script) gives none: the API reports no speedup rather than one
// over the slow reference.
bool has_speedup_baseline(const Family& family);

// What a baseline's output is checked with: the family's tolerance with rtol and rel_l2 doubled.
// The check is there to catch a baseline that computes something else; an unfused baseline rounds
// more often than a variant does (the dual GEMM's gate and up go through 16 bits before the
// product: three roundings where a fused kernel has one), which the variants' bound rejects. The
// magnitude term stays as it is: it already allows the library's own 16-bit partial sums
// (split-K reduced in the output type), and a rounding of gate or up, u * |gate|, is within it
// (|gate| is far below c * m / sqrt(K), tuner/error_bound.hpp).
Tolerance baseline_check_tolerance(const Tolerance& family_tolerance);

// What a family's speedups are measured against, for the API: {"kind", "description",
// "in_process"}; kind "reference" for a family without a baseline.
nlohmann::json baseline_summary(const Family& family);

// The NVRTC request of the family's "kernel" reference for a job's dtype and arch: its source and
// entry point, every family header, -DKT_DTYPE_<DTYPE> and -DKT_SM. FamilyError when the family's
// reference is not a kernel or its source is not in the folder.
CompileRequest reference_compile_request(const Family& family, const std::string& dtype,
                                         const DeviceLimits& limits);

}  // namespace kt
