// kt-bench engine: the measurement engine's figures through the real daemon:
//  spread: one variant pinned ("configs") in N separate jobs; median of the medians and
//          (max - min) / median;
//  repeat: two tuning jobs of the same shape over the same candidates; same winner or within 2%;
//  sweep:  the same sample swept with pipeline "serial" and "pipelined": variants per minute,
//          compile seconds per variant (median), GPU idle fraction (the jobs' "stats").
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/engine_report.hpp"

namespace kt::bench {

struct EngineBenchOptions {
  std::string server = "http://127.0.0.1:8080";
  std::string dtype = "bf16";
  std::string device;
  std::vector<std::string> phases = {"spread", "repeat", "sweep"};

  std::string spread_shape_text = "4096x4096x4096";
  int spread_runs = 10;
  std::string spread_config_text;   // JSON {"template":..., axis: value}; "" = the shape's best
  std::int64_t spread_budget = 16;  // tuning job that finds a variant when nothing is tuned yet

  std::string repeat_shape_text = "2048x2048x2048";
  std::int64_t repeat_budget = 24;  // 0 = both jobs run the whole space

  std::string sweep_shape_text = "2048x2048x2048";
  std::int64_t sweep_budget = 24;
  std::filesystem::path kerntuned;          // given: each sweep on its own fresh daemon
  std::vector<std::string> kerntuned_args;  // extra arguments for those daemons

  std::filesystem::path out_dir;  // "" = bench/results/<date>-<device>-engine
  double deadline_seconds = 0;
  double job_timeout_seconds = 0;
  int poll_ms = 1000;

  GemmShape spread_shape, repeat_shape, sweep_shape;  // parsed by finish_engine_bench_options
  nlohmann::json spread_config;                       // parsed; null = not given
};

void add_engine_bench_options(CLI::App& app, EngineBenchOptions& options);
// Parses shapes and the pinned config, checks the phases; throws std::invalid_argument.
void finish_engine_bench_options(EngineBenchOptions& options);

// Writes <out_dir>/table.md and <out_dir>/engine.json after every phase; a phase that fails is
// noted and the next one runs. Returns the exit code: 1 when no figure came out, else 0.
int run_engine_bench(const EngineBenchOptions& options, std::ostream& log);

}  // namespace kt::bench
