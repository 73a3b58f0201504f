// A job's Server-Sent Events on one connection (GET /v1/jobs/{id}/events), once its handler found
// the job. The stream subscribes to the engine's JobEventHub and writes, on the connection's
// strand, the events between what the client was last sent and the newest snapshot: one snapshot
// waits at most, so a slow client gets coalesced updates, never an unbounded buffer, and one whose
// writes stall past the write timeout is dropped. A comment every heartbeat interval keeps
// proxies from closing an idle stream (and finds a client that left). After the job's "end"
// event the server closes the connection.
//
// Streams are capped (--max-event-streams) below the connection cap, which they count against
// too: a stream over the cap is answered 503.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "engine/job_events.hpp"
#include "server/job_event_text.hpp"

namespace kt {

inline constexpr std::size_t kDefaultMaxEventStreams = 64;

// The count of open streams against their cap, shared by the sessions.
class EventStreamSlots {
 public:
  explicit EventStreamSlots(std::size_t max) : max_(max) {}
  // Holds one slot until destroyed.
  class Slot {
   public:
    explicit Slot(std::shared_ptr<EventStreamSlots> slots) : slots_(std::move(slots)) {}
    Slot(Slot&&) = default;
    Slot& operator=(Slot&&) = default;
    ~Slot() {
      if (slots_) slots_->open_.fetch_sub(1);
    }

   private:
    std::shared_ptr<EventStreamSlots> slots_;
  };
  // A slot, or nullopt when max streams are open.
  static std::optional<Slot> acquire(const std::shared_ptr<EventStreamSlots>& slots);
  std::size_t max() const { return max_; }
  std::size_t open() const { return open_.load(); }

 private:
  const std::size_t max_;
  std::atomic<std::size_t> open_{0};
};

struct EventStreamSettings {
  std::chrono::milliseconds heartbeat{15000};
  std::chrono::seconds write_timeout{30};
  JobViewDecorator decorate_end;  // the end event's job view as the job route gives it
  // What the client holds already (its Last-Event-ID): only what differs is sent.
  std::optional<EventDigests> resume_from;
};

// The status line and headers a stream starts with (HTTP/1.0 or 1.1 as the request was): no
// Content-Length, the body ends when the server closes. A HEAD request gets them alone.
std::string event_stream_head(unsigned version);

class EventStream : public std::enable_shared_from_this<EventStream> {
 public:
  // Takes over `stream` (a connection whose request was just read): `owner` keeps the session
  // that owns it alive, and with it the connection's slot. `initial`: the job as the handler read
  // it, used when the hub has published nothing newer. version: the request's HTTP version.
  EventStream(boost::beast::tcp_stream& stream, std::shared_ptr<void> owner, JobEventHub& hub,
              JobEventHub::Snapshot initial, unsigned version, EventStreamSettings settings,
              EventStreamSlots::Slot slot);
  // Call on the connection's strand.
  void start();

 private:
  void on_snapshot(JobEventHub::Snapshot snapshot);
  void write_next();
  void on_write(boost::beast::error_code ec, std::size_t bytes);
  void watch_for_close();
  void arm_heartbeat();
  void close();

  boost::beast::tcp_stream& stream_;
  std::shared_ptr<void> owner_;
  JobEventHub& hub_;
  JobEventHub::Subscription subscription_;
  std::optional<EventDigests> told_;  // what the client holds (nullopt: nothing yet)
  JobEventHub::Snapshot pending_;     // newer, not yet written
  std::string queued_;                // text waiting for the write in flight (headers, heartbeat)
  std::string writing_text_;          // the text of the write in flight
  unsigned version_;
  EventStreamSettings settings_;
  EventStreamSlots::Slot slot_;
  boost::asio::steady_timer heartbeat_;
  std::array<char, 512> read_buffer_{};
  bool writing_ = false;
  bool ending_ = false;  // the end event is written or being written
  bool closed_ = false;
};

}  // namespace kt
