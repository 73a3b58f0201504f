// The worker's side of an interleaved re-measure (interleaved_protocol.hpp): every candidate is
// loaded with its own buffers (fresh seeded inputs, as for measure) and nothing is re-validated
// (the candidates were validated when they were measured). Each is warmed up and set to events
// or a graph as in a single measurement; then rounds A B C A B C ..., every sample L2-flushed and
// judged by the NVML readings around it, until each candidate's kept samples meet the noise
// target (with min_trials), or max_trials rounds' worth of samples, or candidates * max_seconds
// of trials. winner_comparison.hpp decides from the samples.
#pragma once

#include "tuner/interleaved_protocol.hpp"
#include "worker/worker_device.hpp"

namespace kt {

// Throws std::invalid_argument for a malformed request (no candidates, unknown buffer),
// std::runtime_error for an unreadable cubin and CudaError when the driver fails: a sticky one
// means the context is gone.
InterleavedResult measure_interleaved(WorkerDevice& device, const InterleavedRequest& request);

}  // namespace kt
