// Finished answers of hot read routes (/v1/best, /v1/history, a page of variants), kept with the
// store's write stamp of what they read at the time they were computed: while no write that may
// change it has committed since, the same request target gets the same answer, served on the I/O
// thread without a query, JSON building or a hop to the query pool. A page of one job's variants
// depends on that job's writes only, /v1/best on the fronts' only, so a running job's progress
// does not empty them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "server/api_response.hpp"
#include "server/router.hpp"

namespace kt {

class AnswerCache {
 public:
  // Bounded in entries and in body bytes (a page of variants is ~100 KB): beyond either the
  // cache is emptied rather than grown.
  static constexpr std::size_t kMaxAnswers = 4096;
  static constexpr std::size_t kMaxBytes = 16 << 20;

  // The answer stored for key while writes is still the store's write stamp, else nullopt.
  std::optional<ApiResponse> find(std::string_view key, std::uint64_t writes) const;
  // The answer stored for key, however old: what is served while the database is unreachable.
  std::optional<ApiResponse> last(std::string_view key) const;
  // writes: the store's write stamp of the answer's scope, read before its first query.
  void store(std::string key, std::uint64_t writes, ApiResponse answer);

 private:
  struct Entry {
    std::uint64_t writes;
    ApiResponse answer;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> answers_;
  std::size_t bytes_ = 0;
};

// What a route's answer reads, so only the writes that may change it drop it.
enum class AnswerScope {
  everything,  // any write (the history lists every job with its progress)
  path_job,    // the rows of the job named by the path's {id}
  fronts,      // the Pareto fronts and what /v1/best reads
};

// The handler, remembering its 200 answers in context.answers under the request target.
Handler remembered(Handler handler, AnswerScope scope);
// A remembered answer to the request target, if nothing in scope was written since (a lookup:
// safe on an I/O thread).
MemoryAnswer remembered_answer(AnswerScope scope);

}  // namespace kt
