// The "kernel" reference kind: a plain, obviously correct kernel of the family folder, compiled by
// the daemon with NVRTC for the job's arch (content-addressed cache) and handed over as a cubin
// path. params (tuner/variant_space.hpp, plus "cubin_path" added by the daemon):
//   {"cubin_path", "kernel", "output": the family output it answers for,
//    "args": [{"kind": "reference_output"|"buffer"|"i32"|"i64"|"f32", "buffer"?, "value"?}],
//    "launch": {"grid": [3], "block": [3], "dynamic_smem"},
//    "magnitude"?: {"kernel", "reduction": K, "description": what m is}}
// It writes fp32 into the reference_output argument; the magnitude kernel, when the family has
// one, is another entry point of the same cubin taking the same arguments and launch and writing
// the magnitude m of each element (validator.hpp) there instead; it has no run in the problem's
// dtype, so it never stands in as a speedup baseline (a family with an external baseline reports
// none).
#pragma once

#include <memory>

#include "tuner/measure_protocol.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"

namespace kt {

// Throws std::invalid_argument naming the bad field, std::runtime_error when the cubin cannot be
// read, CudaError when the driver refuses it or has no such entry point.
std::unique_ptr<Reference> make_kernel_reference(const ProblemInstance& problem,
                                                 const ProblemBuffers& buffers);

}  // namespace kt
