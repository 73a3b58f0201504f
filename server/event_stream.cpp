#include "server/event_stream.hpp"

#include <spdlog/spdlog.h>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>

#include "server/job_event_text.hpp"

namespace kt {
namespace beast = boost::beast;
using tcp = boost::asio::ip::tcp;

// No Content-Length and no chunking: the body ends when the server closes the connection, which
// every SSE client (EventSource included) expects of a stream.
std::string event_stream_head(unsigned version) {
  return std::string(version >= 11 ? "HTTP/1.1" : "HTTP/1.0") +
         " 200 OK\r\n"
         "Server: kerntuned\r\n"
         "Content-Type: text/event-stream\r\n"
         "Cache-Control: no-cache\r\n"
         "X-Accel-Buffering: no\r\n"  // nginx: pass events on as they come
         "Connection: close\r\n"
         "\r\n";
}

std::optional<EventStreamSlots::Slot> EventStreamSlots::acquire(
    const std::shared_ptr<EventStreamSlots>& slots) {
  if (!slots) return std::nullopt;
  if (slots->open_.fetch_add(1) >= slots->max_) {
    slots->open_.fetch_sub(1);
    return std::nullopt;
  }
  return Slot(slots);
}

EventStream::EventStream(beast::tcp_stream& stream, std::shared_ptr<void> owner, JobEventHub& hub,
                         JobEventHub::Snapshot initial, unsigned version,
                         EventStreamSettings settings, EventStreamSlots::Slot slot)
    : stream_(stream),
      owner_(std::move(owner)),
      hub_(hub),
      told_(settings.resume_from),
      pending_(std::move(initial)),
      version_(version),
      settings_(settings),
      slot_(std::move(slot)),
      heartbeat_(stream.get_executor()) {}

void EventStream::start() {
  const std::weak_ptr<EventStream> weak = weak_from_this();
  auto executor = stream_.get_executor();
  JobEventHub::Snapshot latest;
  const std::int64_t job_id = pending_->job.id;
  // The hub's thread only posts: the snapshot is taken up on the strand.
  subscription_ = hub_.subscribe(
      job_id,
      [weak, executor](const JobEventHub::Snapshot& snapshot) {
        if (weak.expired()) return;
        boost::asio::post(executor, [weak, snapshot] {
          if (auto self = weak.lock()) self->on_snapshot(snapshot);
        });
      },
      &latest);
  if (latest) pending_ = latest;  // newer than what the handler read, or as new
  stream_.expires_never();
  queued_ = event_stream_head(version_);
  watch_for_close();
  arm_heartbeat();
  write_next();
}

void EventStream::on_snapshot(JobEventHub::Snapshot snapshot) {
  if (closed_ || ending_) return;
  pending_ = std::move(snapshot);
  write_next();
}

void EventStream::write_next() {
  if (writing_ || closed_) return;
  std::string text = std::move(queued_);
  queued_.clear();
  if (pending_ && !ending_) {
    text += job_events_since(told_ ? &*told_ : nullptr, *pending_, settings_.decorate_end);
    told_ = digests_of(*pending_);
    ending_ = is_finished(pending_->job.status);
    pending_.reset();
  }
  if (text.empty()) {
    if (ending_) close();
    return;
  }
  writing_ = true;
  writing_text_ = std::move(text);
  // A client that does not read for this long is dropped: nothing piles up for it.
  stream_.expires_after(settings_.write_timeout);
  boost::asio::async_write(stream_, boost::asio::buffer(writing_text_),
                           beast::bind_front_handler(&EventStream::on_write, shared_from_this()));
}

void EventStream::on_write(beast::error_code ec, std::size_t) {
  writing_ = false;
  if (ec) {
    spdlog::debug("event stream: write: {}", ec.message());
    return close();
  }
  stream_.expires_never();
  if (ending_ && queued_.empty()) return close();
  write_next();
}

void EventStream::watch_for_close() {
  // A client sends nothing after its GET: a read that completes means it closed (or broke the
  // protocol), and the stream ends without waiting for the next write to fail.
  stream_.socket().async_read_some(
      boost::asio::buffer(read_buffer_),
      boost::asio::bind_executor(stream_.get_executor(),
                                 [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                   if (ec) return self->close();
                                   self->watch_for_close();
                                 }));
}

void EventStream::arm_heartbeat() {
  heartbeat_.expires_after(settings_.heartbeat);
  heartbeat_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec || self->closed_) return;
    if (!self->writing_ && !self->ending_) {
      self->queued_ += kSseHeartbeat;
      self->write_next();
    }
    self->arm_heartbeat();
  });
}

void EventStream::close() {
  if (closed_) return;
  closed_ = true;
  subscription_.reset();
  heartbeat_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

}  // namespace kt
