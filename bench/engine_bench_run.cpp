#include "bench/engine_bench_run.hpp"

#include <algorithm>
#include <iostream>
#include <set>

#include <unistd.h>
#include <stdexcept>

#include "bench/driver_version.hpp"
#include "bench/output_files.hpp"
#include "bench/text_format.hpp"
#include "harness/daemon_process.hpp"

namespace kt::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The run's clock: what is left of the deadline, and the timeout a job gets from it.
class RunClock {
 public:
  explicit RunClock(const EngineBenchOptions& options)
      : start_(Clock::now()),
        deadline_(options.deadline_seconds),
        job_timeout_(options.job_timeout_seconds) {}
  bool expired() const { return deadline_ > 0 && elapsed() >= deadline_; }
  double job_timeout() const {
    if (deadline_ <= 0) return job_timeout_;
    const double left = std::max(1.0, deadline_ - elapsed());
    return job_timeout_ > 0 ? std::min(job_timeout_, left) : left;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  Clock::time_point start_;
  double deadline_, job_timeout_;
};

struct Context {
  const EngineBenchOptions& options;
  std::ostream& log;
  RunClock clock;
  kt::Client client;
};

WaitOptions wait_options(const Context& ctx) {
  WaitOptions wait;
  wait.poll = std::chrono::milliseconds(ctx.options.poll_ms);
  wait.progress = &ctx.log;
  wait.timeout_seconds = ctx.clock.job_timeout();
  return wait;
}

JobRequest request_for(const Context& ctx, const GemmShape& shape, std::int64_t budget) {
  JobRequest request;
  request.shape = shape;
  request.dtype = ctx.options.dtype;
  request.device = ctx.options.device;
  request.budget = budget;
  return request;
}

std::optional<double> best_median(const nlohmann::json& job) {
  const nlohmann::json best = job.value("best", nlohmann::json());
  if (best.is_object() && best.contains("median_us") && best.at("median_us").is_number())
    return best.at("median_us").get<double>();
  return std::nullopt;
}

// The variant to pin: the one given, else the shape's best on this daemon, else the best of a
// short tuning job.
nlohmann::json spread_variant(Context& ctx, const GemmShape& shape) {
  if (!ctx.options.spread_config.is_null()) return ctx.options.spread_config;
  TunedQuery query{"gemm",
                   {{"M", shape.m}, {"N", shape.n}, {"K", shape.k}},
                   ctx.options.dtype,
                   ctx.options.device};
  if (auto best = ctx.client.find_best(query)) return pinned_config(best->raw);
  ctx.log << "[spread] nothing tuned for " << shape_label(shape) << ": tuning "
          << ctx.options.spread_budget << " variants to pick one" << std::endl;
  const JobRun run = run_job(ctx.client, request_for(ctx, shape, ctx.options.spread_budget),
                             "spread pick " + shape_label(shape), wait_options(ctx));
  const nlohmann::json best = run.job.value("best", nlohmann::json());
  if (!best.is_object()) throw std::runtime_error("no variant measured to pin for the spread");
  return pinned_config(best);
}

SpreadFigure run_spread(Context& ctx) {
  SpreadFigure figure;
  figure.shape = ctx.options.spread_shape;
  figure.config = spread_variant(ctx, figure.shape);
  ctx.log << "[spread] pinned variant: " << figure.config.dump() << std::endl;
  for (int i = 1; i <= ctx.options.spread_runs; ++i) {
    if (ctx.clock.expired()) {
      figure.note = "Time limit: " + std::to_string(i - 1) + " of " +
                    std::to_string(ctx.options.spread_runs) + " runs done.";
      break;
    }
    JobRequest request = request_for(ctx, figure.shape, 0);
    request.configs = {figure.config};
    const JobRun run =
        run_job(ctx.client, request,
                "spread run " + std::to_string(i) + "/" + std::to_string(ctx.options.spread_runs),
                wait_options(ctx));
    const auto median = best_median(run.job);
    if (!median) {
      figure.note = "Run " + std::to_string(i) + " (job " +
                    std::to_string(run.job.value("id", std::int64_t{0})) +
                    ") measured nothing: status " + run.job.value("status", std::string("?"));
      break;
    }
    figure.job_ids.push_back(run.job.value("id", std::int64_t{0}));
    figure.medians_us.push_back(*median);
  }
  if (!figure.medians_us.empty()) figure.spread = run_to_run_spread(figure.medians_us);
  return figure;
}

// Winner and medians of every measured variant of a job, by variant_key.
RunWinner winners_of(const Context& ctx, const JobRun& run, std::int64_t& candidates,
                     std::int64_t& measured, nlohmann::json& winner_config) {
  RunWinner winner;
  const std::int64_t id = run.job.value("id", std::int64_t{0});
  const std::vector<nlohmann::json> variants = job_variants(ctx.client, id);
  candidates = static_cast<std::int64_t>(variants.size());
  measured = 0;
  for (const nlohmann::json& v : variants) {
    if (v.value("status", std::string()) != "measured" || !v.contains("median_us") ||
        !v.at("median_us").is_number())
      continue;
    ++measured;
    const double us = v.at("median_us").get<double>();
    winner.medians_us[variant_key(v)] = us;
    if (winner.winner_key.empty() || us < winner.winner_us) {
      winner.winner_key = variant_key(v);
      winner.winner_us = us;
      winner_config = pinned_config(v);
    }
  }
  return winner;
}

RepeatFigure run_repeat(Context& ctx) {
  RepeatFigure figure;
  figure.shape = ctx.options.repeat_shape;
  figure.budget = ctx.options.repeat_budget;
  const JobRun a = run_job(ctx.client, request_for(ctx, figure.shape, figure.budget),
                           "repeat A " + shape_label(figure.shape), wait_options(ctx));
  figure.job_a = a.job.value("id", std::int64_t{0});
  figure.comparison_a = a.job.value("comparison", nlohmann::json());
  const RunWinner winner_a =
      winners_of(ctx, a, figure.candidates_a, figure.measured_a, figure.winner_a);
  figure.winner_a_us = winner_a.winner_us;
  if (a.cut_short || winner_a.winner_key.empty()) {
    figure.note = "Run A " + std::string(a.cut_short ? "was cut short" : "measured nothing") +
                  "; run B skipped.";
    return figure;
  }
  if (ctx.clock.expired()) {
    figure.note = "Time limit reached after run A; run B skipped.";
    return figure;
  }

  JobRequest request_b = request_for(ctx, figure.shape, figure.budget);
  if (figure.budget > 0) {  // a budget samples by job id: pin B to A's candidates instead
    request_b.budget = 0;
    for (const nlohmann::json& v : job_variants(ctx.client, figure.job_a))
      request_b.configs.push_back(pinned_config(v));
  }
  const JobRun b =
      run_job(ctx.client, request_b, "repeat B " + shape_label(figure.shape), wait_options(ctx));
  figure.job_b = b.job.value("id", std::int64_t{0});
  figure.comparison_b = b.job.value("comparison", nlohmann::json());
  const RunWinner winner_b =
      winners_of(ctx, b, figure.candidates_b, figure.measured_b, figure.winner_b);
  figure.winner_b_us = winner_b.winner_us;
  if (b.cut_short) figure.note = "Run B was cut short by the time limit.";
  if (!winner_b.winner_key.empty()) figure.agreement = compare_winners(winner_a, winner_b);
  return figure;
}

SweepFigure run_sweep(Context& ctx, const std::string& pipeline,
                      const std::filesystem::path& work) {
  const GemmShape shape = ctx.options.sweep_shape;
  JobRequest request = request_for(ctx, shape, ctx.options.sweep_budget);
  request.pipeline = pipeline;
  const std::string label = "sweep " + pipeline + " " + shape_label(shape);

  auto sweep_on = [&](const kt::Client& client, bool fresh) {
    const JobRun run = run_job(client, request, label, wait_options(ctx));
    SweepFigure figure = sweep_from_job(pipeline, shape, ctx.options.sweep_budget, run);
    figure.fresh_daemon = fresh;
    for (const nlohmann::json& v : job_variants(client, figure.job_id))
      figure.variant_keys.push_back(variant_key(v));
    std::sort(figure.variant_keys.begin(), figure.variant_keys.end());
    return figure;
  };
  if (ctx.options.kerntuned.empty()) return sweep_on(ctx.client, false);

  const std::filesystem::path dir = work / pipeline;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  harness::DaemonProcess daemon(ctx.options.kerntuned, dir / "kerntune.db", dir / "kerntuned.log",
                                ctx.options.kerntuned_args);
  daemon.wait_healthy(std::chrono::seconds(60));
  ctx.log << "[" << label << "] fresh daemon on " << daemon.url() << ", log "
          << (dir / "kerntuned.log").string() << std::endl;
  try {
    SweepFigure figure = sweep_on(kt::Client(daemon.url()), true);
    ctx.log << "[" << label << "] daemon " << daemon.stop() << std::endl;
    return figure;
  } catch (...) {
    ctx.log << "[" << label << "] daemon log tail:\n" << daemon.log_tail() << std::endl;
    throw;
  }
}

void fill_device(Context& ctx, EngineReport& report) {
  const nlohmann::json devices = ctx.client.devices().value("devices", nlohmann::json::array());
  if (devices.empty()) return;
  report.device = devices.front().value("name", std::string());
  // The NVIDIA driver release (580.x) as on the GEMM table; the CUDA API version as a fallback.
  report.driver = nvidia_driver_version();
  if (report.driver.empty() && devices.front().contains("driver_version"))
    report.driver = "CUDA driver " + devices.front().at("driver_version").dump();
}

// The sweeps' daemons' folders, removed however the phase ends.
struct ScratchDir {
  explicit ScratchDir(std::filesystem::path p) : path(std::move(p)) {}
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path path;
};

}  // namespace

void add_engine_bench_options(CLI::App& app, EngineBenchOptions& options) {
  app.description(
      "Measures the engine's figures through a running kerntuned: run-to-run spread of a "
      "pinned variant, winner agreement of two tuning runs, and serial vs pipelined sweep speed. "
      "Writes <out-dir>/table.md and engine.json.");
  app.add_option("--server", options.server, "kerntuned URL")->capture_default_str();
  app.add_option("--dtype", options.dtype, "element type")->capture_default_str();
  app.add_option("--device", options.device, "GPU selector passed to the daemon");
  app.add_option("--phases", options.phases, "which figures, in this order: spread, repeat, sweep")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember({"spread", "repeat", "sweep"}));
  app.add_option("--spread-shape", options.spread_shape_text, "MxNxK of the spread runs")
      ->capture_default_str();
  app.add_option("--spread-runs", options.spread_runs, "separate jobs of the pinned variant")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  app.add_option("--spread-config", options.spread_config_text,
                 "variant to pin, JSON {\"template\":...,axis:value} (default: the shape's best)");
  app.add_option("--spread-budget", options.spread_budget,
                 "variants tuned to pick the pinned one when the shape is not tuned yet")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat-shape", options.repeat_shape_text, "MxNxK of the two tuning runs")
      ->capture_default_str();
  app.add_option("--repeat-budget", options.repeat_budget,
                 "variants of run A (B is pinned to A's); 0 = both run the whole space")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sweep-shape", options.sweep_shape_text, "MxNxK of the sweeps")
      ->capture_default_str();
  app.add_option("--sweep-budget", options.sweep_budget, "variants per sweep")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--kerntuned", options.kerntuned,
                 "run each sweep on its own fresh kerntuned (this binary) and database")
      ->check(CLI::ExistingFile);
  app.add_option("--kerntuned-arg", options.kerntuned_args,
                 "extra argument for those daemons (repeatable)")
      ->allow_extra_args(false);
  app.add_option(
      "--out-dir", options.out_dir,
      "where table.md and engine.json go (default bench/results/<date>-<device>-engine)");
  app.add_option("--deadline-s", options.deadline_seconds,
                 "time for the whole run; later work is skipped or cut short (0 = none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--job-timeout-s", options.job_timeout_seconds,
                 "cancel a job after this long (0 = none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--poll-ms", options.poll_ms, "job polling interval")
      ->capture_default_str()
      ->check(CLI::Range(50, 60000));
}

void finish_engine_bench_options(EngineBenchOptions& options) {
  options.spread_shape = parse_shape_label(options.spread_shape_text);
  options.repeat_shape = parse_shape_label(options.repeat_shape_text);
  options.sweep_shape = parse_shape_label(options.sweep_shape_text);
  for (const GemmShape* shape :
       {&options.spread_shape, &options.repeat_shape, &options.sweep_shape})
    if (shape->budget >= 0)
      throw std::invalid_argument("a budget in a shape (\":N\") is not used here; use --*-budget");
  if (options.phases.empty()) throw std::invalid_argument("--phases names no phase");
  for (std::size_t i = 0; i < options.phases.size(); ++i)
    if (std::find(options.phases.begin(), options.phases.begin() + i, options.phases[i]) !=
        options.phases.begin() + i)
      throw std::invalid_argument("--phases names '" + options.phases[i] + "' twice");
  options.spread_config = nullptr;
  if (!options.spread_config_text.empty()) {
    try {
      options.spread_config = nlohmann::json::parse(options.spread_config_text);
    } catch (const nlohmann::json::exception& error) {
      throw std::invalid_argument("--spread-config is not JSON: " + std::string(error.what()));
    }
    if (!options.spread_config.is_object() || !options.spread_config.contains("template") ||
        !options.spread_config.at("template").is_string())
      throw std::invalid_argument(
          "--spread-config must be an object with a \"template\" string and the axes");
  }
}

int run_engine_bench(const EngineBenchOptions& options, std::ostream& log) {
  Context ctx{options, log, RunClock(options), kt::Client(options.server)};
  EngineReport report;
  report.date = utc_date();
  fill_device(ctx, report);
  const std::filesystem::path out_dir =
      options.out_dir.empty() ? std::filesystem::path("bench/results") /
                                    results_folder_name(report.date, report.device, "engine")
                              : options.out_dir;
  auto write = [&] {
    write_text_file(out_dir / "engine.json", engine_report_to_json(report).dump(2) + "\n");
    write_text_file(out_dir / "table.md", render_engine_table(report));
  };
  // A phase that fails is noted and the next one still runs.
  auto phase = [&](const std::string& name, auto&& body) {
    if (ctx.clock.expired()) {
      report.notes.push_back(name + ": skipped, the run's time limit had passed");
    } else {
      try {
        body();
      } catch (const std::exception& error) {
        report.notes.push_back(name + ": failed: " + error.what());
        log << "[" << name << "] failed: " << error.what() << std::endl;
      }
    }
    write();
  };

  auto sweeps = [&] {
    const ScratchDir work(std::filesystem::temp_directory_path() /
                          ("kt-bench-engine-" + std::to_string(getpid())));
    for (const char* pipeline : {"serial", "pipelined"}) {
      if (ctx.clock.expired()) {
        report.notes.push_back(std::string("sweep ") + pipeline + ": skipped, time limit");
        break;
      }
      report.sweeps.push_back(run_sweep(ctx, pipeline, work.path));
      write();
    }
  };
  for (const std::string& name : options.phases) {  // in the order asked for
    if (name == "spread") phase(name, [&] { report.spread = run_spread(ctx); });
    if (name == "repeat") phase(name, [&] { report.repeat = run_repeat(ctx); });
    if (name == "sweep") phase(name, sweeps);
  }
  log << "wrote " << (out_dir / "table.md").string() << " and "
      << (out_dir / "engine.json").string() << std::endl;
  std::cout << render_engine_table(report);
  const bool any_figure = (report.spread && report.spread->spread) ||
                          (report.repeat && report.repeat->agreement) || !report.sweeps.empty();
  return any_figure ? 0 : 1;
}

}  // namespace kt::bench
