// Daemon side of a measurement worker: spawns kerntune-worker for one GPU, talks JSON lines over
// pipes, and turns a dead or silent worker into a variant state (crashed / hang / illegal_access)
// before starting a fresh one. The daemon itself never creates a CUDA context.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/child_process.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/interleaved_protocol.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

struct ProbeResult {
  bool driver_found = false;
  std::string error;  // why no device is usable ("libcuda.so.1 not found", ...)
  std::vector<DeviceInfo> devices;
};

// Runs `worker --probe` once and parses its answer. Never throws; a missing or failing worker is
// reported in error.
// With `user`, the worker runs as that account (as the daemon's workers will).
ProbeResult probe_devices(const std::filesystem::path& worker_exe,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60),
                          const std::optional<ProcessUser>& user = std::nullopt);

// The outcome of one raw request to a worker (WorkerClient::call).
struct WorkerReply {
  enum class Outcome {
    answered,        // body holds the answer line
    hang,            // no answer before the timeout: the worker was killed
    crashed,         // the worker died without answering (or could not be started)
    illegal_access,  // the worker reported a sticky CUDA fault, then died
  };
  Outcome outcome = Outcome::crashed;
  nlohmann::json body;
  std::string reason;  // why there is no answer
};

// A request the worker could not answer (it hung, crashed or refused it); what() says why.
class WorkerError : public std::runtime_error {
 public:
  WorkerError(WorkerReply::Outcome outcome, const std::string& what)
      : std::runtime_error(what), outcome_(outcome) {}
  WorkerReply::Outcome outcome() const { return outcome_; }

 private:
  WorkerReply::Outcome outcome_;
};

class WorkerClient {
 public:
  // With `user`, the worker runs as that account (a daemon started as root hands it nobody).
  WorkerClient(std::filesystem::path worker_exe, int device_ordinal,
               std::optional<ProcessUser> user = std::nullopt);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Sends the request and waits up to `timeout`. On timeout the worker is killed and the result
  // is hang; on EOF/exit it is crashed (or illegal_access when the worker said so before dying).
  // The worker is restarted lazily by the next call. A worker that cannot set up its device
  // (driver, context, cuBLAS) gives crashed with the reason. Throws std::runtime_error when the
  // worker rejects the request itself (malformed request, broken reference): not the variant's
  // fault, and every variant of the job would fail the same way.
  // With request.reference_us known, the wait is measure_watchdog(request) (watchdog.hpp) rather
  // than `timeout`, which stays the bound when the reference time is unknown.
  MeasureResult measure(const MeasureRequest& request, std::chrono::milliseconds timeout);
  // Re-measures already validated candidates interleaved (interleaved_protocol.hpp); waits
  // interleaved_watchdog(request), or 20 s + 3 x max_seconds per candidate when the reference
  // time is unknown. Throws WorkerError when the worker hangs, dies or refuses the request (it is
  // restarted by the next call), std::invalid_argument for no candidates.
  InterleavedResult measure_interleaved(const InterleavedRequest& request);
  // Times the family's baseline (cublasLt at its best for GEMM) on the problem: its timing and
  // what it was; nullopt + reason on failure.
  std::optional<BaselineTiming> time_baseline(const BaselineTimingRequest& request,
                                              std::chrono::milliseconds timeout,
                                              std::string* reason);
  // One raw JSON-line request ({"op": ...}) to the worker, started if needed (without setting up
  // its device). For tests and diagnostics; measure() and time_baseline() are built on it.
  WorkerReply call(const nlohmann::json& request, std::chrono::milliseconds timeout);
  // Time the worker may take to set up its device (context, NVRTC, cuBLAS) after a start; not
  // counted against a request's timeout. Default 120 s.
  void set_startup_timeout(std::chrono::milliseconds timeout) { startup_timeout_ = timeout; }
  // Ends the worker (asks it to exit, kills it after a grace period); the next call restarts it.
  void stop();
  // How many times the worker process was (re)started.
  int starts() const { return starts_.load(); }

 private:
  struct Process;
  void ensure_running();
  // Starts the worker if needed and has it set up its device; the reason if it cannot.
  std::optional<std::string> ensure_initialised();
  // Writes one line, reads the answer line until the timeout; kills/reaps a silent or dead worker.
  WorkerReply exchange(const std::string& line, std::chrono::milliseconds timeout);

  std::filesystem::path worker_exe_;
  int device_ordinal_;
  std::optional<ProcessUser> user_;
  std::unique_ptr<Process> process_;
  std::chrono::milliseconds startup_timeout_{120000};
  std::atomic<int> starts_{0};  // read by GET /metrics from another thread
};

}  // namespace kt
