// kerntune-worker: the only kerntune process that touches the CUDA driver. One per GPU, started by
// the daemon (engine/worker_client.cpp): JSON request lines on stdin, answer lines on
// stdout (see worker_session.hpp), logs on stderr.
//
//   kerntune-worker --probe       one JSON line describing the host's GPUs; exit 0 even without a
//                                 driver ({"driver_found":false,"error":"..."})
//   kerntune-worker --device N    serve requests for GPU N until EOF or {"op":"shutdown"}
//   kerntune-worker --compile     serve NVRTC compile requests (compile_server.hpp); no CUDA
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "tuner/compile/compile_confinement.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "worker/compile_server.hpp"
#include "worker/device_probe.hpp"
#include "worker/worker_session.hpp"

namespace {

// The protocol's own descriptor. Standard output itself is pointed at stderr, so a library that
// prints (the driver, cuBLAS) can never corrupt the protocol stream.
int take_over_stdout() {
  const int protocol = dup(STDOUT_FILENO);
  if (protocol < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("kerntune-worker: redirecting stdout");
    std::exit(2);
  }
  return protocol;
}

void write_line(int fd, const std::string& text) {
  const std::string line = text + '\n';
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) std::_Exit(4);  // the daemon is gone: nobody to answer
    written += static_cast<std::size_t>(n);
  }
}

int serve(int ordinal, int protocol_fd) {
  kt::WorkerSession session(ordinal, [protocol_fd](const nlohmann::json& notice) {
    write_line(protocol_fd, notice.dump());
  });
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const kt::WorkerSession::Answer answer = session.handle_line(line);
    write_line(protocol_fd, answer.line);
    if (answer.context_lost) {
      // The context is gone: leave without running destructors that would call into it.
      spdlog::error("worker: CUDA context lost; exiting so the daemon starts a fresh worker");
      spdlog::shutdown();
      std::_Exit(3);
    }
    if (answer.exit_after) return 0;
  }
  return 0;  // EOF: the daemon closed our stdin
}

// Compiles one empty kernel, so that NVRTC loads what it loads lazily (its builtins library)
// while it still may, then confines this process to reading the CUDA headers.
void confine_compiles() {
  kt::CompileRequest warm_up;
  warm_up.source_name = "kerntune_warm_up.cu";
  warm_up.source = "#include <cuda_fp16.h>\nextern \"C\" __global__ void kerntune_warm_up() {}\n";
  warm_up.kernel = "kerntune_warm_up";
  warm_up.arch = "sm_90a";
  const kt::CompileResult result = kt::compile_kernel(warm_up);
  if (!result.ok) spdlog::warn("compile process: the warm-up compile failed: {}", result.log);
  std::vector<std::filesystem::path> readable;
  if (const auto include = kt::cuda_include_dir()) readable.push_back(*include);
  kt::confine_to_reading(readable);
}

int serve_compiles(int protocol_fd, bool confined) {
  // A daemon killed with SIGKILL cannot end its compile processes, and one stuck in NVRTC would
  // outlive it: the kernel kills this one when the daemon's thread that started it ends.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) return 0;      // the daemon is already gone
  if (confined) {
    try {
      confine_compiles();
    } catch (const kt::ConfinementError& e) {
      // Never compile unconfined when asked not to: the daemon sees this process end.
      spdlog::error("compile process: cannot confine itself: {}", e.what());
      return 3;
    }
  }
  std::ios::sync_with_stdio(false);  // requests are a few hundred KiB of sources each
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const kt::CompileServerAnswer answer = kt::handle_compile_line(line);
    write_line(protocol_fd, answer.line);
    if (answer.exit_after) return 0;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kerntune measurement worker: loads, checks and times kernels on one GPU"};
  bool probe = false;
  bool compile = false;
  bool confined = false;
  int device = -1;
  app.add_flag("--probe", probe, "print one JSON line describing the GPUs and exit");
  app.add_flag("--compile", compile,
               "serve NVRTC compile requests on stdin/stdout (never touches CUDA)");
  app.add_flag("--confined", confined,
               "with --compile: read nothing but the CUDA headers once started (Landlock); "
               "exit with status 3 where the kernel cannot confine it");
  app.add_option("--device", device, "serve requests on stdin/stdout for this GPU ordinal")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  const int protocol_fd = take_over_stdout();
  spdlog::set_default_logger(spdlog::stderr_color_mt("kerntune-worker"));
  spdlog::set_pattern("[%H:%M:%S.%e] [worker %P] [%l] %v");

  if (probe) {
    write_line(protocol_fd, kt::probe_json().dump());
    return 0;
  }
  if (compile) return serve_compiles(protocol_fd, confined);
  if (device < 0) {
    std::cerr << "kerntune-worker: give --probe, --compile or --device N\n" << app.help();
    return 2;
  }
  return serve(device, protocol_fd);
}
