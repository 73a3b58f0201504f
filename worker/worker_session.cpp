#include "worker/worker_session.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "worker/baseline.hpp"
#include "worker/device_probe.hpp"
#include "worker/driver_api.hpp"
#include "worker/interleaved_measurement.hpp"
#include "worker/output_check.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"
#include "worker/timing.hpp"
#include "worker/validator.hpp"

namespace kt {
namespace {

nlohmann::json error_answer(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}

bool debug_ops_enabled() {
  const char* flag = std::getenv("KT_WORKER_DEBUG_OPS");
  return flag != nullptr && std::string(flag) == "1";
}

}  // namespace

WorkerSession::WorkerSession(int device_ordinal, NoticeFn notice)
    : ordinal_(device_ordinal), notice_(std::move(notice)) {}

WorkerSession::~WorkerSession() = default;

WorkerDevice& WorkerSession::device() {
  if (device_) return *device_;
  if (device_failure_) throw std::runtime_error(*device_failure_);
  try {
    const auto begin = std::chrono::steady_clock::now();
    device_ = std::make_unique<WorkerDevice>(ordinal_);
    spdlog::info("worker: device {} ready ({}, {}) in {:.1f} s", ordinal_, device_->info.name,
                 device_->info.arch,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    if (!device_->clocks)
      spdlog::warn("worker: no NVML ({}): timing without clock checks (sm_clock_mhz -1)",
                   device_->clocks_unavailable);
  } catch (const std::exception& e) {
    device_failure_ = std::string("device ") + std::to_string(ordinal_) + ": " + e.what();
    throw std::runtime_error(*device_failure_);
  }
  return *device_;
}

WorkerSession::Answer WorkerSession::handle_line(const std::string& line) {
  Answer answer;
  nlohmann::json body;
  try {
    const nlohmann::json request = nlohmann::json::parse(line);
    if (!request.is_object()) throw std::invalid_argument("a request must be a JSON object");
    body = handle(request, answer);
  } catch (const nlohmann::json::parse_error& e) {
    body = error_answer(std::string("malformed request: ") + e.what());
  } catch (const cuda::CudaError& e) {
    body = error_answer(e.what());
    if (cuda::is_context_lost(e.code())) {
      answer.context_lost = answer.exit_after = true;
      body["fatal"] = true;
    }
  } catch (const std::exception& e) {
    body = error_answer(e.what());
  }
  answer.line = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return answer;
}

nlohmann::json WorkerSession::handle(const nlohmann::json& request, Answer& answer) {
  if (!request.contains("op") || !request["op"].is_string())
    throw std::invalid_argument("missing field 'op'");
  const std::string op = request["op"].get<std::string>();
  if (op == "init") return {{"ok", true}, {"device", to_json(device().info)}};
  if (op == "probe") return {{"ok", true}, {"probe", probe_json()}};
  if (op == "measure") return measure(request, answer);
  if (op == "time_baseline") return time_baseline(request);
  if (op == "measure_interleaved") return measure_interleaved(request);
  if (op == "shutdown") {
    answer.exit_after = true;
    return {{"ok", true}};
  }
  if (op.rfind("debug_", 0) == 0 && debug_ops_enabled()) return debug_op(op, request);
  throw std::invalid_argument("unknown op '" + op + "'");
}

nlohmann::json WorkerSession::measure(const nlohmann::json& request, Answer& answer) {
  const MeasureRequest parsed = measure_request_from_json(request);
  const MeasureOutcome outcome = measure_variant(device(), parsed, notice_);
  nlohmann::json body = {{"ok", true}, {"result", to_json(outcome.result)}};
  if (outcome.context_lost) {
    body["fatal"] = true;
    answer.context_lost = answer.exit_after = true;
  }
  spdlog::info("worker: variant {} {} {}", parsed.variant_id, to_string(outcome.result.status),
               outcome.result.reason);
  return body;
}

ErrorSummary WorkerSession::check_baseline(const ProblemInstance& problem, ProblemBuffers& buffers,
                                           Baseline& baseline, const Tolerance& tolerance) {
  WorkerDevice& dev = device();
  const auto reference = make_reference(problem, buffers, dev.cublas, dev.support);
  // The reference reads the inputs only: its output and magnitude are computed before the
  // baseline runs on the same buffers.
  const ReferenceResults computed = compute_reference(*reference, tolerance, dev.stream.get());
  buffers.poison_outputs(dev.stream.get());
  baseline.launch(dev.stream.get());
  dev.stream.synchronize();
  return check_output(buffers, *reference, computed, tolerance);
}

nlohmann::json WorkerSession::time_baseline(const nlohmann::json& request) {
  const BaselineTimingRequest parsed = baseline_timing_request_from_json(request);
  WorkerDevice& dev = device();
  ProblemBuffers buffers(parsed.problem.buffers);
  buffers.prepare(dev.support, parsed.seed, dev.stream.get());
  const auto baseline = make_baseline(parsed.problem, buffers, dev);
  nlohmann::json answer = {{"ok", true}, {"baseline", baseline->describe()}};
  // A reference kernel timed for the watchdog writes fp32 elsewhere: nothing to check.
  const bool checkable = answer["baseline"].value("kind", std::string()) != "reference_kernel";
  if (parsed.tolerance && checkable) {
    // A library choice that computes a wrong result gives way to its next-fastest candidate. When
    // none is left the baseline is still timed (the hang watchdog scales with it) and the answer
    // says it failed validation: the job goes on against the reference alone.
    for (;;) {
      const ErrorSummary error =
          check_baseline(parsed.problem, buffers, *baseline, *parsed.tolerance);
      answer["error"] = to_json(error);
      if (passes(error)) break;
      const std::string why = describe(error);
      spdlog::warn("worker: the baseline {} computed a wrong result: {}",
                   baseline->describe().dump(), why);
      if (!baseline->reject_and_try_next(why)) {
        answer["validation_failed"] =
            "the baseline (" + baseline->describe().value("kind", std::string()) +
            ") computed a wrong result with every candidate it has; the last: " + why;
        break;
      }
    }
    answer["baseline"] = baseline->describe();
  }
  TimingPipeline pipeline(dev.stream.get(), &dev.flusher, dev.clocks.get());
  answer["timing"] =
      to_json(pipeline.run([&](CUstream stream) { baseline->launch(stream); }, parsed.timing));
  return answer;
}

nlohmann::json WorkerSession::measure_interleaved(const nlohmann::json& request) {
  const InterleavedRequest parsed = interleaved_request_from_json(request);
  const InterleavedResult result = kt::measure_interleaved(device(), parsed);
  spdlog::info("worker: interleaved re-measure of {} candidates: {}", parsed.candidates.size(),
               result.reason);
  return {{"ok", true}, {"interleaved", to_json(result)}};
}

nlohmann::json WorkerSession::debug_op(const std::string& op, const nlohmann::json& request) {
  if (op == "debug_sleep") {
    std::this_thread::sleep_for(std::chrono::milliseconds(request.value("ms", 1000)));
    return {{"ok", true}};
  }
  if (op == "debug_exit") {  // dies mid-request, as a crashing worker would
    if (request.contains("notice"))
      notice_({{"notice", request["notice"]}, {"reason", "debug_exit asked for it"}});
    const int signal = request.value("signal", 0);
    if (signal > 0) ::kill(::getpid(), signal);
    std::_Exit(request.value("status", 3));
  }
  throw std::invalid_argument("unknown op '" + op + "'");
}

}  // namespace kt
