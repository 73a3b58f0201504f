#include "server/answer_cache.hpp"

#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include "server/app_context.hpp"

namespace kt {

std::optional<ApiResponse> AnswerCache::find(std::string_view key, std::uint64_t writes) const {
  std::lock_guard lock(mutex_);
  const auto found = answers_.find(std::string(key));
  if (found == answers_.end() || found->second.writes != writes) return std::nullopt;
  return found->second.answer;
}

std::optional<ApiResponse> AnswerCache::last(std::string_view key) const {
  std::lock_guard lock(mutex_);
  const auto found = answers_.find(std::string(key));
  if (found == answers_.end()) return std::nullopt;
  return found->second.answer;
}

void AnswerCache::store(std::string key, std::uint64_t writes, ApiResponse answer) {
  const std::size_t size = key.size() + answer.body.size();
  if (size > kMaxBytes / 4) return;  // not worth emptying the cache for
  std::lock_guard lock(mutex_);
  if (const auto old = answers_.find(key); old != answers_.end()) {
    bytes_ -= old->first.size() + old->second.answer.body.size();
    answers_.erase(old);
  }
  if (answers_.size() >= kMaxAnswers || bytes_ + size > kMaxBytes) {
    answers_.clear();
    bytes_ = 0;
  }
  bytes_ += size;
  answers_.emplace(std::move(key), Entry{writes, std::move(answer)});
}

namespace {

std::uint64_t write_stamp(AnswerScope scope, const ApiRequest& request, AppContext& context) {
  if (scope == AnswerScope::fronts) return context.store.fronts_write_stamp();
  if (scope == AnswerScope::path_job) {
    const auto id = request.path_params.find("id");
    std::int64_t job_id = 0;
    if (id != request.path_params.end()) {
      const std::string& text = id->second;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), job_id);
      if (error == std::errc() && end == text.data() + text.size())
        return context.store.job_write_stamp(job_id);
    }
  }
  return context.store.write_count();
}

}  // namespace

Handler remembered(Handler handler, AnswerScope scope) {
  return [handler = std::move(handler), scope](const ApiRequest& request, AppContext& context) {
    // Read before the first query: a write that commits meanwhile makes the answer stale at once.
    const std::uint64_t writes = write_stamp(scope, request, context);
    const std::string key(request.http.target());
    // Requests that missed together queue on the pool: the first computes, the rest find it.
    if (auto answer = context.answers->find(key, writes)) return *std::move(answer);
    ApiResponse answer;
    try {
      answer = handler(request, context);
    } catch (const StoreUnavailable&) {
      // The database is away: the last answer this daemon gave, marked stale (RFC 9111's 110).
      auto stale = context.answers->last(key);
      if (!stale) throw;
      stale->headers.emplace_back("Warning", "110 kerntuned \"store unreachable: last answer\"");
      return *std::move(stale);
    }
    if (answer.status == HttpStatus::ok && answer.rememberable)
      context.answers->store(key, writes, answer);
    return answer;
  };
}

MemoryAnswer remembered_answer(AnswerScope scope) {
  return [scope](const ApiRequest& request, AppContext& context) {
    return context.answers->find(request.http.target(), write_stamp(scope, request, context));
  };
}

}  // namespace kt
