// What one kernel of a cubin uses, read from the cubin itself: registers, static shared memory,
// stack frame and constant banks. The ptxas log is not a dependable witness (some NVRTC builds
// leave it empty, and a cubin served from the compile cache has only what was stored with it);
// the file the driver loads always says. Spill sizes are not recorded in the file.
#pragma once

#include <span>
#include <stdexcept>
#include <string>

namespace kt {

// The bytes are not a CUDA cubin this reader understands, or the kernel is not in it.
class CubinError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CubinKernelResources {
  int sm = 0;                 // the SM version the code is for: 90 for sm_90a, 100 for sm_100a
  int registers = 0;          // per thread (EIATTR_REGCOUNT)
  int stack_frame_bytes = 0;  // per thread local memory (EIATTR_FRAME_SIZE); 0 when not recorded
  int static_smem_bytes = 0;  // the kernel's __shared__ variables, as the driver reports them
  int const_bytes = 0;        // the kernel's constant banks (.nv.constant<N>.<kernel>) summed
};

// Reads the facts of the extern "C" entry point `kernel` from a cubin (an ELF64 file for
// EM_CUDA). Every offset and size is checked against the file, so a truncated or damaged file
// throws CubinError (saying what is wrong) and never reads outside `cubin`; so does a kernel the
// cubin has no symbol or no register count for.
CubinKernelResources read_cubin_resources(std::span<const char> cubin, const std::string& kernel);

}  // namespace kt
