// One measure request through the gates, in order; the first that fails decides the state:
//   load       cuModuleLoadData + the kernel        -> launch_failed / resource_exceeded
//   resources  registers, static + dynamic smem,
//              threads vs what the kernel allows    -> resource_exceeded
//   smoke      (optional small ragged instance) and
//   full       fresh random inputs, zeroed scratch, poisoned outputs between canary guards,
//              launch (cuLaunchKernelEx), synchronize, reference, validate every element and
//              check the guards                      -> launch_failed / resource_exceeded /
//                                                       illegal_access / wrong_result
//   timing     warm-up + cold trials (timing.hpp)    -> illegal_access / launch_failed
//   repeat     guards checked after the timed runs, outputs poisoned again, one more run,
//              validated: the kernel must stay correct when run many times (e.g. split-K
//              semaphores reset) -> wrong_result
//   -> measured.
// A sticky fault (the context is gone) is announced through `notice` the moment it is seen,
// before anything else can fail, and reported as context_lost: the worker must exit.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "tuner/measure_protocol.hpp"
#include "worker/worker_device.hpp"

namespace kt {

using NoticeFn = std::function<void(const nlohmann::json&)>;

struct MeasureOutcome {
  MeasureResult result;
  bool context_lost = false;
};

// Throws std::invalid_argument for a malformed request (unknown buffer, bad reference params)
// and std::runtime_error when the reference itself fails: neither is the variant's doing.
MeasureOutcome measure_variant(WorkerDevice& device, const MeasureRequest& request,
                               const NoticeFn& notice);

}  // namespace kt
