// The compile step's NVRTC as the daemon runs it: in the calling thread's compile process
// (kerntune-worker --compile from build/bin, engine/compile_client.hpp).
#pragma once

#include <chrono>

#include "engine/compile_client.hpp"
#include "engine/job_compile.hpp"
#include "support/test_paths.hpp"

namespace kt::test {

inline CompileProcessOptions compile_process_options(
    std::chrono::milliseconds timeout = kDefaultCompileTimeout) {
  return {binary_dir() / "kerntune-worker", timeout};
}

inline KernelCompiler child_compiler(std::chrono::milliseconds timeout = kDefaultCompileTimeout) {
  return [options = compile_process_options(timeout)](const CompileRequest& request) {
    return compile_in_child(options, request);
  };
}

}  // namespace kt::test
