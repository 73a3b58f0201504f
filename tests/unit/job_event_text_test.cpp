// The text of a job's events: the first snapshot tells everything, later ones only what changed,
// a finished job ends with "end", and every event is one "event:" and one "data:" line of JSON.
#include "server/job_event_text.hpp"

#include <gtest/gtest.h>

#include "client/event_reader.hpp"

namespace kt {
namespace {

JobSnapshot running_job() {
  JobSnapshot s;
  s.job.id = 7;
  s.job.family = "gemm";
  s.job.status = JobStatus::running;
  s.progress.total = 10;
  s.progress.finished = 2;
  s.progress.by_status = {{"measured", 1}, {"compile_error", 1}, {"pending", 8}};
  return s;
}

std::vector<SseEvent> parsed(const std::string& text) {
  SseParser parser;
  return parser.feed(text);
}

std::string names(const std::vector<SseEvent>& events) {
  std::string out;
  for (const auto& e : events) out += (out.empty() ? "" : " ") + e.name;
  return out;
}

TEST(JobEventText, FirstSnapshotSendsStatusAndProgressThenOnlyWhatChanged) {
  const JobSnapshot first = running_job();
  const auto opening = parsed(job_events_text(nullptr, first));
  ASSERT_EQ(names(opening), "status progress");
  const auto status = nlohmann::json::parse(opening[0].data);
  EXPECT_EQ(status["job_id"], 7);
  EXPECT_EQ(status["status"], "running");
  EXPECT_TRUE(status["reason"].is_null());
  const auto progress = nlohmann::json::parse(opening[1].data);
  EXPECT_EQ(progress["total"], 10);
  EXPECT_EQ(progress["finished"], 2);
  EXPECT_EQ(progress["measured"], 1);
  EXPECT_EQ(progress["by_status"]["compile_error"], 1);

  EXPECT_EQ(job_events_text(&first, first), "") << "nothing changed, nothing sent";

  JobSnapshot later = first;
  later.progress.finished = 3;
  later.progress.by_status["measured"] = 2;
  later.best = VariantRecord{};
  later.best->id = 99;
  later.best->job_id = 7;
  later.best->status = VariantStatus::measured;
  EXPECT_EQ(names(parsed(job_events_text(&first, later))), "progress best");
  EXPECT_EQ(names(parsed(job_events_text(&later, later))), "");
}

// Each event's id says what the client holds once it has it; a stream resumed from an id sends
// only what differs from it, and an id this server did not write is not taken.
TEST(JobEventText, EveryEventHasAnIdAndAResumedStreamRepeatsNothingItHad) {
  const JobSnapshot first = running_job();
  const std::string opening = job_events_text(nullptr, first);
  ASSERT_EQ(opening.rfind("id: ", 0), 0u) << opening;
  const std::size_t second_id = opening.find("id: ", 1);
  ASSERT_NE(second_id, std::string::npos) << opening;
  const std::string after_status = opening.substr(4, opening.find('\n') - 4);
  const std::string after_progress =
      opening.substr(second_id + 4, opening.find('\n', second_id) - second_id - 4);
  const auto held_status = parse_event_id(after_status);
  const auto held_both = parse_event_id(after_progress);
  ASSERT_TRUE(held_status) << after_status;
  ASSERT_TRUE(held_both) << after_progress;
  EXPECT_EQ(*held_both, digests_of(first));

  // Had everything: nothing again. Had only the status: the progress, not the status.
  EXPECT_EQ(job_events_since(&*held_both, first), "");
  EXPECT_EQ(names(parsed(job_events_since(&*held_status, first))), "progress");
  // Missed a change of progress and a new best while away: those two.
  JobSnapshot later = first;
  later.progress.finished = 3;
  later.best = VariantRecord{};
  later.best->id = 99;
  later.best->job_id = 7;
  EXPECT_EQ(names(parsed(job_events_since(&*held_both, later))), "progress best");
  // A finished job always ends with end, after only what changed.
  const auto before_done = parse_event_id(event_id(digests_of(later)));
  ASSERT_TRUE(before_done);
  later.job.status = JobStatus::done;
  EXPECT_EQ(names(parsed(job_events_since(&*before_done, later))), "status end");

  for (const std::string bad : {"", "42", "a-b-c", "x--", "0123456789abcdef-0123456789abcdeg-"})
    EXPECT_FALSE(parse_event_id(bad)) << bad;
  EXPECT_TRUE(parse_event_id("--"));  // holds nothing: everything is sent
}

TEST(JobEventText, FinishedJobEndsWithTheJobAndAReasonTravelsInStatus) {
  const JobSnapshot before = running_job();
  JobSnapshot failed = before;
  failed.job.status = JobStatus::failed;
  failed.job.reason = "worker refused\nthe request";  // a newline stays inside the JSON string
  const std::string text = job_events_text(&before, failed);
  const auto events = parsed(text);
  ASSERT_EQ(names(events), "status end");
  EXPECT_EQ(nlohmann::json::parse(events[0].data)["reason"], "worker refused\nthe request");
  const auto end = nlohmann::json::parse(events[1].data);
  EXPECT_EQ(end["id"], 7);
  EXPECT_EQ(end["status"], "failed");
  EXPECT_EQ(end["progress"]["finished"], 2);
}

TEST(SseParser, EventsSplitAcrossChunksCommentsAndCrLf) {
  SseParser parser;
  EXPECT_TRUE(parser.feed(": keep-alive\n\nevent: prog").empty());
  EXPECT_TRUE(parser.feed("ress\r\ndata: {\"a\":").empty());
  const auto events = parser.feed("1}\r\n\r\ndata: x\ndata: y\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, "progress");
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[1].name, "message");
  EXPECT_EQ(events[1].data, "x\ny");
}

}  // namespace
}  // namespace kt
