// The measurement-engine figures, measured through the real daemon: run-to-run spread
// of one variant's median over separate jobs, whether two tuning runs of the same job agree on
// the winner, and sweep speed with the serial vs the pipelined engine (variants per minute,
// compile time per variant, GPU idle fraction). As JSON and as a Markdown table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_math.hpp"
#include "bench/job_driver.hpp"
#include "bench/result_names.hpp"

namespace kt::bench {

// (a) the same variant, pinned, in separate jobs.
struct SpreadFigure {
  GemmShape shape;
  nlohmann::json config;  // {"template":..., axis: value}
  std::vector<std::int64_t> job_ids;
  std::vector<double> medians_us;  // one per job
  std::optional<Spread> spread;
  std::string note;
};

// (b) two separate tuning jobs over the same candidates.
struct RepeatFigure {
  GemmShape shape;
  std::int64_t budget = 0;  // of job A; job B is pinned to A's candidates (or also full when 0)
  std::int64_t job_a = 0, job_b = 0;
  std::int64_t candidates_a = 0, candidates_b = 0;  // variants that went through the gates
  std::int64_t measured_a = 0, measured_b = 0;
  nlohmann::json winner_a, winner_b;  // pinned configs
  double winner_a_us = 0, winner_b_us = 0;
  std::optional<WinnerAgreement> agreement;
  nlohmann::json comparison_a, comparison_b;  // the jobs' "comparison" (interleaved re-measure)
  std::string note;
};

// (c) one sweep.
struct SweepFigure {
  std::string pipeline;  // "serial" | "pipelined"
  GemmShape shape;
  std::int64_t budget = 0;
  std::int64_t job_id = 0;
  bool fresh_daemon = false;  // its own daemon on an empty database (empty compile cache)
  double bench_seconds = 0;   // POST to end, as the bench saw it
  std::int64_t variants_finished = 0, variants_measured = 0;
  std::optional<double> variants_per_minute;  // the job's stats; else from bench_seconds
  std::string variants_per_minute_source;     // "job stats" | "bench wall clock"
  std::optional<double> compile_seconds_median, gpu_idle_fraction, wall_seconds;
  std::optional<std::int64_t> gpus;
  nlohmann::json stats;                   // the job's "stats" object as the daemon gave it
  std::vector<std::string> variant_keys;  // sorted, to check both sweeps ran the same variants
  std::string note;
};

// The figures of a finished sweep job (its GET /v1/jobs/{id} answer with "stats").
SweepFigure sweep_from_job(const std::string& pipeline, const GemmShape& shape, std::int64_t budget,
                           const JobRun& run);

struct EngineReport {
  std::string device, driver, date;
  std::optional<SpreadFigure> spread;
  std::optional<RepeatFigure> repeat;
  std::vector<SweepFigure> sweeps;
  std::vector<std::string> notes;
};

// Serial over pipelined speed-up when both sweeps have a rate; nullopt otherwise.
std::optional<double> pipelined_speedup(const EngineReport& report);
// True/false when both sweeps listed their variants, nullopt otherwise.
std::optional<bool> sweeps_ran_same_variants(const EngineReport& report);

nlohmann::json engine_report_to_json(const EngineReport& report);
std::string render_engine_table(const EngineReport& report);

}  // namespace kt::bench
