// The worker's side of the wire: one JSON request line in, one JSON answer line out.
//
//   {"op":"init"}                          set up the device now -> {"ok":true,"device":{...}}
//   {"op":"probe"}                         ->
//   {"ok":true,"probe":{"driver_found":..,"devices":[..]}}
//   {"op":"measure", ...MeasureRequest}    -> {"ok":true,"result":{...MeasureResult}}
//   {"op":"time_baseline", ...BaselineTimingRequest} -> {"ok":true,"timing":{...},"baseline":{...}}
//   {"op":"measure_interleaved", ...InterleavedRequest} -> {"ok":true,"interleaved":{...}}
//                                          (a sticky fault in it: an error answer, "fatal":true)
//   {"op":"shutdown"}                      -> {"ok":true}, then the worker exits
//   anything malformed or failing          -> {"ok":false,"error":"..."}; the worker keeps serving
// An answer with "fatal":true means the context was lost (sticky fault): the worker exits right
// after writing it. Before such an answer the worker writes {"notice":"illegal_access",
// "reason":...} at the moment it sees the fault, so the daemon knows even if nothing follows.
// Test-only ops, accepted when KT_WORKER_DEBUG_OPS=1 is set in the worker's environment:
//   {"op":"debug_sleep","ms":N}  {"op":"debug_exit","signal":N,"notice":"illegal_access"?}
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "worker/baseline.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/variant_measurement.hpp"
#include "worker/worker_device.hpp"

namespace kt {

class WorkerSession {
 public:
  // notice: writes one line to the daemon immediately (used before the answer of a fatal error).
  WorkerSession(int device_ordinal, NoticeFn notice);
  ~WorkerSession();

  struct Answer {
    std::string line;           // the JSON answer, one line
    bool exit_after = false;    // shutdown, or the context is gone
    bool context_lost = false;  // exit without touching CUDA again
  };
  // Never throws.
  Answer handle_line(const std::string& line);

 private:
  nlohmann::json handle(const nlohmann::json& request, Answer& answer);
  WorkerDevice& device();
  nlohmann::json measure(const nlohmann::json& request, Answer& answer);
  nlohmann::json time_baseline(const nlohmann::json& request);
  // The baseline's output on the buffers against the fp32 reference of the same inputs.
  ErrorSummary check_baseline(const ProblemInstance& problem, ProblemBuffers& buffers,
                              Baseline& baseline, const Tolerance& tolerance);
  nlohmann::json measure_interleaved(const nlohmann::json& request);
  nlohmann::json debug_op(const std::string& op, const nlohmann::json& request);

  int ordinal_;
  NoticeFn notice_;
  std::unique_ptr<WorkerDevice> device_;
  std::optional<std::string> device_failure_;  // remembered: setting up is not retried
};

}  // namespace kt
