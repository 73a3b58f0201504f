#include "worker/driver_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string_view>

namespace kt::cuda {
namespace {

struct LoadedDriver {
  DriverApi api;
  std::string failure;  // empty when usable
  bool failure_is_cuda = false;
  CUresult failure_code = CUDA_SUCCESS;
};

// Resolves one entry point at the given ABI version; missing ones make the driver unusable.
void resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* name, int version, void** slot) {
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  const CUresult result = get_proc(name, slot, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
  if (result != CUDA_SUCCESS || status != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
    const char* why = status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          ? "the driver is too old for this version"
                          : "symbol not found";
    throw DriverUnavailable("libcuda.so.1 has no entry point " + std::string(name) + " (ABI " +
                            std::to_string(version) + "): " + why);
  }
}

LoadedDriver load() {
  LoadedDriver loaded;
  try {
    // Never dlclose'd: the driver lives as long as the process (cuBLAS shares it).
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (library == nullptr) {
      const char* detail = dlerror();
      throw DriverUnavailable(std::string("libcuda.so.1 not found: no NVIDIA driver on this host") +
                              (detail ? " (" + std::string(detail) + ")" : ""));
    }
    auto get_proc =
        reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(library, "cuGetProcAddress_v2"));
    if (get_proc == nullptr)
      throw DriverUnavailable(
          "libcuda.so.1 has no cuGetProcAddress_v2: the NVIDIA driver is older than CUDA 12");
#define KT_RESOLVE_ENTRY(name, version) \
  resolve(get_proc, #name, version, reinterpret_cast<void**>(&loaded.api.name));
    KT_DRIVER_ENTRY_POINTS(KT_RESOLVE_ENTRY)
#undef KT_RESOLVE_ENTRY
    const CUresult init = loaded.api.cuInit(0);
    if (init != CUDA_SUCCESS) {
      loaded.failure_is_cuda = true;
      loaded.failure_code = init;
      const char* name = nullptr;
      const char* text = nullptr;
      loaded.api.cuGetErrorName(init, &name);
      loaded.api.cuGetErrorString(init, &text);
      loaded.failure = std::string("cuInit(0) failed: ") + (name ? name : "unknown error") + " (" +
                       (text ? text : "no description") + ")";
    }
  } catch (const DriverUnavailable& e) {
    loaded.failure = e.what();
  }
  return loaded;
}

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = load();  // thread-safe, once
  return loaded;
}

// "/home/me/kerntune/worker/x.cpp" -> "worker/x.cpp": readable in stored reasons.
std::string_view short_path(std::string_view file) {
  for (std::string_view root : {"/worker/", "/tests/", "/bench/"}) {
    const auto pos = file.rfind(root);
    if (pos != std::string_view::npos) return file.substr(pos + 1);
  }
  return file;
}

}  // namespace

CudaError::CudaError(CUresult code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

const DriverApi& driver() {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.failure.empty()) {
    if (loaded.failure_is_cuda) throw CudaError(loaded.failure_code, loaded.failure);
    throw DriverUnavailable(loaded.failure);
  }
  return loaded.api;
}

std::string error_name(CUresult code) {
  const LoadedDriver& loaded = loaded_driver();
  const char* name = nullptr;
  if (loaded.api.cuGetErrorName != nullptr) loaded.api.cuGetErrorName(code, &name);
  return name ? name : "CUDA error " + std::to_string(static_cast<int>(code));
}

std::string error_text(CUresult code) {
  const LoadedDriver& loaded = loaded_driver();
  const char* text = nullptr;
  if (loaded.api.cuGetErrorString != nullptr) loaded.api.cuGetErrorString(code, &text);
  return text ? text : "no description";
}

bool is_context_lost(CUresult code) {
  switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return true;
    default:
      return false;
  }
}

void check(CUresult result, const char* call, const char* file, int line) {
  if (result == CUDA_SUCCESS) return;
  throw CudaError(result, std::string(call) + " at " + std::string(short_path(file)) + ":" +
                              std::to_string(line) + ": " + error_name(result) + " (" +
                              error_text(result) + ")");
}

}  // namespace kt::cuda
