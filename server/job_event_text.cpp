#include "server/job_event_text.hpp"

#include "server/json_views.hpp"

namespace kt {
namespace {

std::int64_t count_of(const JobProgress& progress, const std::string& status) {
  const auto it = progress.by_status.find(status);
  return it == progress.by_status.end() ? 0 : it->second;
}

nlohmann::json status_data(const JobRecord& job) {
  return {{"job_id", job.id},
          {"status", std::string(to_string(job.status))},
          {"reason", job.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.reason)},
          {"cancel_requested", job.cancel_requested}};
}

nlohmann::json progress_data(const JobSnapshot& snapshot) {
  nlohmann::json data = progress_to_json(snapshot.progress);
  data["job_id"] = snapshot.job.id;
  data["measured"] = count_of(snapshot.progress, "measured");
  return data;
}

bool same_best(const std::optional<VariantRecord>& a, const std::optional<VariantRecord>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  // The final comparison may re-measure the same variant: its figures change, its id does not.
  return variant_to_json(*a) == variant_to_json(*b);
}

}  // namespace

std::string sse_event(const std::string& name, const nlohmann::json& data) {
  // dump() escapes control characters, so the JSON has no newline that would end the data line.
  return "event: " + name + "\ndata: " + data.dump() + "\n\n";
}

std::string job_events_text(const JobSnapshot* before, const JobSnapshot& after,
                            const JobViewDecorator& decorate_end) {
  std::string text;
  const JobRecord& job = after.job;
  if (!before || before->job.status != job.status || before->job.reason != job.reason ||
      before->job.cancel_requested != job.cancel_requested)
    text += sse_event("status", status_data(job));
  if (!before || before->progress.total != after.progress.total ||
      before->progress.finished != after.progress.finished ||
      before->progress.by_status != after.progress.by_status)
    text += sse_event("progress", progress_data(after));
  if (after.best && (!before || !same_best(before->best, after.best)))
    text += sse_event("best", variant_to_json(*after.best));
  if (is_finished(job.status)) {
    nlohmann::json view = job_to_json(job, after.progress, after.best, true);
    if (decorate_end) decorate_end(view, job);
    text += sse_event("end", view);
  }
  return text;
}

}  // namespace kt
