#include "engine/worker_client.hpp"

#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "engine/child_process.hpp"
#include "engine/watchdog.hpp"

namespace kt {
namespace {

using Clock = std::chrono::steady_clock;

// How long a worker asked to exit (shutdown, or after a fatal answer) may take before SIGKILL.
constexpr std::chrono::milliseconds kExitGrace{3000};

std::string milliseconds_text(std::chrono::milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

MeasureResult failed_measure(std::int64_t variant_id, VariantStatus status, std::string reason) {
  MeasureResult result;
  result.variant_id = variant_id;
  result.status = status;
  result.failed_gate = "worker";
  result.reason = std::move(reason);
  return result;
}

VariantStatus status_of(WorkerReply::Outcome outcome) {
  switch (outcome) {
    case WorkerReply::Outcome::hang:
      return VariantStatus::hang;
    case WorkerReply::Outcome::illegal_access:
      return VariantStatus::illegal_access;
    default:
      return VariantStatus::crashed;
  }
}

std::string error_of(const nlohmann::json& body) {
  if (body.contains("error") && body["error"].is_string()) return body["error"].get<std::string>();
  return "no reason given";
}

bool answered_ok(const WorkerReply& reply) {
  return reply.outcome == WorkerReply::Outcome::answered && reply.body.value("ok", false);
}

}  // namespace

struct WorkerClient::Process {
  ChildProcess child;
  bool initialised = false;
  Process(const std::filesystem::path& exe, int ordinal, const std::optional<ProcessUser>& user)
      : child(exe, {"--device", std::to_string(ordinal)}, user) {}
};

WorkerClient::WorkerClient(std::filesystem::path worker_exe, int device_ordinal,
                           std::optional<ProcessUser> user)
    : worker_exe_(std::move(worker_exe)), device_ordinal_(device_ordinal), user_(std::move(user)) {}

WorkerClient::~WorkerClient() {
  stop();
}

void WorkerClient::stop() {
  if (!process_) return;
  if (process_->child.running()) {
    process_->child.write_line(R"({"op":"shutdown"})");
    const std::string how = process_->child.wait(kExitGrace);
    spdlog::debug("worker for device {} stopped: {}", device_ordinal_, how);
  }
  process_.reset();
}

void WorkerClient::ensure_running() {
  if (process_ && process_->child.alive()) return;  // one that died idle is replaced quietly
  process_.reset();
  process_ =
      std::make_unique<Process>(worker_exe_, device_ordinal_, user_);  // throws if exec fails
  ++starts_;
  spdlog::debug("worker for device {} started (pid {}, start #{})", device_ordinal_,
                process_->child.pid(), starts_);
}

std::optional<std::string> WorkerClient::ensure_initialised() {
  try {
    ensure_running();
  } catch (const std::exception& e) {
    return std::string("worker could not be started: ") + e.what();
  }
  if (process_->initialised) return std::nullopt;
  const WorkerReply reply = exchange(R"({"op":"init"})", startup_timeout_);
  if (answered_ok(reply)) {
    process_->initialised = true;
    return std::nullopt;
  }
  const std::string why =
      reply.outcome == WorkerReply::Outcome::answered ? error_of(reply.body) : reply.reason;
  stop();
  return "worker could not set up device " + std::to_string(device_ordinal_) + ": " + why;
}

WorkerReply WorkerClient::call(const nlohmann::json& request, std::chrono::milliseconds timeout) {
  try {
    ensure_running();
  } catch (const std::exception& e) {
    WorkerReply reply;
    reply.reason = std::string("worker could not be started: ") + e.what();
    return reply;
  }
  return exchange(request.dump(), timeout);
}

WorkerReply WorkerClient::exchange(const std::string& line, std::chrono::milliseconds timeout) {
  ChildProcess& child = process_->child;
  WorkerReply reply;
  std::optional<std::string> sticky_notice;  // the worker's last word before dying, if any
  const auto deadline = Clock::now() + timeout;
  if (child.write_line(line)) {
    for (;;) {
      std::string answer;
      const auto status = child.read_line(answer, deadline);
      if (status == ChildProcess::ReadStatus::timeout) {
        const std::string how = child.kill();
        reply.outcome = WorkerReply::Outcome::hang;
        reply.reason =
            "no answer within " + milliseconds_text(timeout) + "; worker killed (" + how + ")";
        process_.reset();
        return reply;
      }
      if (status == ChildProcess::ReadStatus::eof) break;
      nlohmann::json body = nlohmann::json::parse(answer, nullptr, /*allow_exceptions=*/false);
      if (!body.is_object()) {
        const std::string how = child.kill();
        reply.reason = "unreadable answer from the worker (" + answer.substr(0, 200) +
                       "); worker killed (" + how + ")";
        process_.reset();
        return reply;
      }
      if (body.contains("notice")) {  // sent before anything else can fail, e.g. a sticky fault
        if (body["notice"] == "illegal_access") sticky_notice = body.value("reason", "");
        continue;
      }
      reply.outcome = WorkerReply::Outcome::answered;
      reply.body = std::move(body);
      if (reply.body.value("fatal", false)) {  // the worker exits after this answer
        spdlog::debug("worker for device {} exiting after a fatal error: {}", device_ordinal_,
                      child.wait(kExitGrace));
        process_.reset();
      }
      return reply;
    }
  }
  // The worker died (EOF or a closed stdin): reap it and say how it ended.
  const std::string how = child.wait(kExitGrace);
  process_.reset();
  if (sticky_notice) {
    reply.outcome = WorkerReply::Outcome::illegal_access;
    reply.reason = *sticky_notice + " (worker " + how + ")";
  } else {
    reply.outcome = WorkerReply::Outcome::crashed;
    reply.reason = "worker died without answering: " + how;
  }
  return reply;
}

MeasureResult WorkerClient::measure(const MeasureRequest& request,
                                    std::chrono::milliseconds timeout) {
  if (auto failure = ensure_initialised())
    return failed_measure(request.variant_id, VariantStatus::crashed, *failure);
  nlohmann::json line = to_json(request);
  line["op"] = "measure";
  const WorkerReply reply = exchange(line.dump(), measure_watchdog(request, timeout));
  if (reply.outcome != WorkerReply::Outcome::answered)
    return failed_measure(request.variant_id, status_of(reply.outcome), reply.reason);
  if (!reply.body.value("ok", false) || !reply.body.contains("result"))
    throw std::runtime_error("worker rejected the measure request for variant " +
                             std::to_string(request.variant_id) + ": " + error_of(reply.body));
  return measure_result_from_json(reply.body["result"]);
}

InterleavedResult WorkerClient::measure_interleaved(const InterleavedRequest& request) {
  if (request.candidates.empty()) throw std::invalid_argument("measure_interleaved: no candidates");
  const auto per_candidate = std::chrono::milliseconds(20000) +
                             std::chrono::milliseconds(static_cast<long long>(
                                 request.timing.max_seconds * 3000.0));  // the runner's bound
  if (auto failure = ensure_initialised())
    throw WorkerError(WorkerReply::Outcome::crashed, *failure);
  nlohmann::json line = to_json(request);
  line["op"] = "measure_interleaved";
  const WorkerReply reply = exchange(line.dump(), interleaved_watchdog(request, per_candidate));
  if (reply.outcome != WorkerReply::Outcome::answered)
    throw WorkerError(reply.outcome, "interleaved re-measure: " +
                                         std::string(to_string(status_of(reply.outcome))) + ": " +
                                         reply.reason);
  if (!reply.body.value("ok", false) || !reply.body.contains("interleaved"))
    throw WorkerError(WorkerReply::Outcome::answered,
                      "worker rejected the interleaved re-measure: " + error_of(reply.body));
  try {
    return interleaved_result_from_json(reply.body["interleaved"]);
  } catch (const std::exception& e) {
    throw WorkerError(WorkerReply::Outcome::answered, e.what());
  }
}

std::optional<BaselineTiming> WorkerClient::time_baseline(const BaselineTimingRequest& request,
                                                          std::chrono::milliseconds timeout,
                                                          std::string* reason) {
  auto fail = [&](std::string why) -> std::optional<BaselineTiming> {
    if (reason != nullptr) *reason = std::move(why);
    return std::nullopt;
  };
  if (auto failure = ensure_initialised()) return fail(*failure);
  nlohmann::json line = to_json(request);
  line["op"] = "time_baseline";
  const WorkerReply reply = exchange(line.dump(), timeout);
  if (reply.outcome != WorkerReply::Outcome::answered)
    return fail(std::string(to_string(status_of(reply.outcome))) + ": " + reply.reason);
  if (!reply.body.value("ok", false) || !reply.body.contains("timing"))
    return fail(error_of(reply.body));
  try {
    BaselineTiming answer{timing_summary_from_json(reply.body["timing"]),
                          reply.body.value("baseline", nlohmann::json(nullptr)), std::nullopt};
    if (reply.body.contains("error") && reply.body["error"].is_object())
      answer.error = error_summary_from_json(reply.body["error"]);
    if (reply.body.contains("validation_failed") && reply.body["validation_failed"].is_string())
      answer.validation_failed = reply.body["validation_failed"].get<std::string>();
    return answer;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

ProbeResult probe_devices(const std::filesystem::path& worker_exe,
                          std::chrono::milliseconds timeout,
                          const std::optional<ProcessUser>& user) {
  ProbeResult result;
  try {
    ChildProcess child(worker_exe, {"--probe"}, user);
    child.close_stdin();
    std::string line;
    const auto status = child.read_line(line, Clock::now() + timeout);
    if (status != ChildProcess::ReadStatus::line) {
      const std::string how =
          status == ChildProcess::ReadStatus::timeout ? child.kill() : child.wait(kExitGrace);
      result.error =
          worker_exe.string() + " --probe gave no answer " +
          (status == ChildProcess::ReadStatus::timeout ? "within " + milliseconds_text(timeout)
                                                       : std::string("before exiting")) +
          " (" + how + ")";
      return result;
    }
    child.wait(kExitGrace);
    const nlohmann::json answer = nlohmann::json::parse(line);
    result.driver_found = answer.at("driver_found").get<bool>();
    result.error = answer.value("error", "");
    for (const auto& device : answer.value("devices", nlohmann::json::array()))
      result.devices.push_back(device_info_from_json(device));
  } catch (const std::exception& e) {
    result.driver_found = false;
    result.devices.clear();
    result.error = "probing devices with " + worker_exe.string() + " failed: " + e.what();
  }
  return result;
}

}  // namespace kt
