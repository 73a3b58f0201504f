#include "bench/engine_report.hpp"

#include <algorithm>

#include "bench/gemm_report.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

std::optional<double> number(const nlohmann::json& j, const char* field) {
  if (!j.is_object() || !j.contains(field) || !j.at(field).is_number()) return std::nullopt;
  return j.at(field).get<double>();
}

nlohmann::json or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string cell(const std::optional<double>& value, int decimals, const std::string& unit = "") {
  return value ? format_fixed(*value, decimals) + unit : "—";
}

std::string percent_cell(const std::optional<double>& fraction) {
  return fraction ? format_percent(*fraction) : "—";
}

std::string shape_text(const GemmShape& shape) {
  return std::to_string(shape.m) + "×" + std::to_string(shape.n) + "×" + std::to_string(shape.k);
}

std::string comparison_cell(const nlohmann::json& comparison) {
  if (!comparison.is_object() || !comparison.contains("distinguishable") ||
      !comparison.at("distinguishable").is_boolean())
    return "—";
  std::string text = comparison.at("distinguishable").get<bool>() ? "yes" : "no";
  if (auto margin = number(comparison, "margin"))
    text += " (margin " + format_percent(*margin) + ")";
  return text;
}

nlohmann::json spread_json(const SpreadFigure& s) {
  nlohmann::json j = {{"shape", shape_label(s.shape)}, {"config", s.config},
                      {"job_ids", s.job_ids},          {"medians_us", s.medians_us},
                      {"runs", s.medians_us.size()},   {"note", s.note}};
  if (s.spread) {
    j["median_of_medians_us"] = s.spread->median_us;
    j["min_us"] = s.spread->min_us;
    j["max_us"] = s.spread->max_us;
    j["spread"] = s.spread->spread;
    j["target_met"] = s.spread->median_us >= 20 ? nlohmann::json(s.spread->spread <= 0.01)
                                                : nlohmann::json(nullptr);
  }
  return j;
}

nlohmann::json repeat_json(const RepeatFigure& r) {
  nlohmann::json j = {{"shape", shape_label(r.shape)},
                      {"budget", r.budget},
                      {"job_a", r.job_a},
                      {"job_b", r.job_b},
                      {"candidates_a", r.candidates_a},
                      {"candidates_b", r.candidates_b},
                      {"measured_a", r.measured_a},
                      {"measured_b", r.measured_b},
                      {"winner_a", r.winner_a},
                      {"winner_b", r.winner_b},
                      {"winner_a_us", r.winner_a_us},
                      {"winner_b_us", r.winner_b_us},
                      {"comparison_a", r.comparison_a},
                      {"comparison_b", r.comparison_b},
                      {"note", r.note}};
  if (r.agreement) {
    const WinnerAgreement& a = *r.agreement;
    j["same_winner"] = a.same_winner;
    j["winner_gap"] = a.winner_gap;
    j["b_winner_in_a"] = or_null(a.b_winner_in_a);
    j["a_winner_in_b"] = or_null(a.a_winner_in_b);
    j["gap"] = a.gap;
    j["within_2_percent"] = a.within_tolerance;
  }
  return j;
}

nlohmann::json sweep_json(const SweepFigure& s) {
  return {{"pipeline", s.pipeline},
          {"shape", shape_label(s.shape)},
          {"budget", s.budget},
          {"job_id", s.job_id},
          {"fresh_daemon", s.fresh_daemon},
          {"bench_seconds", s.bench_seconds},
          {"variants_finished", s.variants_finished},
          {"variants_measured", s.variants_measured},
          {"variants_per_minute", or_null(s.variants_per_minute)},
          {"variants_per_minute_source", s.variants_per_minute_source},
          {"compile_seconds_median", or_null(s.compile_seconds_median)},
          {"gpu_idle_fraction", or_null(s.gpu_idle_fraction)},
          {"wall_seconds", or_null(s.wall_seconds)},
          {"gpus", s.gpus ? nlohmann::json(*s.gpus) : nlohmann::json(nullptr)},
          {"stats", s.stats},
          {"note", s.note}};
}

std::string render_spread(const SpreadFigure& s) {
  std::string out = "#### Run-to-run spread\n\nThe same variant (" + config_text(s.config) +
                    ") pinned in " + std::to_string(s.medians_us.size()) +
                    " separate jobs of bf16 " + shape_text(s.shape) +
                    "; each job times it afresh (and cuBLAS once).\n\n";
  out +=
      "| runs | median of the medians | min | max | spread (max − min) / median | target ≤ 1% "
      "(kernels ≥ 20 µs) |\n| --- | --- | --- | --- | --- | --- |\n";
  if (s.spread) {
    const Spread& sp = *s.spread;
    const std::string target =
        sp.median_us < 20 ? "n/a (kernel < 20 µs)" : (sp.spread <= 0.01 ? "met" : "missed");
    out += "| " + std::to_string(sp.runs) + " | " + format_us(sp.median_us) + " | " +
           format_us(sp.min_us) + " | " + format_us(sp.max_us) + " | " + format_percent(sp.spread) +
           " | " + target + " |\n";
  } else {
    out += "| 0 | — | — | — | — | no result |\n";
  }
  std::string medians;
  for (std::size_t i = 0; i < s.medians_us.size(); ++i)
    medians += (i ? ", " : "") + format_fixed(s.medians_us[i], 2);
  if (!medians.empty()) out += "\nMedians (µs), job by job: " + medians + ".\n";
  if (!s.note.empty()) out += "\n" + s.note + "\n";
  return out;
}

std::string render_repeat(const RepeatFigure& r) {
  std::string out = "#### Two tuning runs of the same job\n\nbf16 " + shape_text(r.shape) + ", " +
                    (r.budget > 0 ? "job A samples " + std::to_string(r.budget) +
                                        " variants, job B is pinned to A's candidates"
                                  : "both jobs run every variant that survives the constraints") +
                    ".\n\n";
  out +=
      "| run | job | candidates | measured | winner | winner time | winner distinguishable "
      "from runner-up |\n| --- | --- | --- | --- | --- | --- | --- |\n";
  out += "| A | " + std::to_string(r.job_a) + " | " + std::to_string(r.candidates_a) + " | " +
         std::to_string(r.measured_a) + " | " + config_text(r.winner_a) + " | " +
         format_us(r.winner_a_us > 0 ? std::optional<double>(r.winner_a_us) : std::nullopt) +
         " | " + comparison_cell(r.comparison_a) + " |\n";
  out += "| B | " + std::to_string(r.job_b) + " | " + std::to_string(r.candidates_b) + " | " +
         std::to_string(r.measured_b) + " | " + config_text(r.winner_b) + " | " +
         format_us(r.winner_b_us > 0 ? std::optional<double>(r.winner_b_us) : std::nullopt) +
         " | " + comparison_cell(r.comparison_b) + " |\n";
  if (r.agreement) {
    const WinnerAgreement& a = *r.agreement;
    out += "\n";
    if (a.same_winner) {
      out +=
          "Same winner in both runs; their times differ by " + format_percent(a.winner_gap) + ".";
    } else {
      out += "Different winners. ";
      if (a.b_winner_in_a)
        out += "In run A, B's winner is " + format_percent(*a.b_winner_in_a) + " slower than A's. ";
      if (a.a_winner_in_b)
        out += "In run B, A's winner is " + format_percent(*a.a_winner_in_b) + " slower than B's. ";
      if (!a.b_winner_in_a && !a.a_winner_in_b)
        out += "B's winner time is " + format_percent(a.winner_gap) + " off A's. ";
      out += a.within_tolerance ? "Within 2%: yes." : "Within 2%: no.";
    }
    out += "\n";
  }
  if (!r.note.empty()) out += "\n" + r.note + "\n";
  return out;
}

std::string render_sweeps(const EngineReport& report) {
  const SweepFigure& first = report.sweeps.front();
  std::string out = "#### Sweep speed: serial vs pipelined engine\n\nbf16 " +
                    shape_text(first.shape) + ", " + std::to_string(first.budget) +
                    " variants (the same seeded sample in each sweep), " +
                    (first.fresh_daemon ? "each sweep on its own fresh daemon and database (empty "
                                          "compile cache)"
                                        : "on the shared daemon (compile cache may hold some)") +
                    ".\n\n";
  out +=
      "| engine | job | variants | measured | variants/min | compile s per variant (median) | "
      "GPU idle | job wall time | GPUs |\n| --- | --- | --- | --- | --- | --- | --- | --- | "
      "--- |\n";
  for (const SweepFigure& s : report.sweeps)
    out += "| " + s.pipeline + " | " + std::to_string(s.job_id) + " | " +
           std::to_string(s.variants_finished) + " | " + std::to_string(s.variants_measured) +
           " | " + cell(s.variants_per_minute, 1) +
           (s.variants_per_minute_source == "bench wall clock" ? " (bench clock)" : "") + " | " +
           cell(s.compile_seconds_median, 2, " s") + " | " + percent_cell(s.gpu_idle_fraction) +
           " | " +
           cell(s.wall_seconds ? s.wall_seconds : std::optional<double>(s.bench_seconds), 1, " s") +
           " | " + (s.gpus ? std::to_string(*s.gpus) : "—") + " |\n";
  out += "\n";
  if (auto speedup = pipelined_speedup(report))
    out += "Pipelined / serial variants per minute: " + format_fixed(*speedup, 2) + "×. ";
  if (auto same = sweeps_ran_same_variants(report))
    out += std::string("Same variants in both sweeps: ") + (*same ? "yes" : "no") + ".";
  out += "\n";
  for (const SweepFigure& s : report.sweeps)
    if (!s.note.empty()) out += "\n" + s.pipeline + ": " + s.note + "\n";
  return out;
}

}  // namespace

SweepFigure sweep_from_job(const std::string& pipeline, const GemmShape& shape, std::int64_t budget,
                           const JobRun& run) {
  SweepFigure s;
  s.pipeline = pipeline;
  s.shape = shape;
  s.budget = budget;
  s.job_id = run.job.value("id", std::int64_t{0});
  s.bench_seconds = run.seconds;
  s.stats = run.job.value("stats", nlohmann::json());
  const JobCounts counts = job_counts(run.job);
  s.variants_finished = counts.finished;
  s.variants_measured = counts.measured;
  if (auto finished = number(s.stats, "variants_finished"))
    s.variants_finished = static_cast<std::int64_t>(*finished);
  if (auto measured = number(s.stats, "variants_measured"))
    s.variants_measured = static_cast<std::int64_t>(*measured);
  s.variants_per_minute = number(s.stats, "variants_per_minute");
  s.variants_per_minute_source = "job stats";
  if (!s.variants_per_minute && run.seconds > 0) {
    s.variants_per_minute = static_cast<double>(s.variants_finished) / (run.seconds / 60);
    s.variants_per_minute_source = "bench wall clock";
  }
  s.compile_seconds_median = number(s.stats, "compile_seconds_median");
  s.gpu_idle_fraction = number(s.stats, "gpu_idle_fraction");
  s.wall_seconds = number(s.stats, "wall_seconds");
  if (run.job.contains("gpus") && run.job.at("gpus").is_number_integer())
    s.gpus = run.job.at("gpus").get<std::int64_t>();
  const std::string status = run.job.value("status", std::string("?"));
  if (run.cut_short)
    s.note = "cut short after " + format_fixed(run.seconds, 0) + " s (time limit)";
  else if (status != "done")
    s.note = "job " + status +
             (run.job.contains("reason") && run.job.at("reason").is_string()
                  ? ": " + run.job.at("reason").get<std::string>()
                  : "");
  return s;
}

std::optional<double> pipelined_speedup(const EngineReport& report) {
  std::optional<double> serial, pipelined;
  for (const SweepFigure& s : report.sweeps) {
    if (s.pipeline == "serial") serial = s.variants_per_minute;
    if (s.pipeline == "pipelined") pipelined = s.variants_per_minute;
  }
  if (!serial || !pipelined || !(*serial > 0)) return std::nullopt;
  return *pipelined / *serial;
}

std::optional<bool> sweeps_ran_same_variants(const EngineReport& report) {
  if (report.sweeps.size() < 2) return std::nullopt;
  for (const SweepFigure& s : report.sweeps)
    if (s.variant_keys.empty()) return std::nullopt;
  for (const SweepFigure& s : report.sweeps)
    if (s.variant_keys != report.sweeps.front().variant_keys) return false;
  return true;
}

nlohmann::json engine_report_to_json(const EngineReport& report) {
  nlohmann::json sweeps = nlohmann::json::array();
  for (const SweepFigure& s : report.sweeps) sweeps.push_back(sweep_json(s));
  const auto same = sweeps_ran_same_variants(report);
  return {{"device", report.device},
          {"driver", report.driver},
          {"date", report.date},
          {"spread", report.spread ? spread_json(*report.spread) : nlohmann::json(nullptr)},
          {"repeat", report.repeat ? repeat_json(*report.repeat) : nlohmann::json(nullptr)},
          {"sweeps", sweeps},
          {"pipelined_speedup", or_null(pipelined_speedup(report))},
          {"sweeps_same_variants", same ? nlohmann::json(*same) : nlohmann::json(nullptr)},
          {"notes", report.notes}};
}

std::string render_engine_table(const EngineReport& report) {
  std::string out = "### Measurement engine on " + (report.device.empty() ? "?" : report.device) +
                    " (driver " + (report.driver.empty() ? "?" : report.driver) + "), " +
                    report.date + "\n\n";
  if (report.spread) out += render_spread(*report.spread) + "\n";
  if (report.repeat) out += render_repeat(*report.repeat) + "\n";
  if (!report.sweeps.empty()) out += render_sweeps(report) + "\n";
  for (const std::string& note : report.notes) out += "- " + note + "\n";
  return out;
}

}  // namespace kt::bench
