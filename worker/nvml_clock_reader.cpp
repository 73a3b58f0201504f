#include "worker/nvml_clock_reader.hpp"

#include <dlfcn.h>

#include <atomic>
#include <stdexcept>

#include <spdlog/spdlog.h>

namespace kt {
namespace {

// The few NVML types and values used, as nvml.h defines them (the header is not installed here;
// the C ABI is stable across driver releases).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using HandleByUuidFn = NvmlReturn (*)(const char*, NvmlDevice*);
using ClockInfoFn = NvmlReturn (*)(NvmlDevice, int, unsigned int*);
using ReasonsFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);

}  // namespace

// The loaded library and the device handle; shuts NVML down and unloads it when destroyed.
struct NvmlClockReader::Library {
  void* handle = nullptr;
  bool initialised = false;
  ShutdownFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  ClockInfoFn clock_info = nullptr;
  ReasonsFn reasons = nullptr;
  NvmlDevice device = nullptr;
  mutable std::atomic<bool> failure_logged{false};

  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (initialised && shutdown != nullptr) {
      const NvmlReturn result = shutdown();
      if (result != kNvmlSuccess) spdlog::warn("nvmlShutdown failed: {}", describe(result));
    }
    if (handle != nullptr) dlclose(handle);
  }

  std::string describe(NvmlReturn result) const {
    const char* text = error_string != nullptr ? error_string(result) : nullptr;
    return (text != nullptr ? std::string(text) : "NVML error") + " (" + std::to_string(result) +
           ")";
  }

  template <typename Fn>
  Fn symbol(const char* name) {
    return reinterpret_cast<Fn>(dlsym(handle, name));
  }

  template <typename Fn>
  Fn required(const char* name) {
    Fn fn = symbol<Fn>(name);
    if (fn == nullptr) throw std::runtime_error(std::string("libnvidia-ml.so.1 has no ") + name);
    return fn;
  }

  void check(NvmlReturn result, const std::string& call) const {
    if (result != kNvmlSuccess) throw std::runtime_error(call + " failed: " + describe(result));
  }
};

std::unique_ptr<NvmlClockReader> NvmlClockReader::open(const std::string& uuid,
                                                       std::string* why_not) {
  auto library = std::make_unique<Library>();
  try {
    library->handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library->handle == nullptr) {
      const char* detail = dlerror();
      throw std::runtime_error(std::string("libnvidia-ml.so.1 not found") +
                               (detail != nullptr ? " (" + std::string(detail) + ")" : ""));
    }
    library->error_string = library->symbol<ErrorStringFn>("nvmlErrorString");
    const auto init = library->required<InitFn>("nvmlInit_v2");
    library->shutdown = library->required<ShutdownFn>("nvmlShutdown");
    const auto by_uuid = library->required<HandleByUuidFn>("nvmlDeviceGetHandleByUUID");
    library->clock_info = library->required<ClockInfoFn>("nvmlDeviceGetClockInfo");
    // Renamed in driver 535; the old name stays exported for older drivers.
    library->reasons = library->symbol<ReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
    if (library->reasons == nullptr)
      library->reasons = library->required<ReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
    library->check(init(), "nvmlInit_v2");
    library->initialised = true;
    library->check(by_uuid(uuid.c_str(), &library->device),
                   "nvmlDeviceGetHandleByUUID(" + uuid + ")");
    unsigned int mhz = 0;
    library->check(library->clock_info(library->device, kNvmlClockSm, &mhz),
                   "nvmlDeviceGetClockInfo(SM)");
    unsigned long long reasons = 0;
    library->check(library->reasons(library->device, &reasons),
                   "nvmlDeviceGetCurrentClocksEventReasons");
  } catch (const std::exception& e) {
    if (why_not != nullptr) *why_not = e.what();
    return nullptr;
  }
  return std::unique_ptr<NvmlClockReader>(new NvmlClockReader(std::move(library)));
}

NvmlClockReader::NvmlClockReader(std::unique_ptr<Library> library) : library_(std::move(library)) {}

NvmlClockReader::~NvmlClockReader() = default;

ClockReading NvmlClockReader::read() const {
  ClockReading reading;
  unsigned int mhz = 0;
  unsigned long long reasons = 0;
  const NvmlReturn clock = library_->clock_info(library_->device, kNvmlClockSm, &mhz);
  const NvmlReturn events =
      clock == kNvmlSuccess ? library_->reasons(library_->device, &reasons) : clock;
  if (clock != kNvmlSuccess || events != kNvmlSuccess) {
    if (!library_->failure_logged.exchange(true))
      spdlog::warn("NVML reading failed ({}); samples around it are kept unchecked",
                   library_->describe(clock != kNvmlSuccess ? clock : events));
    return reading;
  }
  reading.valid = true;
  reading.sm_clock_mhz = static_cast<int>(mhz);
  reading.reasons = reasons;
  return reading;
}

}  // namespace kt
