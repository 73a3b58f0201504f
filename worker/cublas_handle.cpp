#include "worker/cublas_handle.hpp"

#include <string>
#include <string_view>

namespace kt::cuda {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::string_view path = file;
  if (const auto pos = path.rfind("/worker/"); pos != std::string_view::npos)
    path = path.substr(pos + 1);
  throw CublasError(status, std::string(call) + " at " + std::string(path) + ":" +
                                std::to_string(line) + ": " + cublasGetStatusName(status) + " (" +
                                cublasGetStatusString(status) + ")");
}

CublasHandle::CublasHandle() {
  cublasHandle_t handle = nullptr;
  KT_CUBLAS(cublasCreate(&handle));
  handle_ = UniqueHandle<cublasHandle_t, Destroy>(handle);
}

cublasHandle_t CublasHandle::on(CUstream stream) {
  // CUstream and cudaStream_t are the same handle type (struct CUstream_st*).
  KT_CUBLAS(cublasSetStream(handle_.get(), stream));
  return handle_.get();
}

}  // namespace kt::cuda
