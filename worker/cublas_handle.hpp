// A cuBLAS handle on the current context (the device's primary context), destroyed with the owner,
// and the checking macro for cublasStatus_t.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>

#include <stdexcept>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class CublasError : public std::runtime_error {
 public:
  CublasError(cublasStatus_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  cublasStatus_t status() const { return status_; }

 private:
  cublasStatus_t status_;
};

// Throws CublasError with the call text, file:line and cuBLAS's name and text of the status.
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);

class CublasHandle {
 public:
  CublasHandle();

  // The handle, bound to stream for the calls that follow.
  cublasHandle_t on(CUstream stream);

 private:
  struct Destroy {
    void operator()(cublasHandle_t handle) const noexcept { cublasDestroy(handle); }
  };
  UniqueHandle<cublasHandle_t, Destroy> handle_;
};

}  // namespace kt::cuda

#define KT_CUBLAS(call) ::kt::cuda::check_cublas((call), #call, __FILE__, __LINE__)
