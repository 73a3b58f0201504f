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
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/job_events.hpp"

namespace kt {

// One event: "event: NAME\ndata: JSON\n\n" (the JSON on one line).
std::string sse_event(const std::string& name, const nlohmann::json& data);
// A comment line that keeps proxies from closing an idle stream.
inline constexpr const char* kSseHeartbeat = ": keep-alive\n\n";

// Adds to the end event's job view what the job route adds beyond json_views (its staleness).
using JobViewDecorator = std::function<void(nlohmann::json& view, const JobRecord& job)>;

// The events that take a client who saw `before` (null: nothing yet) to `after`.
std::string job_events_text(const JobSnapshot* before, const JobSnapshot& after,
                            const JobViewDecorator& decorate_end = {});

}  // namespace kt
