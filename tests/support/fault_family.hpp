// A test-only kernel family ("faults") whose variants each fail one gate on purpose, for tests
// that drive the whole daemon: the axis BEHAVIOUR picks the planted fault; the axis COPY (0..3)
// changes nothing but the compile key, so there are more distinct variants of each behaviour. The
// kernel computes C[M,N] = A[M,K] * B[N,K]^T like the GEMM family, so cuBLAS is its reference.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace kt::test {

enum class PlantedFault : std::int64_t {
  correct = 0,           // measured
  compile_error = 1,     // #error: compile_error with the NVRTC log
  too_many_threads = 2,  // a 64x32 block: resource_exceeded at the compile gate
  bad_cluster = 3,       // cluster of 3 on a grid that is no multiple of 3: launch_failed
  illegal_access = 4,    // writes 2^40 elements past C: illegal_access, the worker is replaced
  hang = 5,              // never returns: hang, killed by the watchdog
  wrong_result = 6,      // writes zeros: wrong_result at the smoke gate
  correct_wide = 7,      // measured (32x8 blocks)
  correct_tall = 8,      // measured (8x32 blocks)
};

inline constexpr int kPlantedFaultCount = 9;

// The status a variant with this fault must end in ("measured", "hang", ...).
std::string expected_status(PlantedFault fault);

// Writes faults/manifest.json and faults/planted.cuh under `root` (a families folder).
void write_fault_family(const std::filesystem::path& root);

}  // namespace kt::test
