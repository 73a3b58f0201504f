#include "server/job_event_text.hpp"

#include "server/json_views.hpp"
#include "tuner/compile/sha256.hpp"

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

constexpr std::size_t kDigestChars = 16;

std::string digest(const nlohmann::json& data) {
  Sha256 hash;
  hash.update(data.dump());
  return hash.hex_digest().substr(0, kDigestChars);
}

bool is_digest(std::string_view text) {
  return text.empty() || (text.size() == kDigestChars &&
                          text.find_first_not_of("0123456789abcdef") == std::string_view::npos);
}

}  // namespace

std::string sse_event(const std::string& name, const nlohmann::json& data, const std::string& id) {
  // dump() escapes control characters, so the JSON has no newline that would end the data line.
  return (id.empty() ? "" : "id: " + id + "\n") + "event: " + name + "\ndata: " + data.dump() +
         "\n\n";
}

EventDigests digests_of(const JobSnapshot& snapshot) {
  // The final comparison may re-measure the same variant: its figures change, its id does not,
  // so the best's digest covers the whole of its data.
  return {digest(status_data(snapshot.job)), digest(progress_data(snapshot)),
          snapshot.best ? digest(variant_to_json(*snapshot.best)) : ""};
}

std::string event_id(const EventDigests& digests) {
  return digests.status + "-" + digests.progress + "-" + digests.best;
}

std::optional<EventDigests> parse_event_id(std::string_view id) {
  const std::size_t first = id.find('-');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = id.find('-', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  EventDigests digests{std::string(id.substr(0, first)),
                       std::string(id.substr(first + 1, second - first - 1)),
                       std::string(id.substr(second + 1))};
  if (!is_digest(digests.status) || !is_digest(digests.progress) || !is_digest(digests.best))
    return std::nullopt;
  return digests;
}

std::string job_events_text(const JobSnapshot* before, const JobSnapshot& after,
                            const JobViewDecorator& decorate_end) {
  if (!before) return job_events_since(nullptr, after, decorate_end);
  const EventDigests told = digests_of(*before);
  return job_events_since(&told, after, decorate_end);
}

std::string job_events_since(const EventDigests* told, const JobSnapshot& after,
                             const JobViewDecorator& decorate_end) {
  std::string text;
  const JobRecord& job = after.job;
  const EventDigests now = digests_of(after);
  // What the client holds after each event: its id.
  EventDigests held = told ? *told : EventDigests{};
  if (!told || told->status != now.status) {
    held.status = now.status;
    text += sse_event("status", status_data(job), event_id(held));
  }
  if (!told || told->progress != now.progress) {
    held.progress = now.progress;
    text += sse_event("progress", progress_data(after), event_id(held));
  }
  if (after.best && (!told || told->best != now.best)) {
    held.best = now.best;
    text += sse_event("best", variant_to_json(*after.best), event_id(held));
  }
  if (is_finished(job.status)) {
    nlohmann::json view = job_to_json(job, after.progress, after.best, true);
    if (decorate_end) decorate_end(view, job);
    text += sse_event("end", view, event_id(held));
  }
  return text;
}

}  // namespace kt
