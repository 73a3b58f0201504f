// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") and every entry point resolved
// through cuGetProcAddress_v2 at the ABI version its PFN_ typedef names. Nothing links libcuda,
// so every binary starts on a machine without the NVIDIA driver (CI) and reports why instead.
//
//   KT_CU(cuMemAlloc, &ptr, bytes);   // throws kt::cuda::CudaError on failure
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

namespace kt::cuda {

// Entry points as (name, ABI version of cudaTypedefs.h's PFN_<name>_v<version>). Several names
// are macros in cuda.h (cuMemAlloc -> cuMemAlloc_v2): the struct fields and the calls expand the
// same way, and the name handed to cuGetProcAddress is the unexpanded base name it expects.
// clang-format off
#define KT_DRIVER_ENTRY_POINTS(X) \
  X(cuGetErrorName, 6000) \
  X(cuGetErrorString, 6000) \
  X(cuInit, 2000) \
  X(cuDriverGetVersion, 2020) \
  X(cuDeviceGet, 2000) \
  X(cuDeviceGetCount, 2000) \
  X(cuDeviceGetName, 2000) \
  X(cuDeviceGetUuid, 11040) \
  X(cuDeviceTotalMem, 3020) \
  X(cuDeviceGetAttribute, 2000) \
  X(cuDevicePrimaryCtxRetain, 7000) \
  X(cuDevicePrimaryCtxRelease, 11000) \
  X(cuCtxSetCurrent, 4000) \
  X(cuCtxSynchronize, 2000) \
  X(cuModuleLoadData, 2000) \
  X(cuModuleUnload, 2000) \
  X(cuModuleGetFunction, 2000) \
  X(cuFuncGetAttribute, 2020) \
  X(cuFuncSetAttribute, 9000) \
  X(cuMemAlloc, 3020) \
  X(cuMemFree, 3020) \
  X(cuMemGetInfo, 3020) \
  X(cuMemcpyHtoD, 3020) \
  X(cuMemcpyDtoH, 3020) \
  X(cuMemsetD8Async, 3020) \
  X(cuMemsetD32Async, 3020) \
  X(cuMemcpyDtoDAsync, 3020) \
  X(cuStreamCreate, 2000) \
  X(cuStreamDestroy, 4000) \
  X(cuStreamSynchronize, 2000) \
  X(cuStreamBeginCapture, 10010) \
  X(cuStreamEndCapture, 10000) \
  X(cuGraphInstantiateWithFlags, 11040) \
  X(cuGraphUpload, 11010) \
  X(cuGraphLaunch, 10000) \
  X(cuGraphExecDestroy, 10000) \
  X(cuGraphDestroy, 10000) \
  X(cuEventCreate, 2000) \
  X(cuEventDestroy, 4000) \
  X(cuEventRecord, 2000) \
  X(cuEventSynchronize, 2000) \
  X(cuEventElapsedTime, 2000) \
  X(cuLaunchKernel, 4000) \
  X(cuLaunchKernelEx, 11060) \
  X(cuTensorMapEncodeTiled, 12000)
// clang-format on

struct DriverApi {
#define KT_DECLARE_ENTRY(name, version) PFN_##name##_v##version name = nullptr;
  KT_DRIVER_ENTRY_POINTS(KT_DECLARE_ENTRY)
#undef KT_DECLARE_ENTRY
};

// The driver library or one of its entry points is missing: no usable NVIDIA driver.
class DriverUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failed driver call: the call text, where it was made, and the driver's name and text of the
// code ("cuMemAlloc(&ptr, bytes) at worker/cuda_buffer.cpp:14: CUDA_ERROR_OUT_OF_MEMORY
// (out of memory)").
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const std::string& message);
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

// Loads the library, resolves every entry point and calls cuInit(0), once per process. Throws
// DriverUnavailable (library or symbol missing) or CudaError (cuInit failed, e.g. no device); a
// failure is remembered and thrown again by every later call.
const DriverApi& driver();

// "CUDA_ERROR_ILLEGAL_ADDRESS" / the driver's description; placeholders if the driver is absent.
std::string error_name(CUresult code);
std::string error_text(CUresult code);

// True for the sticky faults after which the context is unusable and the process must be
// replaced (illegal address, misaligned address, illegal instruction, hardware stack error,
// launch failure, assert/trap, ...).
bool is_context_lost(CUresult code);

// Throws CudaError unless result is CUDA_SUCCESS.
void check(CUresult result, const char* call, const char* file, int line);

}  // namespace kt::cuda

// Calls driver entry point `fn` with the arguments and throws kt::cuda::CudaError on failure.
#define KT_CU(fn, ...)                                                                        \
  ::kt::cuda::check(::kt::cuda::driver().fn(__VA_ARGS__), #fn "(" #__VA_ARGS__ ")", __FILE__, \
                    __LINE__)
