// Batches (POST /v1/batches): many problems tuned as one request. A batch keeps, per problem in
// the order it runs (largest time share first), what was planned for it and the job that tunes or
// tuned it; how far each job is lives on the job's own rows (Store's batch methods).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/model.hpp"

namespace kt {

// What a batch did with one of its problems.
enum class BatchPlan {
  submitted,  // a new job, the batch's own (a cancel of the batch cancels it)
  joined,     // an unfinished job of the same problem that was queued before: waited on, not owned
  tuned,      // answered and current before the batch: no job (job_id: the job that tuned it)
  refused     // not tuned: the reason and its error code say why
};
const char* to_string(BatchPlan plan);
std::optional<BatchPlan> batch_plan_from_string(const std::string& text);

struct BatchProblemRecord {
  int position = 0;  // 0-based, in the order the batch runs its problems
  std::string family;
  Shape shape;
  std::string dtype;
  double share = 0;        // of the recorded GPU time, as the client sent it
  std::int64_t calls = 0;  // as the client sent it
  BatchPlan plan = BatchPlan::submitted;
  std::optional<std::int64_t> job_id;
  std::string note;        // why refused, joined or skipped
  std::string error_code;  // the refusal's API error code ("" otherwise)
};

struct NewBatch {
  std::string label;         // the client's name for it ("" = none)
  std::string device;        // the selector as asked ("" = the first GPU)
  std::string device_model;  // the GPU model its jobs tune on
  std::int64_t budget_per_shape = 0;
  std::string search;  // "" = each job's default
  bool retune = false;
  // Cancel the batch's own jobs left unfinished this long after it was stored (nullopt: never).
  std::optional<double> minutes;
  std::vector<BatchProblemRecord> problems;
};

struct BatchRecord : NewBatch {
  std::int64_t id = 0;
  bool cancel_requested = false;
  std::optional<std::int64_t> deadline_ms;  // when `minutes` runs out, the database's clock
  std::string created_at;                   // ISO 8601 UTC
};

struct BatchPage {
  std::vector<BatchRecord> batches;  // newest first
  std::optional<std::int64_t> next_before_id;
};

}  // namespace kt

namespace kt::db {

class ReadPool;
class StoreWriter;

class BatchStore {
 public:
  BatchStore(StoreWriter& writer, ReadPool& readers) : writer_(writer), readers_(readers) {}

  std::int64_t create_batch(const NewBatch& batch);
  std::optional<BatchRecord> batch(std::int64_t id);
  BatchPage batch_page(int limit, std::int64_t before_id);
  bool request_batch_cancel(std::int64_t id);
  std::vector<BatchRecord> batches_past_deadline();

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
};

}  // namespace kt::db
