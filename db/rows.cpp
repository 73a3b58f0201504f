#include "db/rows.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kt::db {
namespace {

std::map<std::string, std::int64_t> int_map_from_text(const std::string& text, const char* what) {
  try {
    return int_map_from_json(nlohmann::json::parse(text));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("stored ") + what + " '" + text +
                             "' is unreadable: " + e.what());
  }
}

std::optional<std::int64_t> optional_int64(const db::Statement& row, const char* name) {
  const db::Column column = row.column(name);
  if (column.is_null()) return std::nullopt;
  return column.int64();
}

std::optional<double> optional_double(const db::Statement& row, const char* name) {
  const db::Column column = row.column(name);
  if (column.is_null()) return std::nullopt;
  return column.real();
}

void read_winner_comparison(const db::Statement& row, JobRecord& job) {
  job.winner_variant_id = optional_int64(row, "winner_variant_id");
  job.runner_up_variant_id = optional_int64(row, "runner_up_variant_id");
  if (const auto distinguishable = optional_int64(row, "winner_distinguishable"))
    job.winner_distinguishable = *distinguishable != 0;
  job.winner_margin = optional_double(row, "winner_margin");
  job.winner_median_us = optional_double(row, "winner_median_us");
  job.runner_up_median_us = optional_double(row, "runner_up_median_us");
  const std::string final_text = row.column("final_comparison_json").text();
  if (!final_text.empty())
    job.final_comparison = interleaved_result_from_json(nlohmann::json::parse(final_text));
  const std::string baselines_text = row.column("baselines_json").text();
  job.baselines =
      baselines_text.empty() ? nlohmann::json::object() : nlohmann::json::parse(baselines_text);
}

// How the samples were taken; NULL clock/reasons mean NVML was not there (-1 / 0).
void read_timing_method(const db::Statement& row, TimingSummary& t) {
  t.method = row.column("timing_method").text();
  t.launches_per_sample = row.column("launches_per_sample").integer();
  t.discarded_samples = row.column("discarded_samples").integer();
  t.sm_clock_mhz = static_cast<int>(optional_int64(row, "sm_clock_mhz").value_or(-1));
  t.throttle_reasons =
      static_cast<std::uint64_t>(optional_int64(row, "throttle_reasons").value_or(0));
}

// A jobs column holding an enum's text; the row is unreadable without a known value.
template <typename Parse>
auto read_enum(const db::Statement& row, const char* column, Parse parse, std::int64_t job_id) {
  const std::string text = row.column(column).text();
  const auto value = parse(text);
  if (!value)
    throw std::runtime_error("job " + std::to_string(job_id) + " has unknown " + column + " '" +
                             text + "'");
  return *value;
}

}  // namespace

const char* const kJobSelect =
    "SELECT id, family, shape_json, shape_key, dtype, mode, arch, device_uuid, device_name, "
    "budget, status, reason, cancel_requested, reference_us, created_at, started_at, "
    "finished_at, winner_variant_id, runner_up_variant_id, winner_distinguishable, "
    "winner_margin, pipeline, pinned_configs_json, gpus, wall_seconds, gpu_busy_seconds, "
    "baselines_json, final_comparison_json, search, search_seconds, search_patience, "
    "driver_version, nvrtc_version, family_hash, warm_start_json, "
    "(SELECT median_us FROM measurements WHERE variant_id = jobs.winner_variant_id) "
    "AS winner_median_us, "
    "(SELECT median_us FROM measurements WHERE variant_id = jobs.runner_up_variant_id) "
    "AS runner_up_median_us FROM jobs";

const char* const kVariantSelect =
    "SELECT v.id, v.job_id, v.template_name, v.config_json, v.config_key, v.status, "
    "v.failed_gate, v.reason, v.compile_log, v.kernel_key, v.registers, v.spill_bytes, "
    "v.smem_bytes, v.threads, v.compile_ms, v.gpu_ordinal, v.measure_ms, m.median_us, "
    "m.min_us, m.p10_us, m.p90_us, "
    "m.mean_us, m.rel_noise, m.trials, m.converged, m.max_abs, m.max_rel, m.rel_l2, "
    "m.first_bad_index, m.non_finite, m.tflops, m.gbps, m.speedup, m.timing_method, "
    "m.launches_per_sample, m.discarded_samples, m.sm_clock_mhz, m.throttle_reasons, "
    "m.bad_elements, m.first_bad_output, m.first_bad_reference, m.tolerance_json, "
    "m.guard_damage "
    "FROM variants v LEFT JOIN measurements m ON m.variant_id = v.id";

JobRecord read_job(const db::Statement& row) {
  JobRecord job;
  job.id = row.column("id").int64();
  job.family = row.column("family").text();
  job.shape = int_map_from_text(row.column("shape_json").text(), "shape");
  job.shape_key = row.column("shape_key").text();
  job.dtype = row.column("dtype").text();
  job.mode = read_enum(row, "mode", job_mode_from_string, job.id);
  job.arch = row.column("arch").text();
  job.device_uuid = row.column("device_uuid").text();
  job.device_name = row.column("device_name").text();
  job.budget = row.column("budget").int64();
  const std::string status = row.column("status").text();
  const auto parsed = job_status_from_string(status);
  if (!parsed)
    throw std::runtime_error("job " + std::to_string(job.id) + " has unknown status '" + status +
                             "'");
  job.status = *parsed;
  job.reason = row.column("reason").text();
  job.cancel_requested = row.column("cancel_requested").integer() != 0;
  const db::Column reference = row.column("reference_us");
  if (!reference.is_null()) job.reference_us = reference.real();
  job.created_at = row.column("created_at").text();
  job.started_at = row.column("started_at").text();
  job.finished_at = row.column("finished_at").text();
  read_winner_comparison(row, job);
  job.pipeline = read_enum(row, "pipeline", pipeline_from_string, job.id);
  job.pinned_configs_json = row.column("pinned_configs_json").text();
  job.gpus = row.column("gpus").integer();
  job.wall_seconds = optional_double(row, "wall_seconds");
  job.gpu_busy_seconds = optional_double(row, "gpu_busy_seconds");
  job.search = row.column("search").text();
  job.search_seconds = row.column("search_seconds").real();
  job.search_patience = row.column("search_patience").integer();
  job.driver_version = row.column("driver_version").integer();
  job.nvrtc_version = row.column("nvrtc_version").text();
  job.family_hash = row.column("family_hash").text();
  job.warm_start_json = row.column("warm_start_json").text();
  return job;
}

VariantRecord read_variant(const db::Statement& row) {
  VariantRecord v;
  v.id = row.column("id").int64();
  v.job_id = row.column("job_id").int64();
  v.template_name = row.column("template_name").text();
  v.config = int_map_from_text(row.column("config_json").text(), "config");
  v.config_key = row.column("config_key").text();
  const std::string status = row.column("status").text();
  const auto parsed = variant_status_from_string(status);
  if (!parsed)
    throw std::runtime_error("variant " + std::to_string(v.id) + " has unknown status '" + status +
                             "'");
  v.status = *parsed;
  v.failed_gate = row.column("failed_gate").text();
  v.reason = row.column("reason").text();
  v.compile_log = row.column("compile_log").text();
  v.kernel_key = row.column("kernel_key").text();
  v.registers = row.column("registers").integer();
  v.spill_bytes = row.column("spill_bytes").integer();
  v.smem_bytes = row.column("smem_bytes").integer();
  v.threads = row.column("threads").integer();
  v.compile_ms = row.column("compile_ms").real();
  if (const auto ordinal = optional_int64(row, "gpu_ordinal"))
    v.gpu_ordinal = static_cast<int>(*ordinal);
  v.measure_ms = row.column("measure_ms").real();
  if (!row.column("median_us").is_null()) {
    TimingSummary t;
    t.median_us = row.column("median_us").real();
    t.min_us = row.column("min_us").real();
    t.p10_us = row.column("p10_us").real();
    t.p90_us = row.column("p90_us").real();
    t.mean_us = row.column("mean_us").real();
    t.rel_noise = row.column("rel_noise").real();
    t.trials = row.column("trials").integer();
    t.converged = row.column("converged").integer() != 0;
    read_timing_method(row, t);
    v.timing = t;
  }
  if (!row.column("max_rel").is_null()) {
    ErrorSummary e;
    e.max_abs = row.column("max_abs").real();
    e.max_rel = row.column("max_rel").real();
    e.rel_l2 = row.column("rel_l2").real();
    e.first_bad_index = row.column("first_bad_index").int64();
    e.non_finite = row.column("non_finite").int64();
    e.bad_elements = row.column("bad_elements").int64();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.first_bad_output = optional_double(row, "first_bad_output").value_or(nan);
    e.first_bad_reference = optional_double(row, "first_bad_reference").value_or(nan);
    if (e.first_bad_index < 0) e.first_bad_output = e.first_bad_reference = 0;
    const std::string tolerance = row.column("tolerance_json").text();
    if (!tolerance.empty()) e.tolerance = tolerance_from_json(nlohmann::json::parse(tolerance));
    e.guard_damage = row.column("guard_damage").text();
    v.error = e;
  }
  // NULL (no measurement row) reads as 0, the "not measured" value of VariantRecord.
  v.tflops = row.column("tflops").real();
  v.gbps = row.column("gbps").real();
  const db::Column speedup = row.column("speedup");
  if (!speedup.is_null()) v.speedup = speedup.real();
  return v;
}

std::optional<JobRecord> load_job(db::Connection& db, std::int64_t id) {
  db::Statement query(db, std::string(kJobSelect) + " WHERE id = ?");
  query.bind(1, id);
  if (!query.step()) return std::nullopt;
  return read_job(query);
}

std::optional<VariantRecord> load_variant(db::Connection& db, std::int64_t id) {
  db::Statement query(db, std::string(kVariantSelect) + " WHERE v.id = ?");
  query.bind(1, id);
  if (!query.step()) return std::nullopt;
  return read_variant(query);
}

std::vector<VariantRecord> load_variants(db::Connection& db, std::int64_t job_id, bool gated_only) {
  db::Statement query(
      db, std::string(kVariantSelect) + " WHERE v.job_id = ?" +
              (gated_only ? " AND v.status NOT IN ('pruned', 'unsupported_arch')" : "") +
              " ORDER BY v.id");
  query.bind(1, job_id);
  std::vector<VariantRecord> variants;
  while (query.step()) variants.push_back(read_variant(query));
  return variants;
}

VariantPage load_variant_page(db::Connection& db, std::int64_t job_id,
                              const VariantPageQuery& query) {
  if (query.limit < 1) throw std::invalid_argument("a variant page needs a limit of at least 1");
  // The job's id range, from the (job_id, status) index alone: it bounds the primary-key range
  // scan below, so neither the first page (ids of older jobs) nor the last (ids of newer jobs)
  // walks rows of other jobs.
  db::Statement range(db, "SELECT MIN(id), MAX(id) FROM variants WHERE job_id = ?");
  range.bind(1, job_id);
  VariantPage page;
  if (!range.step() || range.column(0).is_null()) return page;
  const std::int64_t first_id = range.column(0).int64();
  const std::int64_t last_id = range.column(1).int64();

  // Kept off the (job_id, status) index, which would read and sort every row of the job to serve
  // one page; the primary-key range stops after limit + 1 matches.
  std::string where =
      " WHERE " + not_by_index("v.job_id", db.dialect()) + " = ?1 AND v.id > ?2 AND v.id <= ?3";
  if (query.gated_only) where += " AND v.status NOT IN ('pruned', 'unsupported_arch')";
  if (!query.statuses.empty()) {
    where += " AND v.status IN (";
    for (std::size_t i = 0; i < query.statuses.size(); ++i)
      where += (i == 0 ? "?" : ", ?") + std::to_string(5 + i);
    where += ")";
  }
  // One row past the limit tells whether another page follows without counting the rest.
  db::Statement select(db, std::string(kVariantSelect) + where + " ORDER BY v.id LIMIT ?4");
  select.bind(1, job_id);
  select.bind(2, std::max(query.after_id, first_id - 1));
  select.bind(3, last_id);
  select.bind(4, query.limit + 1);
  for (std::size_t i = 0; i < query.statuses.size(); ++i)
    select.bind(static_cast<int>(5 + i), std::string(to_string(query.statuses[i])));
  while (select.step()) {
    if (static_cast<int>(page.variants.size()) == query.limit) {
      page.next_after_id = page.variants.back().id;
      break;
    }
    page.variants.push_back(read_variant(select));
  }
  return page;
}

std::optional<VariantRecord> load_fastest_variant(db::Connection& db, std::int64_t job_id) {
  // jobs.best_variant_id is kept by the writer (record_outcome).
  db::Statement query(db, std::string(kVariantSelect) +
                              " WHERE v.id = (SELECT best_variant_id FROM jobs WHERE id = ?)");
  query.bind(1, job_id);
  if (!query.step()) return std::nullopt;
  return read_variant(query);
}

}  // namespace kt::db
