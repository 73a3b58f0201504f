// What the daemon asks a measurement worker and what it answers: JSON lines over the worker's
// stdin/stdout. Everything in a request is already evaluated (no expressions reach the worker).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/config.hpp"
#include "tuner/variant_status.hpp"

namespace kt {

struct BufferInstance {
  std::string name;
  std::string role;   // "input" | "output" | "scratch"
  std::string dtype;  // resolved: "bf16", "fp16", "f32", "i32", "u32", "e4m3", "e5m2"
  std::int64_t elements = 0;
  double range_low = -1.0, range_high = 1.0;  // an input's random values
};

struct ArgInstance {
  enum class Kind { buffer, i32, i64, f32, tensor_map };
  Kind kind = Kind::buffer;
  std::string buffer;  // for Kind::buffer and Kind::tensor_map
  double value = 0;    // for scalars
  // Kind::tensor_map: extents and box of a dense row-major view, innermost first; swizzle bytes.
  std::vector<std::int64_t> dims;
  std::vector<std::uint32_t> box;
  std::uint32_t swizzle = 0;
};
// "buffer", "i32", "i64", "f32", "tensor_map": the protocol's name of an argument kind.
const char* arg_kind_name(ArgInstance::Kind kind);

struct LaunchDims {
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};
  std::array<std::uint32_t, 3> cluster{1, 1, 1};
  std::uint32_t dynamic_smem = 0;
};

// A reference or a baseline, evaluated: its kind and params.
struct ReferenceInstance {
  std::string kind;       // "cublas_gemm", "kernel"; a baseline: "cublaslt_gemm", ...
  nlohmann::json params;  // buffer names and evaluated integers, e.g. {"a":"A","m":4096,...}
};

// One problem size, fully evaluated for one variant: buffers, kernel arguments, launch.
struct ProblemInstance {
  Shape shape;
  std::string dtype;  // "bf16" | "fp16"
  std::vector<BufferInstance> buffers;
  std::vector<ArgInstance> args;
  LaunchDims launch;
  ReferenceInstance reference;
  // The family's in-process baseline (what speedups are measured against); none: the reference's
  // own-dtype run stands in for it.
  std::optional<ReferenceInstance> baseline;
  double flops = 0;
  double bytes = 0;
};

struct TimingOptions {
  int warmup_runs = 3;
  int min_trials = 10;
  int max_trials = 500;
  double max_seconds = 2.0;         // per variant, timed trials only
  double target_rel_noise = 0.005;  // stop once the median's relative noise is below this
  bool flush_l2 = true;
  // A kernel whose first estimate is below graph_below_us is timed as a CUDA graph of N launches
  // (N so that one graph runs >= graph_batch_us): launch overhead no longer dominates. 0: never.
  double graph_below_us = 10.0;
  double graph_batch_us = 50.0;
};

struct TimingSummary {
  double median_us = 0, min_us = 0, p10_us = 0, p90_us = 0, mean_us = 0;
  double rel_noise = 0;  // relative spread of the median estimate
  int trials = 0;
  bool converged = false;              // rel_noise reached the target before the limits
  std::string method = "events";       // "events": one launch per sample; "graph": a CUDA graph
  int launches_per_sample = 1;         // graph: launches per graph; every *_us is per launch
  int discarded_samples = 0;           // dropped because NVML said the GPU was throttling
  int sm_clock_mhz = -1;               // median SM clock over the kept samples; -1 without NVML
  std::uint64_t throttle_reasons = 0;  // NVML clock-event bits OR-ed over all samples
};

// What "correct" means for an output of one dtype (a family manifest's tolerance.<dtype>): an
// element is bad when it is not finite or |out - ref| > atol + rtol * |ref| + magnitude * u * m,
// and the whole output also needs rel_l2 <= max_rel_l2. The last term grows with what was summed:
// m is the reference's magnitude of the element (|A|*|B|^T for a GEMM) and u = u(dtype, K) the
// unit roundoff its error grows by (tuner/error_bound.hpp); magnitude 0: no such term. All zero:
// an exact match. JSON: {"atol", "rtol", "rel_l2"} plus "magnitude" when it is not 0.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double max_rel_l2 = 0;
  double magnitude = 0;  // c of the magnitude term
  bool operator==(const Tolerance&) const = default;
};

// The magnitude term of one check as it was evaluated for the problem, so a reader of a stored
// result knows what "correct" meant: allowed |out - ref| <= atol + rtol * |ref| + c * u * m.
// JSON: {"form", "c", "u", "u_out", "u_acc", "reduction", "magnitude"}.
struct MagnitudeBound {
  double c = 0;                // the tolerance's magnitude
  double u = 0;                // u(dtype, K) = u_out / sqrt(K) + u_acc
  double u_out = 0;            // unit roundoff of the output dtype (2^-8 bf16, 2^-11 fp16)
  double u_acc = 0;            // unit roundoff of the fp32 accumulation (2^-24)
  std::int64_t reduction = 1;  // K: how many products each element sums
  std::string magnitude;       // what m is, e.g. "|A|*|B|^T"
  bool operator==(const MagnitudeBound&) const = default;
};

struct ErrorSummary {
  double max_abs = 0;  // max |out - ref| over the finite elements
  double max_rel = 0;  // max |out - ref| / max |ref|
  double rel_l2 = 0;   // ||out - ref|| / ||ref|| over the finite elements
  // First element that is bad (non-finite, or outside atol + rtol * |ref|); -1: none.
  std::int64_t first_bad_index = -1;
  std::int64_t non_finite = 0;  // NaN/Inf (poison left unwritten shows up here)
  // Added with per-element checks; a summary written before them reads with the defaults.
  // Bad elements, the non-finite ones included (so non_finite <= bad_elements); -1: not counted.
  std::int64_t bad_elements = -1;
  double first_bad_output = 0;     // the first bad element as the kernel wrote it (may be NaN)
  double first_bad_reference = 0;  // and as the reference has it
  std::optional<Tolerance> tolerance{};  // what the output was checked against
  // Empty when every output's guard regions are intact, else what was damaged first
  // ("wrote past the end of C: guard after C damaged at byte 0").
  std::string guard_damage{};
  // Added with the magnitude term; a summary written before it reads with the defaults.
  std::optional<MagnitudeBound> magnitude_bound{};  // the term's constants, when it had one
  double first_bad_magnitude = 0;  // m at the first bad element (0 without the term)
  double first_bad_allowed = 0;    // the bound |out - ref| had to meet there
  // max over the finite elements of |out - ref| / allowed: how much of the bound a correct output
  // used (near 1: the bound is tight for this kernel); Inf when an exact match was required and
  // missed; -1: not computed.
  double max_bound_fraction = -1;
};

struct MeasureRequest {
  std::int64_t variant_id = 0;
  std::string cubin_path;
  std::string kernel;
  std::optional<ProblemInstance> smoke;  // run and checked first, if present
  ProblemInstance full;
  Tolerance tolerance;  // the family's for the job's dtype
  std::uint64_t seed = 1;
  TimingOptions timing;
  bool time = true;         // false: correctness only
  double reference_us = 0;  // the job's reference time; 0 = unknown. Sets the hang watchdog.
};

struct MeasureResult {
  std::int64_t variant_id = 0;
  VariantStatus status = VariantStatus::pending;
  std::string failed_gate;  // "smoke", "full", "launch", "load", "timing", ...
  std::string reason;
  std::optional<ErrorSummary> error;
  std::optional<TimingSummary> timing;
  int registers = -1;  // from the loaded function, -1 if unknown
  int static_smem_bytes = -1;
};

// Times the family's baseline (problem.baseline, or the reference's own-dtype run) on the problem.
struct BaselineTimingRequest {
  ProblemInstance problem;
  std::uint64_t seed = 1;
  TimingOptions timing;
  // With one, the baseline's output is first checked against the reference like a variant's:
  // a baseline that computes something else cannot stand behind a speedup.
  std::optional<Tolerance> tolerance;
};

// The answer: the baseline's timing and what it was (kind, and a library's chosen algorithm).
struct BaselineTiming {
  TimingSummary timing;
  nlohmann::json baseline;
  std::optional<ErrorSummary> error;  // the check's, when the request asked for one
  // Set when every candidate of the baseline computed a wrong result: the timing is then of the
  // last one, good for the hang watchdog only, never for a speedup.
  std::optional<std::string> validation_failed;
};

nlohmann::json to_json(const ProblemInstance& p);
ProblemInstance problem_instance_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TimingOptions& t);
TimingOptions timing_options_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TimingSummary& t);
TimingSummary timing_summary_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Tolerance& t);
Tolerance tolerance_from_json(const nlohmann::json& j);
nlohmann::json to_json(const MagnitudeBound& b);
MagnitudeBound magnitude_bound_from_json(const nlohmann::json& j);
nlohmann::json to_json(const ErrorSummary& e);
ErrorSummary error_summary_from_json(const nlohmann::json& j);
nlohmann::json to_json(const MeasureRequest& r);
MeasureRequest measure_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const MeasureResult& r);
MeasureResult measure_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const BaselineTimingRequest& r);
BaselineTimingRequest baseline_timing_request_from_json(const nlohmann::json& j);

}  // namespace kt
