// kerntuned: the kerntune daemon. Opens the store, loads the kernel families, probes the GPUs
// through the worker, starts the job scheduler and serves the HTTP API until SIGINT/SIGTERM.
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "engine/worker_client.hpp"
#include "server/app_context.hpp"
#include "server/http_server.hpp"
#include "tuner/family.hpp"
#include "tuner/paths.hpp"

namespace {

struct DaemonOptions {
  std::string listen = "127.0.0.1:8080";
  std::filesystem::path db = "kerntune.db";
  std::filesystem::path families_dir = kt::default_families_dir();
  std::filesystem::path worker = kt::default_worker_path();
  std::filesystem::path work_dir;  // default: <db>.work next to the db
  int compile_threads = 0;
  int io_threads = 2;
  std::string log_level = "info";
};

void load_families(kt::FamilyRegistry& registry, const std::filesystem::path& dir) {
  try {
    registry.load_root(dir);
  } catch (const std::exception& error) {
    spdlog::error("cannot load families from {}: {}", dir.string(), error.what());
  }
  for (const kt::Family* family : registry.all()) {
    std::size_t axes = 0;
    for (const auto& tmpl : family->templates) axes += tmpl.axes.size();
    spdlog::info("family {}: {} template(s), {} axes, dtypes {}", family->name,
                 family->templates.size(), axes, fmt::join(family->dtypes, "/"));
  }
  for (const std::string& error : registry.errors()) spdlog::error("family not loaded: {}", error);
  if (registry.all().empty()) spdlog::warn("no kernel family loaded from {}", dir.string());
}

kt::ProbeResult probe(kt::Store& store, const std::filesystem::path& worker) {
  kt::ProbeResult result = kt::probe_devices(worker);
  if (result.devices.empty())
    spdlog::warn("no GPU: {} (compile-only jobs still run)",
                 result.error.empty() ? "no device found" : result.error);
  for (const kt::DeviceInfo& device : result.devices) {
    store.upsert_device(device);
    spdlog::info("GPU {}: {} ({}, {} SMs, {})", device.ordinal, device.name, device.arch,
                 device.sm_count, device.uuid);
  }
  return result;
}

int run_daemon(const DaemonOptions& options) {
  const kt::ListenAddress address = kt::parse_listen_address(options.listen);
  // Registered first, so a signal during the (slow) start-up still ends in a clean stop.
  boost::asio::io_context signals_io;
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
  signals.async_wait([](const boost::system::error_code& ec, int signal) {
    if (!ec) spdlog::info("signal {}: stopping", signal);
  });
  kt::Store store(options.db);
  spdlog::info("store {} (schema v{})", options.db.string(), store.schema_version());

  kt::FamilyRegistry families;
  load_families(families, options.families_dir);
  const kt::ProbeResult devices = probe(store, options.worker);

  kt::SchedulerOptions scheduler_options;
  scheduler_options.worker_exe = options.worker;
  scheduler_options.work_dir = options.work_dir.empty()
                                   ? std::filesystem::path(options.db.string() + ".work")
                                   : options.work_dir;
  scheduler_options.compile_threads = options.compile_threads;
  std::filesystem::create_directories(scheduler_options.work_dir);
  kt::JobScheduler scheduler(store, families, scheduler_options, devices.devices);
  scheduler.start();

  kt::AppContext context{store, families, scheduler, devices.devices, devices.error};
  kt::ServerOptions server_options;
  server_options.listen = address;
  server_options.io_threads = options.io_threads;
  kt::HttpServer server(context, server_options);
  server.start();
  // The line scripts and tests wait for; it carries the real port when asked for port 0.
  spdlog::info("kerntuned listening on http://{}:{}", address.host, server.port());

  signals_io.run();  // returns once SIGINT/SIGTERM arrived

  server.stop();
  scheduler.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  DaemonOptions options;
  CLI::App app{"kerntuned: tunes CUDA kernels submitted over HTTP"};
  app.add_option("--listen", options.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--db", options.db, "SQLite database file")->capture_default_str();
  app.add_option("--families", options.families_dir, "folder of kernel families")
      ->capture_default_str();
  app.add_option("--worker", options.worker, "measurement worker executable")
      ->capture_default_str();
  app.add_option("--work-dir", options.work_dir, "scratch folder for cubins (default: <db>.work)");
  app.add_option("--compile-threads", options.compile_threads, "NVRTC threads (0: one per core)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--io-threads", options.io_threads, "HTTP I/O threads")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(options.log_level));
  // A worker that dies mid-write must not take the daemon with it.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run_daemon(options);
  } catch (const std::exception& error) {
    spdlog::critical("{}", error.what());
    return 1;
  }
}
