// Daemon side of a compile process: NVRTC runs in `kerntune-worker --compile`, a child that never
// touches CUDA, so that a compiler crash, abort or runaway compile ends that child and not the
// daemon. One request line, one answer line (tuner/compile/compile_protocol.hpp), over the pipes
// of engine/child_process.hpp. A child that dies or runs past the compile timeout is reported as
// such and replaced at the next compile.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/child_process.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {

// 120 s: the slowest shipped variants compile in a few seconds on a loaded 2-core machine.
inline constexpr std::chrono::milliseconds kDefaultCompileTimeout{120000};

struct CompileProcessOptions {
  std::filesystem::path exe;  // kerntune-worker
  std::chrono::milliseconds timeout = kDefaultCompileTimeout;
  // kerntune-worker --compile --confined: once started it reads nothing but the CUDA headers
  // (tuner/compile/compile_confinement.hpp); a process that cannot confine itself exits.
  bool confined = false;
  std::optional<ProcessUser> user{};  // the account it runs as; none: this process's
  bool operator==(const CompileProcessOptions&) const = default;
};

struct CompileReply {
  enum class Outcome {
    answered,   // result holds NVRTC's result (ok, or a compile error with its log)
    crashed,    // the compile process died (or could not be started) without answering
    timed_out,  // no answer within the timeout: the process was killed
  };
  Outcome outcome = Outcome::crashed;
  CompileResult result;  // answered only; compile_ms is the round trip seen by the daemon
  std::string reason;    // why there is no result, e.g. "the NVRTC process died with ..."
};

// The compile process answered that it cannot take the request at all (malformed, or a
// kerntune-worker of another version): not the variant's fault, and every variant would get the
// same answer, so it is an error of the job, not an outcome of the variant.
class CompileRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CompileClient {
 public:
  explicit CompileClient(CompileProcessOptions options);
  ~CompileClient();  // asks the child to exit, kills it after a grace period
  CompileClient(const CompileClient&) = delete;
  CompileClient& operator=(const CompileClient&) = delete;

  // Starts the child if needed (from the calling thread, whose scheduling policy and nice value
  // the child inherits), sends the request and waits for the answer. Throws CompileRefused when
  // the child refuses the request (it stays up).
  CompileReply compile(const CompileRequest& request);
  const CompileProcessOptions& options() const { return options_; }
  // The child's pid; -1 when none runs.
  pid_t pid() const;
  // How many times the child was (re)started.
  int starts() const { return starts_; }
  // How many requests carried their headers (the first of each set per child, and resends).
  int headers_sent() const { return headers_sent_; }

 private:
  struct Process;
  std::unique_ptr<Process> process_;
  CompileProcessOptions options_;
  int starts_ = 0;
  int headers_sent_ = 0;
};

// Compiles in the calling thread's own compile process, kept for the thread's lifetime (a
// thread_local client, ended when the thread exits): the compile pool's threads each have one,
// started on their first compile, under the pool thread's SCHED_IDLE or nice value.
CompileReply compile_in_child(const CompileProcessOptions& options, const CompileRequest& request);

}  // namespace kt
