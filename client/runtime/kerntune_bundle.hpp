// kerntune_bundle.hpp: launch a bundle's tuned kernels from a C++ program, without a daemon.
//
// A bundle is the folder `kerntune export --bundle DIR --shapes SHAPES` writes (docs/torch.md):
// bundle.json, each problem's answer with its launch description, and the cubins. Header-only;
// needs <cuda.h> (the toolkit's driver API header), nlohmann/json and OpenSSL's libcrypto (link
// -lcrypto: each cubin is checked against the SHA-256 the bundle recorded). The driver library is
// opened at run time (libcuda.so.1), so a program that includes this links nothing more and
// starts on a host without a GPU (Kernel::load then throws, saying so).
//
//   kerntune::Bundle bundle = kerntune::Bundle::open("DIR");
//   kerntune::Lookup found = bundle.find("gemm", {{"M", 16}, {"N", 4096}, {"K", 4097}}, "bf16",
//                                        kerntune::device_name(0), kerntune::driver_version());
//   if (!found.entry) { /* found.refused says why: run your own path */ }
//   kerntune::Kernel kernel = kerntune::Kernel::load(bundle, *found.entry, /*ordinal=*/0);
//   kernel.launch({{"A", a}, {"B", b}, {"C", c}}, stream);   // scratch buffers are the kernel's
//
// Everything but Driver, Kernel::load and Kernel::launch runs without a GPU.
#pragma once

#include <cuda.h>
#include <dlfcn.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kerntune {

inline constexpr const char* kBundleFormat = "kerntune-bundle/1";

struct BundleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- the bundle's index ----------------------------------------------------------------------

struct Entry {
  std::string family, dtype, device, route;  // route: "ours" or "baseline"
  std::map<std::string, std::int64_t> shape;
  std::string kernel_path;    // relative to the bundle; "" when the baseline is the answer
  std::string kernel_sha256;  // of the cubin as exported (hex); "" when the bundle has none
  nlohmann::json answer;      // /v1/best's answer as exported: launch, keys, final, ...
};

struct Lookup {
  const Entry* entry = nullptr;  // set when this bundle's kernel is the answer here
  std::string refused;           // otherwise why not
};

inline std::string shape_text(const std::map<std::string, std::int64_t>& shape) {
  std::string text;
  for (const auto& [dim, extent] : shape)
    text += (text.empty() ? "" : ",") + dim + "=" + std::to_string(extent);
  return text;
}

class Bundle {
 public:
  static Bundle open(const std::string& folder) {
    std::ifstream in(folder + "/bundle.json");
    if (!in) throw BundleError(folder + "/bundle.json: cannot read the bundle");
    nlohmann::json index;
    try {
      index = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& error) {
      throw BundleError(folder + "/bundle.json: not JSON (" + error.what() + ")");
    }
    if (index.value("format", std::string()) != kBundleFormat)
      throw BundleError(folder + "/bundle.json: format '" + index.value("format", std::string()) +
                        "', this loader reads '" + kBundleFormat + "'");
    Bundle bundle;
    bundle.folder_ = folder;
    for (const nlohmann::json& e : index.value("entries", nlohmann::json::array())) {
      Entry entry;
      entry.family = e.value("family", "");
      entry.dtype = e.value("dtype", "");
      entry.device = e.value("device", "");
      entry.route = e.value("route", "");
      const nlohmann::json shape = e.value("shape", nlohmann::json::object());
      for (const auto& [dim, extent] : shape.items()) entry.shape[dim] = extent.get<std::int64_t>();
      if (e.contains("kernel") && e["kernel"].is_string()) entry.kernel_path = e["kernel"];
      if (e.contains("kernel_sha256") && e["kernel_sha256"].is_string())
        entry.kernel_sha256 = e["kernel_sha256"];
      entry.answer = e.value("answer", nlohmann::json::object());
      bundle.entries_.push_back(std::move(entry));
    }
    return bundle;
  }

  const std::string& folder() const { return folder_; }
  const std::vector<Entry>& entries() const { return entries_; }

  // The entry whose kernel answers this problem on a GPU named `device` under the driver
  // `driver` (cuDriverGetVersion), or why there is none: not in the bundle, tuned on another GPU
  // model or under another driver, the baseline won (unless accept_baseline_wins: the bundle
  // holds our best variant beside the baseline's answer), tuned before a change (stale).
  Lookup find(const std::string& family, const std::map<std::string, std::int64_t>& shape,
              const std::string& dtype, const std::string& device, int driver,
              bool accept_baseline_wins = false) const {
    Lookup lookup;
    std::vector<std::string> models;
    for (const Entry& e : entries_) {
      if (e.family != family || e.dtype != dtype || e.shape != shape) continue;
      if (e.device != device) {
        models.push_back(e.device);
        continue;
      }
      const nlohmann::json& keys = e.answer.value("keys", nlohmann::json::object());
      if (keys.contains("driver_version") && keys["driver_version"].is_number_integer() &&
          keys["driver_version"].get<int>() != driver) {
        lookup.refused = "tuned under driver " + std::to_string(keys["driver_version"].get<int>()) +
                         ", this one is " + std::to_string(driver);
      } else if (e.kernel_path.empty()) {
        lookup.refused = "no kernel of ours in the bundle for this shape";
      } else if (e.route != "ours" && !accept_baseline_wins) {
        lookup.refused =
            e.answer.value("baseline", std::string("the baseline")) + " won this shape";
      } else if (e.answer.value("stale", false)) {
        lookup.refused = "stale: tuned before a driver, NVRTC or family change";
      } else {
        lookup.entry = &e;
        lookup.refused.clear();
      }
      return lookup;
    }
    std::string where;
    for (const std::string& m : models) where += (where.empty() ? "" : ", ") + m;
    lookup.refused = where.empty()
                         ? family + " " + shape_text(shape) + " " + dtype + " is not in the bundle"
                         : "tuned on " + where + ", this GPU is " + device;
    return lookup;
  }

 private:
  std::string folder_;
  std::vector<Entry> entries_;
};

// ---- the launch description ------------------------------------------------------------------

inline std::size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16" || dtype == "f16") return 2;
  if (dtype == "u8" || dtype == "e4m3" || dtype == "e5m2") return 1;  // fp8 travels as bytes
  if (dtype == "i64" || dtype == "u64" || dtype == "f64") return 8;
  return 4;  // f32, fp32, i32, u32
}

struct TensorMapArgs {
  CUtensorMapDataType dtype;
  std::vector<cuuint64_t> dims, strides;  // strides in bytes, for dims 1..rank-1
  std::vector<cuuint32_t> box;
  CUtensorMapSwizzle swizzle;
};

struct Param {
  std::string kind;    // "pointer", "tensor_map", "i32", "u32", "i64", "f32"
  std::string buffer;  // pointer, tensor_map
  double value = 0;    // scalars, as the daemon evaluated them for the shape
  TensorMapArgs map{};
};

struct BufferSpec {
  std::string name, role, dtype;
  std::int64_t elements = 0;
  std::size_t bytes() const {
    return static_cast<std::size_t>(std::max<std::int64_t>(1, elements)) * dtype_bytes(dtype);
  }
};

struct LaunchPlan {
  std::string entry;
  unsigned grid[3]{}, block[3]{}, cluster[3]{1, 1, 1};
  unsigned dynamic_smem = 0;
  std::vector<Param> params;
  std::vector<BufferSpec> buffers;
};

inline CUtensorMapDataType tensor_map_dtype(const std::string& dtype) {
  if (dtype == "bf16") return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (dtype == "fp16" || dtype == "f16") return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  if (dtype == "f32" || dtype == "fp32") return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if (dtype == "u8" || dtype == "e4m3" || dtype == "e5m2") return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  throw BundleError("no tensor map element type for dtype '" + dtype + "'");
}

inline CUtensorMapSwizzle tensor_map_swizzle(int bytes) {
  switch (bytes) {
    case 0:
      return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32:
      return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64:
      return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128:
      return CU_TENSOR_MAP_SWIZZLE_128B;
    default:
      throw BundleError("swizzle " + std::to_string(bytes) + " is not 0, 32, 64 or 128 bytes");
  }
}

// The daemon's launch description (/v1/best's "launch") as a plan: a dense row-major tensor map
// per tensor_map parameter (the view the measurement worker encodes), the scalars' values.
inline LaunchPlan launch_plan(const nlohmann::json& launch) {
  if (!launch.is_object() || !launch.contains("kernel"))
    throw BundleError("the entry has no launch description");
  LaunchPlan plan;
  plan.entry = launch.at("kernel").get<std::string>();
  for (int i = 0; i < 3; ++i) {
    plan.grid[i] = launch.at("grid").at(i).get<unsigned>();
    plan.block[i] = launch.at("block").at(i).get<unsigned>();
    plan.cluster[i] =
        launch.value("cluster", nlohmann::json::array({1, 1, 1})).at(i).get<unsigned>();
  }
  plan.dynamic_smem = launch.value("dynamic_smem_bytes", 0u);
  std::map<std::string, std::string> dtypes;
  for (const nlohmann::json& b : launch.value("buffers", nlohmann::json::array())) {
    BufferSpec spec{b.at("name").get<std::string>(), b.value("role", "input"),
                    b.value("dtype", "f32"), b.value("elements", std::int64_t{1})};
    dtypes[spec.name] = spec.dtype;
    plan.buffers.push_back(std::move(spec));
  }
  for (const nlohmann::json& p : launch.at("params")) {
    Param param;
    param.kind = p.at("type").get<std::string>();
    if (param.kind == "pointer") {
      param.buffer = p.at("buffer").get<std::string>();
    } else if (param.kind == "tensor_map") {
      param.buffer = p.at("buffer").get<std::string>();
      const std::string dtype = dtypes.count(param.buffer) ? dtypes[param.buffer] : "f32";
      const auto dims = p.at("dims").get<std::vector<std::int64_t>>();
      const auto box = p.at("box").get<std::vector<std::int64_t>>();
      if (dims.empty() || dims.size() > 5 || dims.size() != box.size())
        throw BundleError("tensor map over " + param.buffer + ": 1 to 5 dims, one box entry each");
      param.map.dtype = tensor_map_dtype(dtype);
      param.map.swizzle = tensor_map_swizzle(p.value("swizzle_bytes", 0));
      std::uint64_t stride = dtype_bytes(dtype);
      for (std::size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] <= 0) throw BundleError("tensor map over " + param.buffer + ": an extent <= 0");
        param.map.dims.push_back(static_cast<cuuint64_t>(dims[d]));
        param.map.box.push_back(static_cast<cuuint32_t>(box[d]));
        if (d + 1 < dims.size()) {
          stride *= static_cast<std::uint64_t>(dims[d]);
          param.map.strides.push_back(stride);
        }
      }
    } else if (param.kind == "i32" || param.kind == "u32" || param.kind == "i64" ||
               param.kind == "f32") {
      param.value = p.at("value").get<double>();
    } else {
      throw BundleError("parameter of unknown type '" + param.kind + "'");
    }
    plan.params.push_back(std::move(param));
  }
  return plan;
}

// ---- the CUDA driver, opened at run time ---------------------------------------------------

class Driver {
 public:
  static const Driver& get() {
    static const Driver driver;  // thread-safe once
    if (!driver.handle_)
      throw BundleError("no NVIDIA driver on this host (libcuda.so.1: " + driver.error_ + ")");
    return driver;
  }
  void check(CUresult result, const char* what) const {
    if (result == CUDA_SUCCESS) return;
    const char* text = nullptr;
    getErrorString(result, &text);
    throw BundleError(std::string(what) + ": CUDA error " + std::to_string(result) + " (" +
                      (text ? text : "?") + ")");
  }

  decltype(&::cuInit) cuInit_ = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuDriverGetVersion) driverGetVersion = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetName) deviceGetName = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primaryCtxRelease = nullptr;
  decltype(&::cuCtxPushCurrent) ctxPush = nullptr;
  decltype(&::cuCtxPopCurrent) ctxPop = nullptr;
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuMemAlloc) memAlloc = nullptr;
  decltype(&::cuMemFree) memFree = nullptr;
  decltype(&::cuMemsetD8) memsetD8 = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
  decltype(&::cuLaunchKernelEx) launchKernelEx = nullptr;

 private:
  Driver() {
    handle_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      error_ = why ? why : "not found";
      return;
    }
    bind(cuInit_, "cuInit");
    bind(getErrorString, "cuGetErrorString");
    bind(driverGetVersion, "cuDriverGetVersion");
    bind(deviceGet, "cuDeviceGet");
    bind(deviceGetName, "cuDeviceGetName");
    bind(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    bind(primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    bind(ctxPush, "cuCtxPushCurrent_v2");
    bind(ctxPop, "cuCtxPopCurrent_v2");
    bind(moduleLoadData, "cuModuleLoadData");
    bind(moduleUnload, "cuModuleUnload");
    bind(moduleGetFunction, "cuModuleGetFunction");
    bind(funcSetAttribute, "cuFuncSetAttribute");
    bind(memAlloc, "cuMemAlloc_v2");
    bind(memFree, "cuMemFree_v2");
    bind(memsetD8, "cuMemsetD8_v2");
    bind(tensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    bind(launchKernelEx, "cuLaunchKernelEx");
    if (!error_.empty()) {
      dlclose(handle_);
      handle_ = nullptr;
      return;
    }
    const CUresult init = cuInit_(0);
    if (init != CUDA_SUCCESS) {
      error_ = "cuInit failed with CUDA error " + std::to_string(init);
      handle_ = nullptr;
    }
  }
  template <typename F>
  void bind(F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(dlsym(handle_, symbol));
    if (!fn && error_.empty()) error_ = std::string("no ") + symbol + " in the driver";
  }
  void* handle_ = nullptr;
  std::string error_;
};

inline std::string device_name(int ordinal) {
  const Driver& cu = Driver::get();
  CUdevice device;
  cu.check(cu.deviceGet(&device, ordinal), "cuDeviceGet");
  char name[256] = {};
  cu.check(cu.deviceGetName(name, sizeof name, device), "cuDeviceGetName");
  return name;
}

inline int driver_version() {
  const Driver& cu = Driver::get();
  int version = 0;
  cu.check(cu.driverGetVersion(&version), "cuDriverGetVersion");
  return version;
}

// The lowercase hex SHA-256 of bytes (OpenSSL's EVP digest).
inline std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw BundleError("SHA-256 of a cubin failed (OpenSSL)");
  static const char* const kHex = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += kHex[digest[i] >> 4];
    text += kHex[digest[i] & 15];
  }
  return text;
}

// ---- a loaded kernel --------------------------------------------------------------------------

// A bundle entry's cubin loaded into a device's primary context (the one the CUDA runtime and
// PyTorch use), with its scratch buffers allocated and zeroed once. Move-only; unloads and frees
// on destruction.
class Kernel {
 public:
  static Kernel load(const Bundle& bundle, const Entry& entry, int ordinal) {
    if (entry.kernel_path.empty())
      throw BundleError("the entry has no kernel (the baseline won it)");
    std::ifstream in(bundle.folder() + "/" + entry.kernel_path, std::ios::binary);
    if (!in)
      throw BundleError(bundle.folder() + "/" + entry.kernel_path + ": cannot read the cubin");
    std::stringstream bytes;
    bytes << in.rdbuf();
    // A cubin changed since the export (or another file put in its place) is never loaded.
    if (!entry.kernel_sha256.empty() && sha256_hex(bytes.str()) != entry.kernel_sha256)
      throw BundleError(bundle.folder() + "/" + entry.kernel_path +
                        ": the cubin does not match the SHA-256 the bundle recorded for it (" +
                        entry.kernel_sha256.substr(0, 12) + "...): not loaded");
    Kernel kernel;
    kernel.plan_ = launch_plan(entry.answer.value("launch", nlohmann::json()));
    kernel.cubin_ = bytes.str();
    kernel.load_on(ordinal);
    return kernel;
  }

  Kernel(Kernel&& other) noexcept { *this = std::move(other); }
  Kernel& operator=(Kernel&& other) noexcept {
    if (this != &other) {
      release();
      plan_ = std::move(other.plan_);
      cubin_ = std::move(other.cubin_);
      device_ = other.device_;
      context_ = std::exchange(other.context_, nullptr);
      module_ = std::exchange(other.module_, nullptr);
      function_ = std::exchange(other.function_, nullptr);
      scratch_ = std::move(other.scratch_);
    }
    return *this;
  }
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;
  ~Kernel() { release(); }

  const LaunchPlan& plan() const { return plan_; }

  // One launch on `stream` over the caller's buffers (name -> device address): every input and
  // output the launch description names; scratch buffers are the kernel's own.
  void launch(const std::map<std::string, CUdeviceptr>& buffers, CUstream stream) const {
    const Driver& cu = Driver::get();
    std::vector<CUtensorMap> maps;
    maps.reserve(plan_.params.size());
    std::vector<std::uint64_t> words(plan_.params.size());
    std::vector<void*> args(plan_.params.size());
    auto address = [&](const std::string& name) -> CUdeviceptr {
      if (auto it = scratch_.find(name); it != scratch_.end()) return it->second;
      auto it = buffers.find(name);
      if (it == buffers.end()) throw BundleError("launch: no buffer '" + name + "' given");
      return it->second;
    };
    for (std::size_t i = 0; i < plan_.params.size(); ++i) {
      const Param& p = plan_.params[i];
      if (p.kind == "tensor_map") {
        maps.emplace_back();
        const std::vector<cuuint32_t> element_strides(p.map.dims.size(), 1);
        cu.check(cu.tensorMapEncodeTiled(
                     &maps.back(), p.map.dtype, static_cast<cuuint32_t>(p.map.dims.size()),
                     reinterpret_cast<void*>(address(p.buffer)), p.map.dims.data(),
                     p.map.strides.data(), p.map.box.data(), element_strides.data(),
                     CU_TENSOR_MAP_INTERLEAVE_NONE, p.map.swizzle,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                 "cuTensorMapEncodeTiled");
        args[i] = &maps.back();
        continue;
      }
      void* slot = &words[i];
      if (p.kind == "pointer") {
        const CUdeviceptr ptr = address(p.buffer);
        std::memcpy(slot, &ptr, sizeof ptr);
      } else if (p.kind == "i32") {
        const std::int32_t v = static_cast<std::int32_t>(p.value);
        std::memcpy(slot, &v, sizeof v);
      } else if (p.kind == "u32") {
        const std::uint32_t v = static_cast<std::uint32_t>(p.value);
        std::memcpy(slot, &v, sizeof v);
      } else if (p.kind == "i64") {
        const std::int64_t v = static_cast<std::int64_t>(p.value);
        std::memcpy(slot, &v, sizeof v);
      } else {  // f32
        const float v = static_cast<float>(p.value);
        std::memcpy(slot, &v, sizeof v);
      }
      args[i] = slot;
    }
    CUlaunchConfig config{};
    config.gridDimX = plan_.grid[0];
    config.gridDimY = plan_.grid[1];
    config.gridDimZ = plan_.grid[2];
    config.blockDimX = plan_.block[0];
    config.blockDimY = plan_.block[1];
    config.blockDimZ = plan_.block[2];
    config.sharedMemBytes = plan_.dynamic_smem;
    config.hStream = stream;
    CUlaunchAttribute cluster{};
    if (plan_.cluster[0] * plan_.cluster[1] * plan_.cluster[2] > 1) {
      cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      cluster.value.clusterDim.x = plan_.cluster[0];
      cluster.value.clusterDim.y = plan_.cluster[1];
      cluster.value.clusterDim.z = plan_.cluster[2];
      config.attrs = &cluster;
      config.numAttrs = 1;
    }
    Current current(context_);
    cu.check(cu.launchKernelEx(&config, function_, args.data(), nullptr), "cuLaunchKernelEx");
  }

 private:
  Kernel() = default;

  // The primary context made current for a scope, and the previous one restored.
  struct Current {
    explicit Current(CUcontext context) {
      Driver::get().check(Driver::get().ctxPush(context), "cuCtxPushCurrent");
    }
    ~Current() {
      CUcontext popped;
      Driver::get().ctxPop(&popped);
    }
  };

  void load_on(int ordinal) {
    const Driver& cu = Driver::get();
    cu.check(cu.deviceGet(&device_, ordinal), "cuDeviceGet");
    cu.check(cu.primaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    Current current(context_);
    cu.check(cu.moduleLoadData(&module_, cubin_.data()), "cuModuleLoadData");
    cu.check(cu.moduleGetFunction(&function_, module_, plan_.entry.c_str()), "cuModuleGetFunction");
    if (plan_.dynamic_smem > 48 * 1024)
      cu.check(cu.funcSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(plan_.dynamic_smem)),
               "cuFuncSetAttribute");
    for (const BufferSpec& b : plan_.buffers) {
      if (b.role != "scratch") continue;  // zeroed once: the kernels leave them as they found them
      CUdeviceptr ptr = 0;
      cu.check(cu.memAlloc(&ptr, b.bytes()), "cuMemAlloc");
      scratch_[b.name] = ptr;
      cu.check(cu.memsetD8(ptr, 0, b.bytes()), "cuMemsetD8");
    }
  }

  void release() noexcept {
    if (!context_) return;
    const Driver& cu = Driver::get();
    if (cu.ctxPush(context_) == CUDA_SUCCESS) {
      for (const auto& [name, ptr] : scratch_) cu.memFree(ptr);
      if (module_) cu.moduleUnload(module_);
      CUcontext popped;
      cu.ctxPop(&popped);
    }
    cu.primaryCtxRelease(device_);
    scratch_.clear();
    module_ = nullptr;
    context_ = nullptr;
  }

  LaunchPlan plan_;
  std::string cubin_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::map<std::string, CUdeviceptr> scratch_;
};

}  // namespace kerntune
