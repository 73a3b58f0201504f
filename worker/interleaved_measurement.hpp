// The worker's side of an interleaved re-measure (interleaved_protocol.hpp): every candidate is
// loaded with its own buffers (fresh seeded inputs, as for measure) and nothing is re-validated
// (the candidates were validated when they were measured). With a baseline in the request, it is
// built on its own buffers too (a library baseline picks its algorithm there) and is one more
// side of every round: A B C ... baseline.
//
// Every side is timed by the same method: each is warmed up and estimated, and if the shortest
// estimate calls for a CUDA graph (graph_batching.hpp), every side runs as a graph of the same
// number of launches; if any side cannot be captured, every side runs single launches with
// events. Then rounds, every sample L2-flushed and judged by the NVML readings around it, until
// each side's kept samples meet the noise target (with min_trials), or max_trials rounds' worth
// of samples, or sides * max_seconds of trials. winner_comparison.hpp decides from the samples.
#pragma once

#include "tuner/interleaved_protocol.hpp"
#include "worker/worker_device.hpp"

namespace kt {

// Throws std::invalid_argument for a malformed request (no candidates, unknown buffer),
// std::runtime_error for an unreadable cubin and CudaError when the driver fails: a sticky one
// means the context is gone.
InterleavedResult measure_interleaved(WorkerDevice& device, const InterleavedRequest& request);

}  // namespace kt
