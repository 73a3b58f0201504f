#include "engine/compile_client.hpp"

#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "engine/child_process.hpp"
#include "tuner/compile/compile_protocol.hpp"

namespace kt {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kExitGrace{2000};

std::string seconds_text(std::chrono::milliseconds ms) {
  return fmt::format("{:g} s", static_cast<double>(ms.count()) / 1000.0);
}

}  // namespace

struct CompileClient::Process {
  ChildProcess child;
  std::set<std::string> headers_sent;  // headers_id of the header sets this child holds
  explicit Process(const CompileProcessOptions& options)
      : child(options.exe,
              options.confined ? std::vector<std::string>{"--compile", "--confined"}
                               : std::vector<std::string>{"--compile"},
              options.user) {}
};

CompileClient::CompileClient(CompileProcessOptions options) : options_(std::move(options)) {}

CompileClient::~CompileClient() {
  if (!process_ || !process_->child.running()) return;
  process_->child.write_line(R"({"op":"shutdown"})");
  process_->child.wait(kExitGrace);
}

pid_t CompileClient::pid() const {
  return process_ && process_->child.running() ? process_->child.pid() : -1;
}

CompileReply CompileClient::compile(const CompileRequest& request) {
  CompileReply reply;
  const auto start = Clock::now();
  if (!process_ || !process_->child.alive()) {
    process_.reset();
    try {
      process_ = std::make_unique<Process>(options_);
    } catch (const std::exception& e) {
      reply.reason = std::string("the NVRTC process could not be started: ") + e.what();
      return reply;
    }
    ++starts_;
    spdlog::debug("compile process started (pid {}, start #{})", process_->child.pid(), starts_);
  }
  ChildProcess& child = process_->child;
  const auto deadline = start + options_.timeout;
  // The family's sources go along only when this process has not had them yet.
  nlohmann::json body = to_json(request, /*with_headers=*/false);
  const std::string id = body.at("headers_id").get<std::string>();
  bool with_headers = !process_->headers_sent.contains(id);
  for (int attempt = 0;; ++attempt) {
    if (with_headers) {
      body = to_json(request, /*with_headers=*/true);
      ++headers_sent_;
    }
    const nlohmann::json line = {{"op", "compile"}, {"request", body}};
    std::string answer;
    auto status = ChildProcess::ReadStatus::eof;
    switch (child.write_line(line.dump(), deadline)) {
      case ChildProcess::WriteStatus::written:
        status = child.read_line(answer, deadline);
        break;
      case ChildProcess::WriteStatus::timeout:  // it stopped reading: as silent as a hang
        status = ChildProcess::ReadStatus::timeout;
        break;
      case ChildProcess::WriteStatus::closed:
        break;
    }
    if (status == ChildProcess::ReadStatus::timeout) {
      const std::string how = child.kill();
      process_.reset();
      reply.outcome = CompileReply::Outcome::timed_out;
      reply.reason = "NVRTC gave no result within " + seconds_text(options_.timeout) +
                     "; the compile process was killed (" + how + ")";
      return reply;
    }
    if (status == ChildProcess::ReadStatus::eof) {
      const std::string how = child.wait(kExitGrace);
      process_.reset();
      reply.reason = "the NVRTC process died while compiling (" + how + ")";
      return reply;
    }
    nlohmann::json answered = nlohmann::json::parse(answer, nullptr, /*allow_exceptions=*/false);
    if (answered.is_object() && answered.value("unknown_headers", false) && !with_headers &&
        attempt == 0) {
      with_headers = true;  // it dropped them (or never had them): send them again
      continue;
    }
    if (answered.is_object() && answered.contains("ok") && answered["ok"] == false)
      throw CompileRefused(
          "the compile process (" + options_.exe.string() +
          ") refused the request: " + answered.value("error", std::string("no reason given")));
    try {
      if (!answered.is_object()) throw std::runtime_error(answer.substr(0, 200));
      reply.result = compile_result_from_json(answered.at("result"));
      process_->headers_sent.insert(id);
      break;
    } catch (const std::exception& e) {
      const std::string how = child.kill();
      process_.reset();
      reply.reason = std::string("unreadable answer from the NVRTC process (") + e.what() +
                     "); it was killed (" + how + ")";
      return reply;
    }
  }
  reply.outcome = CompileReply::Outcome::answered;
  reply.result.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return reply;
}

CompileReply compile_in_child(const CompileProcessOptions& options, const CompileRequest& request) {
  thread_local std::unique_ptr<CompileClient> client;
  if (!client || !(client->options() == options)) client = std::make_unique<CompileClient>(options);
  return client->compile(request);
}

}  // namespace kt
