// Daemon side of a measurement worker: spawns kerntune-worker for one GPU, talks JSON lines over
// pipes, and turns a dead or silent worker into a variant state (crashed / hang / illegal_access)
// before starting a fresh one. The daemon itself never creates a CUDA context.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tuner/device_limits.hpp"
#include "tuner/measure/protocol.hpp"

namespace kt {

struct ProbeResult {
  bool driver_found = false;
  std::string error;                 // why no device is usable ("libcuda.so.1 not found", ...)
  std::vector<DeviceInfo> devices;
};

// Runs `worker --probe` once and parses its answer. Never throws; a missing or failing worker is
// reported in error.
ProbeResult probe_devices(const std::filesystem::path& worker_exe,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));

class WorkerClient {
 public:
  WorkerClient(std::filesystem::path worker_exe, int device_ordinal);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Sends the request and waits up to `timeout`. On timeout the worker is killed and the result
  // is hang; on EOF/exit it is crashed (or illegal_access when the worker said so before dying).
  // The worker is restarted lazily by the next call.
  MeasureResult measure(const MeasureRequest& request, std::chrono::milliseconds timeout);
  // Times the family's reference (cuBLAS for GEMM) on the problem; nullopt + reason on failure.
  std::optional<TimingSummary> time_reference(const ReferenceTimingRequest& request,
                                              std::chrono::milliseconds timeout,
                                              std::string* reason);
  // How many times the worker process was (re)started.
  int starts() const { return starts_; }

 private:
  struct Process;
  void ensure_running();
  void stop();
  // Writes one line, reads one line; nullopt on timeout (sets timed_out) or EOF.
  std::optional<std::string> exchange(const std::string& line, std::chrono::milliseconds timeout,
                                      bool* timed_out);

  std::filesystem::path worker_exe_;
  int device_ordinal_;
  int pid_ = -1;
  int to_worker_ = -1;
  int from_worker_ = -1;
  std::string read_buffer_;
  int starts_ = 0;
};

}  // namespace kt
