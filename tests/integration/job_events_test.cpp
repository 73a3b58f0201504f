// GET /v1/jobs/{id}/events against a real kerntuned on loopback: the event sequence of a
// compile-only job as it runs (NVRTC, no GPU) and after it ended, the stream closing after "end",
// 404 for an unknown job, heartbeats, and the cap on open streams (503 past it, /healthz still
// fast, a slot freed when a client leaves).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <chrono>
#include <string>
#include <vector>

#include "client/event_reader.hpp"
#include "client/kerntune_client.hpp"
#include "support/in_process_daemon.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

JobSpec compile_spec(std::int64_t budget) {
  JobSpec spec;
  spec.family = "gemm";
  spec.shape = {{"m", 200}, {"n", 136}, {"k", 72}};
  spec.dtype = "bf16";
  spec.mode = "compile";
  spec.arch = "sm_100a";
  spec.budget = budget;
  return spec;
}

struct Event {
  std::string name;
  nlohmann::json data;
};

std::vector<Event> follow(const Client& client, std::int64_t job_id) {
  std::vector<Event> events;
  client.follow_job(job_id, [&](const std::string& name, const nlohmann::json& data) {
    events.push_back({name, data});
    return true;  // to the end: follow_job returns only once the server closed the stream
  });
  return events;
}

std::string names_of(const std::vector<Event>& events) {
  std::string names;
  for (const Event& event : events) names += (names.empty() ? "" : " ") + event.name;
  return names;
}

// A plain socket, to see the bytes (headers, heartbeats) and the close as a client does.
class RawConnection {
 public:
  explicit RawConnection(unsigned short port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawConnection() { close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void get(const std::string& target, const std::string& headers = "") {
    const std::string request =
        "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
    ASSERT_EQ(send(fd_, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  // Reads until `text` arrived (true), the peer closed or the time is up (false).
  bool read_until(const std::string& text, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (received.find(text) == std::string::npos) {
      if (!read_some(deadline)) return false;
    }
    return true;
  }
  // True when the peer closes within the limit (whatever it sends before).
  bool closed_within(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (read_some(deadline)) {
    }
    return peer_closed_;
  }

  std::string received;

 private:
  bool read_some(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left <= 0ms || peer_closed_) return false;
    pollfd watched{fd_, POLLIN, 0};
    if (poll(&watched, 1, static_cast<int>(left.count())) <= 0) return false;
    char buffer[4096];
    const ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
    if (got <= 0) {
      peer_closed_ = true;
      return false;
    }
    received.append(buffer, static_cast<std::size_t>(got));
    return true;
  }

  int fd_;
  bool connected_ = false;
  bool peer_closed_ = false;
};

TEST(JobEventsTest, StreamFollowsACompileJobFromStatusThroughProgressToEndThenCloses) {
  test::InProcessDaemon daemon;
  const Client client(daemon.url);
  const auto id = client.submit_job(compile_spec(6))["id"].get<std::int64_t>();

  const auto started = std::chrono::steady_clock::now();
  const std::vector<Event> events = follow(client, id);  // returns only once the server closed
  ASSERT_GE(events.size(), 3u) << names_of(events);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 300s);

  EXPECT_EQ(events.front().name, "status") << names_of(events);
  EXPECT_EQ(events.back().name, "end") << names_of(events);
  for (std::size_t i = 0; i + 1 < events.size(); ++i)
    EXPECT_NE(events[i].name, "end") << "an event after end: " << names_of(events);
  std::int64_t finished = -1;
  int progress_events = 0;
  for (const Event& event : events) {
    EXPECT_EQ(event.data.is_object() && event.name != "best"
                  ? event.data.value("job_id", event.data.value("id", std::int64_t{0}))
                  : id,
              id)
        << event.name << " " << event.data;
    if (event.name != "progress") continue;
    ++progress_events;
    const auto now = event.data.at("finished").get<std::int64_t>();
    EXPECT_GE(now, finished) << "progress went backwards: " << event.data;
    finished = now;
    EXPECT_LE(finished, event.data.at("total").get<std::int64_t>());
    EXPECT_TRUE(event.data.at("by_status").is_object());
  }
  EXPECT_GE(progress_events, 1) << names_of(events);
  const nlohmann::json& end = events.back().data;
  EXPECT_EQ(end.at("status"), "done") << end;
  EXPECT_EQ(end.at("progress").at("finished"), end.at("progress").at("total")) << end;
  // The last progress event agrees with the end: nothing was left untold.
  EXPECT_EQ(finished, end.at("progress").at("finished").get<std::int64_t>());
  EXPECT_GT(end.at("progress").at("by_status").value("compiled", 0), 0) << end;
  // The stream told the same as GET /v1/jobs/{id}.
  EXPECT_EQ(client.job(id).at("progress"), end.at("progress"));
}

TEST(JobEventsTest, FinishedJobGivesItsFinalStateAsEventsAndTheServerCloses) {
  test::InProcessDaemon daemon;
  const Client client(daemon.url);
  const auto id = client.submit_job(compile_spec(2))["id"].get<std::int64_t>();
  follow(client, id);  // to its end

  RawConnection connection(daemon.server.port());
  ASSERT_TRUE(connection.connected());
  connection.get("/v1/jobs/" + std::to_string(id) + "/events");
  EXPECT_TRUE(connection.closed_within(5s)) << connection.received;
  const std::string& text = connection.received;
  EXPECT_EQ(text.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << text;
  EXPECT_NE(text.find("Content-Type: text/event-stream\r\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Cache-Control: no-cache\r\n"), std::string::npos) << text;
  const std::size_t status = text.find("event: status\ndata: ");
  const std::size_t progress = text.find("event: progress\ndata: ");
  const std::size_t end = text.find("event: end\ndata: ");
  ASSERT_NE(status, std::string::npos) << text;
  ASSERT_NE(progress, std::string::npos) << text;
  ASSERT_NE(end, std::string::npos) << text;
  EXPECT_LT(status, progress);
  EXPECT_LT(progress, end);
  EXPECT_NE(text.find("\"status\":\"done\""), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 2), "\n\n") << "the end event is the last thing sent";
}

TEST(JobEventsTest, UnknownJobIs404WithTheStandardErrorBody) {
  test::InProcessDaemon daemon;
  const Client client(daemon.url);
  try {
    follow(client, 987654);
    ADD_FAILURE() << "expected a 404";
  } catch (const ClientError& error) {
    EXPECT_EQ(error.status(), 404);
    EXPECT_EQ(error.code(), "unknown_job");
  }
  const HttpReply reply = HttpTransport(parse_server_url(daemon.url), 5000ms, "")
                              .send(boost::beast::http::verb::get, "/v1/jobs/987654/events");
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(reply.body)["error"]["code"], "unknown_job") << reply.body;
  EXPECT_EQ(HttpTransport(parse_server_url(daemon.url), 5000ms, "")
                .send(boost::beast::http::verb::get, "/v1/jobs/x/events")
                .status,
            400);
}

// The id line of the event named `name` in a raw stream ("" if none).
std::string id_of(const std::string& stream, const std::string& name) {
  const std::size_t event = stream.find("event: " + name + "\n");
  if (event == std::string::npos) return "";
  const std::size_t id = stream.rfind("id: ", event);
  if (id == std::string::npos) return "";
  return stream.substr(id + 4, stream.find('\n', id) - id - 4);
}

TEST(JobEventsTest, AClientReconnectingWithLastEventIdGetsNoEventItAlreadyHad) {
  test::InProcessDaemon daemon;
  const Client client(daemon.url);
  const auto id = client.submit_job(compile_spec(2))["id"].get<std::int64_t>();
  follow(client, id);  // until it ended
  const std::string target = "/v1/jobs/" + std::to_string(id) + "/events";
  RawConnection whole(daemon.server.port());
  whole.get(target);
  ASSERT_TRUE(whole.closed_within(10s));
  for (const std::string name : {"status", "progress", "end"})
    ASSERT_FALSE(id_of(whole.received, name).empty()) << name << " has no id:\n" << whole.received;

  // Had everything up to end: only end again (the job is over), nothing repeated.
  RawConnection resumed(daemon.server.port());
  resumed.get(target, "Last-Event-ID: " + id_of(whole.received, "end") + "\r\n");
  ASSERT_TRUE(resumed.closed_within(10s));
  EXPECT_NE(resumed.received.find("event: end"), std::string::npos) << resumed.received;
  EXPECT_EQ(resumed.received.find("event: status"), std::string::npos) << resumed.received;
  EXPECT_EQ(resumed.received.find("event: progress"), std::string::npos) << resumed.received;

  // Had only the first event: the rest, not the status again.
  RawConnection after_status(daemon.server.port());
  after_status.get(target, "Last-Event-ID: " + id_of(whole.received, "status") + "\r\n");
  ASSERT_TRUE(after_status.closed_within(10s));
  EXPECT_EQ(after_status.received.find("event: status"), std::string::npos)
      << after_status.received;
  EXPECT_NE(after_status.received.find("event: progress"), std::string::npos)
      << after_status.received;
  EXPECT_NE(after_status.received.find("event: end"), std::string::npos) << after_status.received;

  // An id the server never wrote: the whole state, as a new client gets it.
  RawConnection stranger(daemon.server.port());
  stranger.get(target, "Last-Event-ID: 42\r\n");
  ASSERT_TRUE(stranger.closed_within(10s));
  EXPECT_NE(stranger.received.find("event: status"), std::string::npos) << stranger.received;
}

TEST(JobEventsTest, StreamsPastTheCapAre503WhileHealthStaysFastAndAClosedStreamFreesItsSlot) {
  ServerOptions options = test::InProcessDaemon::loopback_server();
  options.max_event_streams = 2;
  options.event_heartbeat = 200ms;
  test::InProcessDaemon daemon(options);
  const Client client(daemon.url);
  // Every variant of the space: the job runs for the whole test; cancelled at the end.
  const auto id = client.submit_job(compile_spec(0))["id"].get<std::int64_t>();
  const std::string target = "/v1/jobs/" + std::to_string(id) + "/events";

  auto first = std::make_unique<RawConnection>(daemon.server.port());
  RawConnection second(daemon.server.port());
  first->get(target);
  second.get(target);
  ASSERT_TRUE(first->read_until("event: status", 10s)) << first->received;
  ASSERT_TRUE(second.read_until("event: status", 10s)) << second.received;

  RawConnection third(daemon.server.port());
  third.get(target);
  EXPECT_TRUE(third.read_until("too_many_event_streams", 10s)) << third.received;
  EXPECT_EQ(third.received.rfind("HTTP/1.1 503", 0), 0u) << third.received;
  EXPECT_NE(third.received.find("too_many_event_streams"), std::string::npos) << third.received;
  EXPECT_NE(third.received.find("Retry-After: 5"), std::string::npos) << third.received;

  // The open streams take no I/O thread: /healthz answers at once.
  for (int i = 0; i < 5; ++i) {
    const auto asked = std::chrono::steady_clock::now();
    EXPECT_EQ(client.health().value("status", ""), "ok");
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 500ms);
  }
  // GET /metrics counts them.
  const HttpReply metrics = HttpTransport(parse_server_url(daemon.url), 5000ms, "")
                                .send(boost::beast::http::verb::get, "/metrics");
  EXPECT_NE(metrics.body.find("\nkerntune_event_streams_open 2\n"), std::string::npos)
      << metrics.body;
  // Heartbeats keep an idle stream alive (every 200 ms here, 15 s by default).
  EXPECT_TRUE(second.read_until(": keep-alive\n\n", 5s)) << second.received;

  // A client that leaves frees its slot: the server notices the close without writing to it.
  first.reset();
  bool admitted = false;
  for (int attempt = 0; attempt < 50 && !admitted; ++attempt) {
    RawConnection again(daemon.server.port());
    again.get(target);
    admitted =
        again.read_until("event: status", 2s) && again.received.rfind("HTTP/1.1 200", 0) == 0;
    if (!admitted) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(admitted);

  client.cancel(id);
  // The cancel reaches the open stream: it ends with the job.
  EXPECT_TRUE(second.closed_within(60s)) << second.received.substr(0, 400);
  EXPECT_NE(second.received.find("event: end"), std::string::npos);
  EXPECT_NE(second.received.find("\"status\":\"cancelled\""), std::string::npos);
}

}  // namespace
}  // namespace kt
