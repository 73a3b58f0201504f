#include "bench/job_figures.hpp"

#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

std::optional<double> number_field(const nlohmann::json& j, const char* field) {
  if (!j.is_object() || !j.contains(field) || !j.at(field).is_number()) return std::nullopt;
  return j.at(field).get<double>();
}

nlohmann::json object_field(const nlohmann::json& j, const char* field) {
  return j.is_object() && j.contains(field) ? j.at(field) : nlohmann::json();
}

}  // namespace

std::string join_notes(const std::vector<std::string>& notes) {
  std::string text;
  for (const std::string& note : notes)
    if (!note.empty()) text += (text.empty() ? "" : "; ") + note;
  return text;
}

JobFigures job_figures(const JobRun& run, bool expect_baseline) {
  JobFigures figures;
  const nlohmann::json& job = run.job;
  const JobCounts counts = job_counts(job);
  figures.tuning_seconds = run.seconds;
  figures.variants_measured = counts.measured;
  const nlohmann::json best = object_field(job, "best");
  // The job's "best" carries the winner's first-pass median (as the GEMM bench reads it).
  figures.first_pass_us = number_field(best, "median_us");
  if (best.is_object() && best.contains("template")) {
    figures.config = pinned_config(best);
    if (const auto id = number_field(best, "id")) {
      figures.winner_variant_id = static_cast<std::int64_t>(*id);
      figures.candidate_ids.push_back(figures.winner_variant_id);
    }
  }
  const nlohmann::json final = object_field(best, "final");
  const auto final_us = number_field(final, "median_us");
  if (final_us) {
    figures.from_final = true;
    figures.ours_us = final_us;
    figures.baseline_us = number_field(final, "baseline_median_us");
    figures.baseline = object_field(final, "baseline");
    const auto ratio = number_field(final, "speedup");
    const auto low = number_field(final, "speedup_low");
    const auto high = number_field(final, "speedup_high");
    if (figures.baseline_us && ratio && low && high) {
      figures.ratio = ratio;
      figures.ratio_low = low;
      figures.ratio_high = high;
    }
  } else {
    figures.ours_us = figures.first_pass_us;
  }
  const nlohmann::json ids =
      object_field(object_field(object_field(job, "comparison"), "final"), "variant_ids");
  if (ids.is_array())
    for (const nlohmann::json& id : ids)
      if (id.is_number_integer() && id.get<std::int64_t>() != figures.winner_variant_id)
        figures.candidate_ids.push_back(id.get<std::int64_t>());

  std::vector<std::string> notes;
  const std::string status = job.value("status", std::string("?"));
  if (run.cut_short) {
    notes.push_back("cut short after " + format_fixed(run.seconds, 0) +
                    " s (time limit): " + std::to_string(counts.finished) + " of " +
                    std::to_string(counts.to_run) + " variants ran");
  } else if (status != "done") {
    const std::string reason = job.contains("reason") && job.at("reason").is_string()
                                   ? ": " + job.at("reason").get<std::string>()
                                   : "";
    notes.push_back("job " + status + reason);
  }
  if (!figures.ours_us)
    notes.push_back("no variant measured");
  else if (!figures.from_final)
    notes.push_back("no final comparison: first-pass figures, no interval");
  if (expect_baseline && figures.ours_us && !figures.ratio) notes.push_back("no baseline time");
  figures.note = join_notes(notes);
  return figures;
}

}  // namespace kt::bench
