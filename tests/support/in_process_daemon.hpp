// A real kerntuned in-process on 127.0.0.1 (port 0): a Store on a temp file, the shipped
// families, a JobScheduler without GPUs (its worker finds no driver) and the HTTP server, started
// on construction and stopped on destruction. The integration tests' common fixture; header-only
// because only the integration binary links the server.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "db/store.hpp"
#include "engine/family_registrar.hpp"
#include "engine/job_scheduler.hpp"
#include "server/app_context.hpp"
#include "server/http_server.hpp"
#include "support/shipped_family.hpp"
#include "support/test_paths.hpp"
#include "support/test_scheduler_options.hpp"
#include "tuner/family.hpp"

namespace kt::test {

class InProcessDaemon {
 public:
  explicit InProcessDaemon(ServerOptions options = loopback_server())
      : store(dir.path() / "kerntune.db"),
        families(shipped_families()),
        scheduler(store, families, scheduler_options(dir.path()), {}),
        context{store, families, scheduler, {}, "libcuda.so.1: cannot open shared object"},
        server(context, std::move(options)) {
    scheduler.start();
    server.start();
    url = "http://127.0.0.1:" + std::to_string(server.port());
  }
  ~InProcessDaemon() {
    server.stop();
    registrar.reset();
    scheduler.stop();
  }

  // As kerntuned --allow-user-families: POST /v1/families open, registered families served.
  void allow_user_families() {
    registrar = std::make_unique<FamilyRegistrar>(
        store, families, dir.path() / "work" / "families",
        source_dir() / "kernel_templates" / kCommonSourcesFolder, std::vector<std::string>{},
        kDaemonTestCompileNice, CompileProcessOptions{binary_dir() / "kerntune-worker"});
    registrar->reload();
    context.registrar = registrar.get();
  }
  InProcessDaemon(const InProcessDaemon&) = delete;
  InProcessDaemon& operator=(const InProcessDaemon&) = delete;

  TempDir dir;
  Store store;
  FamilyRegistry families;
  JobScheduler scheduler;
  AppContext context;
  HttpServer server;
  std::unique_ptr<FamilyRegistrar> registrar;  // null until allow_user_families()
  std::string url;                             // http://127.0.0.1:<port>

  // 127.0.0.1, a free port, two I/O threads: start from these to change one.
  static ServerOptions loopback_server() {
    ServerOptions options;
    options.listen = {"127.0.0.1", 0};
    options.io_threads = 2;
    return options;
  }

 private:
  static SchedulerOptions scheduler_options(const std::filesystem::path& dir) {
    SchedulerOptions options = test_scheduler_options();
    options.worker_exe = binary_dir() / "kerntune-worker";
    options.work_dir = dir / "work";
    options.compile_threads = 2;
    return options;
  }
};

}  // namespace kt::test
