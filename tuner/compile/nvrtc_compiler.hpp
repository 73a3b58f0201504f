// NVRTC: device source -> cubin for one arch, with the kernel's resources read from the cubin
// (the ptxas log adds spills when it has them). Compile errors are results (ok = false, log kept),
// not exceptions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kt {

struct CompileRequest {
  std::string source_name;                                   // "gemm_mma.cuh" (shows in the log)
  std::string source;                                        // the text of source_name
  std::vector<std::pair<std::string, std::string>> headers;  // name -> text, for #include "name"
  std::string kernel;                // extern "C" entry point expected in the cubin
  std::string arch;                  // "sm_90a", "sm_100a", ...
  std::vector<std::string> options;  // -D..., etc. (arch, -std, ptxas -v are added)
};

// -1 in a field: unknown (a ptxas log that does not name the kernel; spills of a kernel whose
// cubin has a stack frame when there is no log to say how much of it is spill).
struct ResourceUsage {
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int static_smem_bytes = 0;
  int const_bytes = 0;
};

// A kernel's resources and where the two witnesses disagree.
struct ResourceReport {
  ResourceUsage usage;
  std::string disagreement;  // "" when the ptxas log agrees with the cubin or says nothing
};

struct CompileResult {
  bool ok = false;
  std::string log;          // NVRTC program log (includes ptxas info lines)
  std::vector<char> cubin;  // empty unless ok
  ResourceUsage resources;
  double compile_ms = 0;
  std::string key;  // compile_cache_key(request)
};

// "13.0", from nvrtcVersion.
std::string nvrtc_version();

// SHA-256 (hex) over the source, headers, kernel, arch, options and NVRTC version: the
// content-addressed cache key. Equal inputs give equal keys; any change gives another.
std::string compile_cache_key(const CompileRequest& request);

// Compiles with: --gpu-architecture=<arch>, -std=c++17, --ptxas-options=-v, -default-device,
// plus request.options. Every NVRTC return code is checked; failure text goes into log. The
// resources come from kernel_resources; a cubin they cannot be read from is a failed compile.
CompileResult compile_kernel(const CompileRequest& request);

// Whether a compiled cubin holds the extern "C" entry point `kernel` (a name in its symbol table).
bool cubin_names_entry(const std::vector<char>& cubin, const std::string& kernel);

// The resources of `kernel` in a compiled cubin: registers, static shared memory, stack frame and
// constant banks from the cubin itself (tuner/compile/cubin_resources.hpp), spills from the ptxas
// log when it names the kernel; without a log, spills are 0 when the stack frame is empty (a
// spill needs a frame slot) and -1 (unknown) otherwise. Where the log gives other figures than
// the cubin, the cubin's are kept and `disagreement` says so. Throws CubinError for a cubin that
// cannot be read or that gives the kernel 0 registers (every kernel uses some).
ResourceReport kernel_resources(const std::vector<char>& cubin, const std::string& kernel,
                                const std::string& ptxas_log);

// The CUDA toolkit's include folder handed to NVRTC, so that a family source may include
// <cuda_fp16.h>, <cuda_bf16.h> or <mma.h>: $CUDA_HOME/include, else the toolkit kerntune was built
// with, else /usr/local/cuda/include; nullopt when none holds cuda_fp16.h.
std::optional<std::filesystem::path> cuda_include_dir();

// Parses ptxas "-v" output for the given entry point (lines like
// "ptxas info    : Used 128 registers, used 1 barriers, 32768 bytes smem, 400 bytes cmem[0]"
// and "N bytes stack frame, N bytes spill stores, N bytes spill loads"). Fields the log does not
// give for the kernel are -1; an omitted "bytes smem" or cmem on its "Used" line means 0.
ResourceUsage parse_ptxas_report(const std::string& log, const std::string& kernel);

}  // namespace kt
