#include "worker/worker_session.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "worker/device_probe.hpp"
#include "worker/driver_api.hpp"
#include "worker/interleaved_measurement.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"
#include "worker/timing.hpp"

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
  if (op == "time_reference") return time_reference(request, answer);
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

nlohmann::json WorkerSession::time_reference(const nlohmann::json& request, Answer& answer) {
  const ReferenceTimingRequest parsed = reference_timing_request_from_json(request);
  WorkerDevice& dev = device();
  ProblemBuffers buffers(parsed.problem.buffers);
  const auto reference = make_reference(parsed.problem, buffers, dev.cublas);
  buffers.prepare(dev.support, parsed.seed, dev.stream.get());
  TimingPipeline pipeline(dev.stream.get(), &dev.flusher, dev.clocks.get());
  const TimingSummary timing =
      pipeline.run([&](CUstream stream) { reference->run_native(stream); }, parsed.timing);
  return {{"ok", true}, {"timing", to_json(timing)}};
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
