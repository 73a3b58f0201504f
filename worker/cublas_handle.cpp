#include "worker/cublas_handle.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace kt::cuda {

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::string_view path = file;
  if (const auto pos = path.rfind("/tuner/"); pos != std::string_view::npos)
    path = path.substr(pos + 1);
  throw CublasError(status, std::string(call) + " at " + std::string(path) + ":" +
                                std::to_string(line) + ": " + cublasGetStatusName(status) + " (" +
                                cublasGetStatusString(status) + ")");
}

CublasHandle::CublasHandle() {
  KT_CUBLAS(cublasCreate(&handle_));
}

CublasHandle::~CublasHandle() {
  destroy();
}

CublasHandle::CublasHandle(CublasHandle&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

CublasHandle& CublasHandle::operator=(CublasHandle&& other) noexcept {
  if (this != &other) {
    destroy();
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

cublasHandle_t CublasHandle::on(CUstream stream) {
  // CUstream and cudaStream_t are the same handle type (struct CUstream_st*).
  KT_CUBLAS(cublasSetStream(handle_, stream));
  return handle_;
}

void CublasHandle::destroy() noexcept {
  if (handle_ == nullptr) return;
  cublasDestroy(handle_);
  handle_ = nullptr;
}

}  // namespace kt::cuda
