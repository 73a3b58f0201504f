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

std::optional<std::int64_t> optional_int64(const SQLite::Statement& row, const char* name) {
  const SQLite::Column column = row.getColumn(name);
  if (column.isNull()) return std::nullopt;
  return column.getInt64();
}

std::optional<double> optional_double(const SQLite::Statement& row, const char* name) {
  const SQLite::Column column = row.getColumn(name);
  if (column.isNull()) return std::nullopt;
  return column.getDouble();
}

void read_winner_comparison(const SQLite::Statement& row, JobRecord& job) {
  job.winner_variant_id = optional_int64(row, "winner_variant_id");
  job.runner_up_variant_id = optional_int64(row, "runner_up_variant_id");
  if (const auto distinguishable = optional_int64(row, "winner_distinguishable"))
    job.winner_distinguishable = *distinguishable != 0;
  job.winner_margin = optional_double(row, "winner_margin");
  job.winner_median_us = optional_double(row, "winner_median_us");
  job.runner_up_median_us = optional_double(row, "runner_up_median_us");
  const std::string final_text = row.getColumn("final_comparison_json").getString();
  if (!final_text.empty())
    job.final_comparison = interleaved_result_from_json(nlohmann::json::parse(final_text));
  const std::string baselines_text = row.getColumn("baselines_json").getString();
  job.baselines =
      baselines_text.empty() ? nlohmann::json::object() : nlohmann::json::parse(baselines_text);
}

// How the samples were taken; NULL clock/reasons mean NVML was not there (-1 / 0).
void read_timing_method(const SQLite::Statement& row, TimingSummary& t) {
  t.method = row.getColumn("timing_method").getString();
  t.launches_per_sample = row.getColumn("launches_per_sample").getInt();
  t.discarded_samples = row.getColumn("discarded_samples").getInt();
  t.sm_clock_mhz = static_cast<int>(optional_int64(row, "sm_clock_mhz").value_or(-1));
  t.throttle_reasons =
      static_cast<std::uint64_t>(optional_int64(row, "throttle_reasons").value_or(0));
}

// A jobs column holding an enum's text; the row is unreadable without a known value.
template <typename Parse>
auto read_enum(const SQLite::Statement& row, const char* column, Parse parse, std::int64_t job_id) {
  const std::string text = row.getColumn(column).getString();
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

JobRecord read_job(const SQLite::Statement& row) {
  JobRecord job;
  job.id = row.getColumn("id").getInt64();
  job.family = row.getColumn("family").getString();
  job.shape = int_map_from_text(row.getColumn("shape_json").getString(), "shape");
  job.shape_key = row.getColumn("shape_key").getString();
  job.dtype = row.getColumn("dtype").getString();
  job.mode = read_enum(row, "mode", job_mode_from_string, job.id);
  job.arch = row.getColumn("arch").getString();
  job.device_uuid = row.getColumn("device_uuid").getString();
  job.device_name = row.getColumn("device_name").getString();
  job.budget = row.getColumn("budget").getInt64();
  const std::string status = row.getColumn("status").getString();
  const auto parsed = job_status_from_string(status);
  if (!parsed)
    throw std::runtime_error("job " + std::to_string(job.id) + " has unknown status '" + status +
                             "'");
  job.status = *parsed;
  job.reason = row.getColumn("reason").getString();
  job.cancel_requested = row.getColumn("cancel_requested").getInt() != 0;
  const SQLite::Column reference = row.getColumn("reference_us");
  if (!reference.isNull()) job.reference_us = reference.getDouble();
  job.created_at = row.getColumn("created_at").getString();
  job.started_at = row.getColumn("started_at").getString();
  job.finished_at = row.getColumn("finished_at").getString();
  read_winner_comparison(row, job);
  job.pipeline = read_enum(row, "pipeline", pipeline_from_string, job.id);
  job.pinned_configs_json = row.getColumn("pinned_configs_json").getString();
  job.gpus = row.getColumn("gpus").getInt();
  job.wall_seconds = optional_double(row, "wall_seconds");
  job.gpu_busy_seconds = optional_double(row, "gpu_busy_seconds");
  job.search = row.getColumn("search").getString();
  job.search_seconds = row.getColumn("search_seconds").getDouble();
  job.search_patience = row.getColumn("search_patience").getInt();
  return job;
}

VariantRecord read_variant(const SQLite::Statement& row) {
  VariantRecord v;
  v.id = row.getColumn("id").getInt64();
  v.job_id = row.getColumn("job_id").getInt64();
  v.template_name = row.getColumn("template_name").getString();
  v.config = int_map_from_text(row.getColumn("config_json").getString(), "config");
  v.config_key = row.getColumn("config_key").getString();
  const std::string status = row.getColumn("status").getString();
  const auto parsed = variant_status_from_string(status);
  if (!parsed)
    throw std::runtime_error("variant " + std::to_string(v.id) + " has unknown status '" + status +
                             "'");
  v.status = *parsed;
  v.failed_gate = row.getColumn("failed_gate").getString();
  v.reason = row.getColumn("reason").getString();
  v.compile_log = row.getColumn("compile_log").getString();
  v.kernel_key = row.getColumn("kernel_key").getString();
  v.registers = row.getColumn("registers").getInt();
  v.spill_bytes = row.getColumn("spill_bytes").getInt();
  v.smem_bytes = row.getColumn("smem_bytes").getInt();
  v.threads = row.getColumn("threads").getInt();
  v.compile_ms = row.getColumn("compile_ms").getDouble();
  if (const auto ordinal = optional_int64(row, "gpu_ordinal"))
    v.gpu_ordinal = static_cast<int>(*ordinal);
  v.measure_ms = row.getColumn("measure_ms").getDouble();
  if (!row.getColumn("median_us").isNull()) {
    TimingSummary t;
    t.median_us = row.getColumn("median_us").getDouble();
    t.min_us = row.getColumn("min_us").getDouble();
    t.p10_us = row.getColumn("p10_us").getDouble();
    t.p90_us = row.getColumn("p90_us").getDouble();
    t.mean_us = row.getColumn("mean_us").getDouble();
    t.rel_noise = row.getColumn("rel_noise").getDouble();
    t.trials = row.getColumn("trials").getInt();
    t.converged = row.getColumn("converged").getInt() != 0;
    read_timing_method(row, t);
    v.timing = t;
  }
  if (!row.getColumn("max_rel").isNull()) {
    ErrorSummary e;
    e.max_abs = row.getColumn("max_abs").getDouble();
    e.max_rel = row.getColumn("max_rel").getDouble();
    e.rel_l2 = row.getColumn("rel_l2").getDouble();
    e.first_bad_index = row.getColumn("first_bad_index").getInt64();
    e.non_finite = row.getColumn("non_finite").getInt64();
    e.bad_elements = row.getColumn("bad_elements").getInt64();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.first_bad_output = optional_double(row, "first_bad_output").value_or(nan);
    e.first_bad_reference = optional_double(row, "first_bad_reference").value_or(nan);
    if (e.first_bad_index < 0) e.first_bad_output = e.first_bad_reference = 0;
    const std::string tolerance = row.getColumn("tolerance_json").getString();
    if (!tolerance.empty()) e.tolerance = tolerance_from_json(nlohmann::json::parse(tolerance));
    e.guard_damage = row.getColumn("guard_damage").getString();
    v.error = e;
  }
  // NULL (no measurement row) reads as 0, the "not measured" value of VariantRecord.
  v.tflops = row.getColumn("tflops").getDouble();
  v.gbps = row.getColumn("gbps").getDouble();
  const SQLite::Column speedup = row.getColumn("speedup");
  if (!speedup.isNull()) v.speedup = speedup.getDouble();
  return v;
}

std::optional<JobRecord> load_job(SQLite::Database& db, std::int64_t id) {
  SQLite::Statement query(db, std::string(kJobSelect) + " WHERE id = ?");
  query.bind(1, id);
  if (!query.executeStep()) return std::nullopt;
  return read_job(query);
}

std::optional<VariantRecord> load_variant(SQLite::Database& db, std::int64_t id) {
  SQLite::Statement query(db, std::string(kVariantSelect) + " WHERE v.id = ?");
  query.bind(1, id);
  if (!query.executeStep()) return std::nullopt;
  return read_variant(query);
}

std::vector<VariantRecord> load_variants(SQLite::Database& db, std::int64_t job_id,
                                         bool gated_only) {
  SQLite::Statement query(
      db, std::string(kVariantSelect) + " WHERE v.job_id = ?" +
              (gated_only ? " AND v.status NOT IN ('pruned', 'unsupported_arch')" : "") +
              " ORDER BY v.id");
  query.bind(1, job_id);
  std::vector<VariantRecord> variants;
  while (query.executeStep()) variants.push_back(read_variant(query));
  return variants;
}

VariantPage load_variant_page(SQLite::Database& db, std::int64_t job_id,
                              const VariantPageQuery& query) {
  if (query.limit < 1) throw std::invalid_argument("a variant page needs a limit of at least 1");
  // The job's id range, from the (job_id, status) index alone: it bounds the primary-key range
  // scan below, so neither the first page (ids of older jobs) nor the last (ids of newer jobs)
  // walks rows of other jobs.
  SQLite::Statement range(db, "SELECT MIN(id), MAX(id) FROM variants WHERE job_id = ?");
  range.bind(1, job_id);
  VariantPage page;
  if (!range.executeStep() || range.getColumn(0).isNull()) return page;
  const std::int64_t first_id = range.getColumn(0).getInt64();
  const std::int64_t last_id = range.getColumn(1).getInt64();

  // "+v.job_id" keeps SQLite off the (job_id, status) index, which would read and sort every
  // row of the job to serve one page; the primary-key range stops after limit + 1 matches.
  std::string where = " WHERE +v.job_id = ?1 AND v.id > ?2 AND v.id <= ?3";
  if (query.gated_only) where += " AND v.status NOT IN ('pruned', 'unsupported_arch')";
  if (!query.statuses.empty()) {
    where += " AND v.status IN (";
    for (std::size_t i = 0; i < query.statuses.size(); ++i)
      where += (i == 0 ? "?" : ", ?") + std::to_string(5 + i);
    where += ")";
  }
  // One row past the limit tells whether another page follows without counting the rest.
  SQLite::Statement select(db, std::string(kVariantSelect) + where + " ORDER BY v.id LIMIT ?4");
  select.bind(1, job_id);
  select.bind(2, std::max(query.after_id, first_id - 1));
  select.bind(3, last_id);
  select.bind(4, query.limit + 1);
  for (std::size_t i = 0; i < query.statuses.size(); ++i)
    select.bind(static_cast<int>(5 + i), std::string(to_string(query.statuses[i])));
  while (select.executeStep()) {
    if (static_cast<int>(page.variants.size()) == query.limit) {
      page.next_after_id = page.variants.back().id;
      break;
    }
    page.variants.push_back(read_variant(select));
  }
  return page;
}

std::optional<VariantRecord> load_fastest_variant(SQLite::Database& db, std::int64_t job_id) {
  // jobs.best_variant_id is kept by the writer (record_outcome).
  SQLite::Statement query(db, std::string(kVariantSelect) +
                                  " WHERE v.id = (SELECT best_variant_id FROM jobs WHERE id = ?)");
  query.bind(1, job_id);
  if (!query.executeStep()) return std::nullopt;
  return read_variant(query);
}

}  // namespace kt::db
