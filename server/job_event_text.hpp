// The text of a job's Server-Sent Events (GET /v1/jobs/{id}/events), from two snapshots: what the
// client was last told and the job now. A stream sends only what changed, so a client that fell
// behind gets the current state in one go instead of a backlog:
//   event: status    {"job_id","status","reason","cancel_requested"}  when any of them changed
//   event: progress  {"job_id","total","finished","measured","by_status"}  when a count changed
//   event: best      the best variant (as GET /v1/variants/{id})  when it is another one or its
//                    figures changed
//   event: end       the job (as GET /v1/jobs/{id}, without stats and plots)  once it finished;
//                    the server closes the stream after it
// The first snapshot of a stream (before = null) sends status, progress and best (if any).
// Every event carries an id: digests of the status, progress and best data the client holds once
// it has that event. A client that reconnects with Last-Event-ID (EventSource does it by itself)
// resumes from there: only the events whose data differs from what that id says it holds come
// again (and end, once the job finished), never a repeat of what it had.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/job_events.hpp"

namespace kt {

// One event: "event: NAME\ndata: JSON\n\n" (the JSON on one line), after "id: ID\n" when given.
std::string sse_event(const std::string& name, const nlohmann::json& data,
                      const std::string& id = "");

// What a client holds of a job: 16 hex digits of SHA-256 of each event's data ("" = none).
struct EventDigests {
  std::string status;
  std::string progress;
  std::string best;
  bool operator==(const EventDigests&) const = default;
};
EventDigests digests_of(const JobSnapshot& snapshot);
// "STATUS-PROGRESS-BEST": an event's id.
std::string event_id(const EventDigests& digests);
// The digests of an id this server wrote; nullopt for anything else (the stream starts afresh).
std::optional<EventDigests> parse_event_id(std::string_view id);
// A comment line that keeps proxies from closing an idle stream.
inline constexpr const char* kSseHeartbeat = ": keep-alive\n\n";

// Adds to the end event's job view what the job route adds beyond json_views (its staleness).
using JobViewDecorator = std::function<void(nlohmann::json& view, const JobRecord& job)>;

// The events that take a client who saw `before` (null: nothing yet) to `after`.
std::string job_events_text(const JobSnapshot* before, const JobSnapshot& after,
                            const JobViewDecorator& decorate_end = {});
// The same from what the client holds (null: nothing yet), e.g. after a Last-Event-ID.
std::string job_events_since(const EventDigests* told, const JobSnapshot& after,
                             const JobViewDecorator& decorate_end = {});

}  // namespace kt
