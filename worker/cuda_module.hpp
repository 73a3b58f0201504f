// A loaded cubin (cuModuleLoadData) and lookups of its kernels; unloaded with the owner.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class Module {
 public:
  // image: a cubin (or PTX) held in memory; the driver copies what it needs.
  explicit Module(const void* image);
  explicit Module(const std::vector<char>& image)
      : Module(static_cast<const void*>(image.data())) {}

  // Throws CudaError (CUDA_ERROR_NOT_FOUND) if the module has no such entry point.
  CUfunction function(const std::string& name) const;
  CUmodule get() const { return module_.get(); }

 private:
  struct Unload {
    void operator()(CUmodule module) const noexcept;
  };
  UniqueHandle<CUmodule, Unload> module_;
};

// Reads a file into memory (cubins are handed over as paths); throws std::runtime_error.
std::vector<char> read_binary_file(const std::string& path);

}  // namespace kt::cuda
