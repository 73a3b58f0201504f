#include "server/answer_cache.hpp"

#include <utility>

#include "server/app_context.hpp"

namespace kt {

std::optional<ApiResponse> AnswerCache::find(std::string_view key, std::uint64_t writes) const {
  std::lock_guard lock(mutex_);
  const auto found = answers_.find(std::string(key));
  if (found == answers_.end() || found->second.writes != writes) return std::nullopt;
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

Handler remembered(Handler handler) {
  return [handler = std::move(handler)](const ApiRequest& request, AppContext& context) {
    // Read before the first query: a write that commits meanwhile makes the answer stale at once.
    const std::uint64_t writes = context.store.write_count();
    ApiResponse answer = handler(request, context);
    if (answer.status == HttpStatus::ok)
      context.answers->store(std::string(request.http.target()), writes, answer);
    return answer;
  };
}

std::optional<ApiResponse> remembered_answer(const ApiRequest& request, AppContext& context) {
  return context.answers->find(request.http.target(), context.store.write_count());
}

}  // namespace kt
