// kerntuned: the kerntune daemon. Opens the store, loads the kernel families, probes the GPUs
// through the worker, starts the job scheduler and serves the HTTP API until SIGINT/SIGTERM.
// What would only fail later, request by request (a database it cannot write, no kernel family),
// is checked before serving: the daemon exits with a message saying what to fix. So is access
// control: off loopback the daemon serves only with a bearer token (--token-file) or --insecure.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "db/connection.hpp"
#include "db/store.hpp"
#include "engine/compile_sandbox.hpp"
#include "engine/family_registrar.hpp"
#include "engine/job_scheduler.hpp"
#include "engine/predicted_checks.hpp"
#include "engine/shape_predictors.hpp"
#include "engine/worker_client.hpp"
#include "server/access_control.hpp"
#include "server/app_context.hpp"
#include "server/http_server.hpp"
#include "tuner/family.hpp"
#include "tuner/paths.hpp"
#include "tuner/search/recorded_space_file.hpp"
#include "tuner/space_size.hpp"

namespace {

// How long a SIGINT/SIGTERM may take: jobs pause (a planning job within kStopCheckInterval) and
// registrations are left for the next start, but a compile or a GPU task under way is waited
// for; past this the daemon exits anyway. The store stays consistent either way (every write is
// a transaction), and what was unfinished resumes at the next start.
constexpr std::chrono::seconds kStopBound{10};

// Ends the process kStopBound after the stop began, unless main returned first.
void arm_stop_bound() {
  std::thread([] {
    std::this_thread::sleep_for(kStopBound);
    spdlog::warn(
        "still stopping after {} s: exiting now; unfinished work resumes at the next start",
        kStopBound.count());
    spdlog::default_logger()->flush();
    std::_Exit(0);
  }).detach();
}

struct DaemonOptions {
  std::string listen = "127.0.0.1:8080";
  std::filesystem::path db = "kerntune.db";
  std::filesystem::path families_dir = kt::default_families_dir();
  std::filesystem::path worker = kt::default_worker_path();
  std::filesystem::path web_dir = kt::default_web_dir();
  std::filesystem::path work_dir;  // default: <db>.work next to the db (PostgreSQL: kerntune.work)
  int compile_threads = 0;
  int compile_nice = kt::kIdleNice;
  double compile_timeout_seconds = 120;  // a compile process silent this long is killed
  double lease_seconds = 30;             // a daemon's claim on variants without a heartbeat
  double heartbeat_seconds = 0;          // 0: a third of the lease
  int io_threads = 2;
  int query_threads = kt::kDefaultReadConnections;
  std::size_t max_connections = kt::kDefaultMaxConnections;
  std::size_t max_event_streams = kt::kDefaultMaxEventStreams;
  bool allow_empty = false;                   // serve even when no kernel family loads
  std::filesystem::path token_file;           // empty: no token required
  bool insecure = false;                      // serve off loopback without a token
  bool public_reads = false;                  // with a token: GET and HEAD need none
  std::vector<std::string> predictor_spaces;  // recorded spaces the shape predictors also fit on
  bool allow_user_families = false;           // POST /v1/families registers a client's family
  bool unconfined_compiles = false;  // compile uploads even where Landlock cannot confine them
  std::string run_as = "nobody";     // compile processes' account when the daemon is root
  std::string log_level = "info";
};

// A condition the user has to fix before the daemon can serve; main prints it on stderr.
class StartupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The files a start creates (the SQLite store and its journals, the work folder) are removed when
// the start is refused: a daemon that never served leaves nothing to clean up. Once it serves,
// keep() leaves them.
class CreatedByStart {
 public:
  explicit CreatedByStart(const std::vector<std::filesystem::path>& paths) {
    for (const auto& path : paths) {
      std::error_code ec;
      if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
        created_.push_back(path);
    }
  }
  ~CreatedByStart() {
    for (const auto& path : created_) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  }
  CreatedByStart(const CreatedByStart&) = delete;
  CreatedByStart& operator=(const CreatedByStart&) = delete;
  void keep() { created_.clear(); }

 private:
  std::vector<std::filesystem::path> created_;
};

// A folder under the system's temporary folder that only the workers' account (and root) can
// enter, removed when the daemon stops: cubins are written again from the store when needed.
class WorkerCubinFolder {
 public:
  explicit WorkerCubinFolder(const kt::ProcessUser& user) {
    std::string pattern = (std::filesystem::temp_directory_path() / "kerntune-cubins-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr)
      throw StartupError("cannot create a cubin folder for the workers under " + pattern + ": " +
                         std::strerror(errno));
    path_ = pattern;
    if (chown(path_.c_str(), user.uid, user.gid) != 0)
      throw StartupError("cannot hand " + path_.string() + " to " + user.name + ": " +
                         std::strerror(errno));
  }
  ~WorkerCubinFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  WorkerCubinFolder(const WorkerCubinFolder&) = delete;
  WorkerCubinFolder& operator=(const WorkerCubinFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The database file (if it exists) and its folder must be writable: SQLite creates <db>-wal and
// <db>-shm next to the file, and a read-only store would answer every write with a 500.
void require_writable_database(const std::filesystem::path& db) {
  const std::filesystem::path folder = db.has_parent_path() ? db.parent_path() : ".";
  const std::string elsewhere = "pass --db with a path in a folder this user can write";
  std::error_code ec;
  const auto folder_status = std::filesystem::status(folder, ec);
  if (!std::filesystem::exists(folder_status))
    throw StartupError("database " + db.string() + ": its folder " + folder.string() +
                       " does not exist: create it (mkdir -p " + folder.string() + "), or " +
                       elsewhere);
  if (!std::filesystem::is_directory(folder_status))
    throw StartupError("database " + db.string() + ": " + folder.string() +
                       " is not a folder: " + elsewhere);
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    throw StartupError("database " + db.string() + ": its folder " + folder.string() +
                       " is not writable (" + std::strerror(errno) +
                       "), and SQLite creates its -wal and -shm files there: make it writable "
                       "(chmod u+w " +
                       folder.string() + "), or " + elsewhere);
  if (std::filesystem::exists(db, ec) && access(db.c_str(), R_OK | W_OK) != 0)
    throw StartupError("database " + db.string() + " is not writable (" + std::strerror(errno) +
                       "): make it writable (chmod u+w " + db.string() + "), or " + elsewhere);
}

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
}

// Without a family every job is refused, which is almost always a wrong --families.
void require_families(const kt::FamilyRegistry& registry, const std::filesystem::path& dir,
                      bool allow_empty) {
  if (!registry.all().empty()) return;
  if (allow_empty) {
    spdlog::warn("no kernel family loaded from {} (--allow-empty: serving anyway)", dir.string());
    return;
  }
  const std::string failed =
      registry.errors().empty()
          ? ""
          : " (" + std::to_string(registry.errors().size()) + " failed to load, see the log)";
  throw StartupError(
      "no kernel family in " + dir.string() + failed +
      ": pass --families with a folder holding <family>/manifest.json (such as "
      "kernel_templates/ of the source tree), or --allow-empty to serve without one");
}

// Off loopback anyone on the network can reach the API, so serving there needs a token or the
// user's explicit --insecure. Checked before anything is opened or bound.
kt::AccessPolicy access_policy(const DaemonOptions& options, const kt::ListenAddress& address) {
  kt::AccessPolicy policy;
  policy.public_reads = options.public_reads;
  if (!options.token_file.empty()) {
    try {
      policy.token = kt::read_token_file(options.token_file);
    } catch (const std::runtime_error& error) {
      throw StartupError(error.what());
    }
  }
  const bool loopback = kt::is_loopback_host(address.host);
  if (!policy.token && !loopback && !options.insecure)
    throw StartupError("listening on " + address.host +
                       " (not a loopback address) lets anyone on the network submit jobs: pass "
                       "--token-file PATH (a private file whose first line is the token clients "
                       "send as \"Authorization: Bearer <token>\"), or --insecure to serve "
                       "without access control, or --listen 127.0.0.1:PORT to serve this machine "
                       "only");
  if (policy.token)
    spdlog::info("access control: bearer token required for {}",
                 policy.public_reads ? "submitting and cancelling (--public-reads)"
                                     : "every request but /healthz");
  else if (!loopback)
    spdlog::warn("access control: none (--insecure) on non-loopback address {}", address.host);
  if (policy.public_reads && !policy.token)
    spdlog::warn("--public-reads has no effect without --token-file: everything is open");
  return policy;
}

kt::ProbeResult probe(kt::Store& store, const std::filesystem::path& worker,
                      const std::optional<kt::ProcessUser>& user) {
  kt::ProbeResult result = kt::probe_devices(worker, std::chrono::seconds(60), user);
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

std::chrono::milliseconds compile_timeout(const DaemonOptions& options) {
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(std::max(1.0, options.compile_timeout_seconds * 1000.0)));
}

// Families clients registered (--allow-user-families): served again from the store, and
// POST /v1/families open. Without the option they stay in the store, unserved.
std::unique_ptr<kt::FamilyRegistrar> user_families(const DaemonOptions& options, kt::Store& store,
                                                   kt::FamilyRegistry& families,
                                                   const std::filesystem::path& work_dir,
                                                   const std::vector<kt::DeviceInfo>& devices,
                                                   const kt::CompileSandbox& sandbox) {
  if (!options.allow_user_families) {
    if (const auto stored = store.registered_families(); !stored.empty())
      spdlog::warn("{} registered famil{} in the store not served: --allow-user-families is off",
                   stored.size(), stored.size() == 1 ? "y" : "ies");
    return nullptr;
  }
  std::vector<std::string> archs;
  for (const kt::DeviceInfo& device : devices) archs.push_back(device.arch);
  auto registrar = std::make_unique<kt::FamilyRegistrar>(
      store, families, work_dir / "families", options.families_dir / kt::kCommonSourcesFolder,
      archs, options.compile_nice,
      kt::CompileProcessOptions{options.worker, compile_timeout(options), sandbox.confined,
                                sandbox.user});
  const std::size_t loaded = registrar->reload();
  spdlog::info(
      "families over the API: on (POST /v1/families); {} registered famil{} served from {}", loaded,
      loaded == 1 ? "y" : "ies", registrar->root().string());
  return registrar;
}

int run_daemon(const DaemonOptions& options) {
  const kt::ListenAddress address = kt::parse_listen_address(options.listen);
  const kt::AccessPolicy access = access_policy(options, address);
  // Registered first, so a signal during the (slow) start-up still ends in a clean stop.
  boost::asio::io_context signals_io;
  boost::asio::signal_set signals(signals_io, SIGINT, SIGTERM);
  signals.async_wait([](const boost::system::error_code& ec, int signal) {
    if (!ec) spdlog::info("signal {}: stopping", signal);
  });
  kt::CompileSandbox sandbox;
  try {
    sandbox = kt::choose_compile_sandbox(
        {options.worker, options.allow_user_families, options.unconfined_compiles, options.run_as});
  } catch (const kt::CompileSandboxError& error) {
    throw StartupError(error.what());
  }
  for (const std::string& note : sandbox.notes) spdlog::info("{}", note);
  for (const std::string& warning : sandbox.warnings) spdlog::warn("{}", warning);
  const bool postgresql = kt::db::is_postgresql_uri(options.db.string());
  if (!postgresql) require_writable_database(options.db);
  // Next to an SQLite file; in the current folder for a PostgreSQL store.
  const std::filesystem::path configured_work_dir =
      !options.work_dir.empty() ? options.work_dir
      : postgresql              ? std::filesystem::path("kerntune.work")
                                : std::filesystem::path(options.db.string() + ".work");
  std::vector<std::filesystem::path> start_files{configured_work_dir};
  if (!postgresql)
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      start_files.emplace_back(options.db.string() + suffix);
  CreatedByStart created(start_files);  // before the store: removed after it closes
  std::unique_ptr<kt::Store> opened;
  try {
    opened = std::make_unique<kt::Store>(options.db, options.query_threads);
  } catch (const std::exception& error) {
    throw StartupError(error.what());  // it names the path and the reason
  }
  kt::Store& store = *opened;
  spdlog::info("store {} (schema v{})", kt::db::redacted_location(options.db.string()),
               store.schema_version());

  kt::FamilyRegistry families;
  load_families(families, options.families_dir);
  const kt::ProbeResult devices = probe(store, options.worker, sandbox.user);

  kt::SchedulerOptions scheduler_options;
  scheduler_options.worker_exe = options.worker;
  scheduler_options.work_dir = configured_work_dir;
  scheduler_options.compile_threads = options.compile_threads;
  scheduler_options.compile_nice = options.compile_nice;
  scheduler_options.compile_timeout = compile_timeout(options);
  scheduler_options.confined_compiles = sandbox.confined;
  scheduler_options.run_as = sandbox.user;
  scheduler_options.lease = std::chrono::milliseconds(
      static_cast<std::int64_t>(std::max(1.0, options.lease_seconds * 1000.0)));
  scheduler_options.heartbeat = options.heartbeat_seconds > 0
                                    ? std::chrono::milliseconds(static_cast<std::int64_t>(
                                          std::max(1.0, options.heartbeat_seconds * 1000.0)))
                                    : scheduler_options.lease / 3;
  if (scheduler_options.heartbeat >= scheduler_options.lease)
    throw StartupError(
        "--heartbeat-seconds must be shorter than --lease-seconds, or leases "
        "expire between heartbeats");
  std::filesystem::create_directories(scheduler_options.work_dir);
  const std::filesystem::path work_dir = scheduler_options.work_dir;
  // The workers read the cubins handed to them from scheduler_options.work_dir. A root daemon
  // whose work folder its workers' account cannot reach (a store in root's 0700 home) hands them
  // over in a folder of that account's own instead, for this run.
  std::optional<WorkerCubinFolder> worker_cubins;
  if (sandbox.user)
    if (const std::string why_not =
            kt::why_user_cannot_access(*sandbox.user, work_dir, R_OK | X_OK);
        !why_not.empty()) {
      worker_cubins.emplace(*sandbox.user);
      scheduler_options.work_dir = worker_cubins->path();
      spdlog::info("workers read their cubins from {} ({})", worker_cubins->path().string(),
                   why_not);
    }
  // Before the scheduler starts: resumed jobs of a registered family find it.
  std::unique_ptr<kt::FamilyRegistrar> registrar =
      user_families(options, store, families, work_dir, devices.devices, sandbox);
  require_families(families, options.families_dir, options.allow_empty);
  std::vector<kt::RecordedSpace> recorded;
  for (const auto& file : kt::recorded_space_files(options.predictor_spaces))
    recorded.push_back(kt::load_recorded_space(file));
  const std::size_t given = recorded.size();
  recorded = kt::newest_recordings(std::move(recorded));
  if (!recorded.empty())
    spdlog::info(
        "shape predictors: {} recorded spaces besides the store ({} older recordings of "
        "the same problems left out)",
        recorded.size(), given - recorded.size());
  std::vector<kt::DeviceLimits> predicted_for;
  for (const kt::DeviceInfo& d : devices.devices) predicted_for.push_back(kt::limits_for_device(d));
  if (predicted_for.empty()) predicted_for.push_back(kt::limits_for_arch("sm_90a").value());
  kt::ShapePredictors predictors(store, families, std::move(recorded), std::move(predicted_for));
  predictors.start(std::chrono::seconds(5), scheduler_options.compile_nice);
  scheduler_options.predictors = &predictors;
  kt::JobScheduler scheduler(store, families, scheduler_options, devices.devices);
  scheduler.start();
  // After the start registered this daemon: its claim on them keeps other daemons' hands off.
  if (registrar != nullptr)
    if (const std::size_t resumed = registrar->resume(); resumed > 0)
      spdlog::info("{} family registration{} compiling when a daemon stopped: compiling again",
                   resumed, resumed == 1 ? "" : "s");

  kt::AppContext context{store, families, scheduler, devices.devices, devices.error};
  context.registrar = registrar.get();
  context.predictors = &predictors;
  kt::PredictedChecks predicted_checks(store, scheduler);
  context.predicted_checks = &predicted_checks;
  context.access = access;
  context.web_dir = options.web_dir;
  if (!std::filesystem::is_regular_file(options.web_dir / "index.html"))
    spdlog::warn("no history page: {} holds no index.html (--web-dir)", options.web_dir.string());
  kt::ServerOptions server_options;
  server_options.listen = address;
  server_options.io_threads = options.io_threads;
  server_options.query_threads = options.query_threads;
  server_options.max_connections = options.max_connections;
  server_options.max_event_streams = options.max_event_streams;
  kt::HttpServer server(context, server_options);
  server.start();
  created.keep();
  spdlog::info("at most {} connections at once, {} of them event streams", server.max_connections(),
               server.max_event_streams());
  // The line scripts and tests wait for; it carries the real port when asked for port 0.
  spdlog::info("kerntuned listening on http://{}:{}", address.host, server.port());

  signals_io.run();  // returns once SIGINT/SIGTERM arrived

  arm_stop_bound();
  server.stop();
  scheduler.stop();
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // glibc gives threads that allocate at once their own heap arenas (up to 8 per core) and keeps
  // what NVRTC and the query threads free in each of them: two arenas took tens of MB off the
  // daemon's peak RSS under load with a compile job running. Set before any thread starts.
  mallopt(M_ARENA_MAX, 2);
  DaemonOptions options;
  CLI::App app{
      "kerntuned: tunes CUDA kernels submitted over HTTP. SIGINT/SIGTERM stops it within " +
      std::to_string(kStopBound.count()) +
      " s whatever runs: unfinished jobs and family registrations resume at the next start."};
  app.add_option("--listen", options.listen, "HOST:PORT to serve on (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--db", options.db,
                 "SQLite database file, or a postgresql:// URI for a PostgreSQL database")
      ->capture_default_str();
  app.add_option("--families", options.families_dir, "folder of kernel families")
      ->capture_default_str();
  app.add_option("--predictor-spaces", options.predictor_spaces,
                 "recorded spaces (kerntune export files, .json or .json.gz, or folders of them) "
                 "the shape predictors fit on besides the store")
      ->check(CLI::ExistingPath);
  app.add_option("--worker", options.worker, "measurement worker executable")
      ->capture_default_str();
  app.add_option("--web-dir", options.web_dir, "folder of the history page's static files")
      ->capture_default_str();
  app.add_option("--work-dir", options.work_dir,
                 "scratch folder for cubins (default: <db>.work; kerntune.work for PostgreSQL)");
  app.add_option("--compile-threads", options.compile_threads, "NVRTC threads (0: one per core)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--compile-nice", options.compile_nice,
                 "how much lower the NVRTC threads' priority is than the daemon's: 0-19, or 20 "
                 "(SCHED_IDLE, compiling only on CPU time nothing else wants, so requests are "
                 "answered first; a lower value keeps compiles going under full HTTP load)")
      ->envname("KERNTUNE_COMPILE_NICE")
      ->check(CLI::Range(0, kt::kIdleNice))
      ->capture_default_str();
  app.add_option("--compile-timeout-seconds", options.compile_timeout_seconds,
                 "NVRTC runs in child processes (kerntune-worker --compile); one that gives no "
                 "result within this time is killed and its variant recorded as hang")
      ->envname("KERNTUNE_COMPILE_TIMEOUT_SECONDS")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--lease-seconds", options.lease_seconds,
                 "how long this daemon's claim on a job's variants lasts without a heartbeat; "
                 "after it, other daemons on the same database take them over")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--heartbeat-seconds", options.heartbeat_seconds,
                 "how often the daemon extends its leases and looks for jobs other daemons "
                 "queued (default: a third of the lease)")
      ->check(CLI::PositiveNumber);
  app.add_option("--io-threads", options.io_threads, "HTTP I/O threads")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--query-threads", options.query_threads,
                 "threads (and read-only store connections) that answer API queries")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--max-connections", options.max_connections,
                 "connections served at once; more are answered 503 (lowered to fit the "
                 "open-files limit)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option(
         "--max-event-streams", options.max_event_streams,
         "live progress streams (GET /v1/jobs/{id}/events) open at once; more are "
         "answered 503 (each also counts as a connection; at most half of --max-connections)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--allow-empty", options.allow_empty,
               "serve even when the families folder holds no kernel family");
  auto* token_file =
      app.add_option("--token-file", options.token_file,
                     "file (mode 600) whose first line is the bearer token every request but "
                     "/healthz must carry; required to listen off loopback");
  app.add_flag("--insecure", options.insecure,
               "listen off loopback without a token: anyone who can reach the port may use it")
      ->excludes(token_file);
  app.add_flag("--public-reads", options.public_reads,
               "with --token-file: GET and HEAD need no token, only changes do");
  app.add_flag("--allow-user-families", options.allow_user_families,
               "let clients register kernel families (POST /v1/families): their device code is "
               "compiled and, in tune jobs, run on this host's GPUs; a template may span at "
               "most " +
                   std::to_string(kt::kMaxTemplateConfigs) +
                   " configurations (the product of its axes' value counts)");
  app.add_flag("--unconfined-compiles", options.unconfined_compiles,
               "compile without confinement where Landlock is missing. By default compile "
               "processes can read only the CUDA headers, and a daemon that takes uploads refuses "
               "to start where the kernel cannot confine them")
      ->envname("KERNTUNE_UNCONFINED_COMPILES");
  app.add_option("--run-as", options.run_as,
                 "account the compile processes and measurement workers run as when the daemon "
                 "runs as root (root keeps them as root)")
      ->envname("KERNTUNE_RUN_AS")
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
  } catch (const StartupError& error) {
    std::cerr << "kerntuned: cannot start: " << error.what() << std::endl;
    return 1;
  } catch (const std::exception& error) {
    spdlog::critical("{}", error.what());
    return 1;
  }
}
