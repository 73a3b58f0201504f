// kt::db::BatchStore: a batch and its problems written in one transaction, read back whole.
#include "db/batch_store.hpp"

#include <limits>
#include <mutex>
#include <stdexcept>

#include "db/connection.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt {

const char* to_string(BatchPlan plan) {
  switch (plan) {
    case BatchPlan::submitted:
      return "submitted";
    case BatchPlan::joined:
      return "joined";
    case BatchPlan::tuned:
      return "tuned";
    case BatchPlan::refused:
      return "refused";
  }
  return "refused";
}

std::optional<BatchPlan> batch_plan_from_string(const std::string& text) {
  for (BatchPlan plan :
       {BatchPlan::submitted, BatchPlan::joined, BatchPlan::tuned, BatchPlan::refused})
    if (text == to_string(plan)) return plan;
  return std::nullopt;
}

}  // namespace kt

namespace kt::db {
namespace {

const char* const kBatchSelect =
    "SELECT id, label, device, device_model, budget_per_shape, search, retune, cancel_requested,"
    " created_at, minutes, deadline_ms FROM batches";

BatchRecord read_batch(const Statement& row) {
  BatchRecord batch;
  batch.id = row.column("id").int64();
  batch.label = row.column("label").text();
  batch.device = row.column("device").text();
  batch.device_model = row.column("device_model").text();
  batch.budget_per_shape = row.column("budget_per_shape").int64();
  batch.search = row.column("search").text();
  batch.retune = row.column("retune").int64() != 0;
  batch.cancel_requested = row.column("cancel_requested").int64() != 0;
  batch.created_at = row.column("created_at").text();
  if (!row.column("minutes").is_null()) batch.minutes = row.column("minutes").real();
  if (!row.column("deadline_ms").is_null()) batch.deadline_ms = row.column("deadline_ms").int64();
  return batch;
}

void load_problems(Connection& db, BatchRecord& batch) {
  Statement query(db,
                  "SELECT position, family, shape_json, dtype, share, calls, plan, job_id, note,"
                  " error_code FROM batch_problems WHERE batch_id = ? ORDER BY position");
  query.bind(1, batch.id);
  while (query.step()) {
    BatchProblemRecord problem;
    problem.position = static_cast<int>(query.column(0).int64());
    problem.family = query.column(1).text();
    const std::string shape = query.column(2).text();
    try {
      problem.shape = int_map_from_json(nlohmann::json::parse(shape));
    } catch (const std::exception& e) {
      throw std::runtime_error("stored batch shape '" + shape.substr(0, 80) +
                               "' is unreadable: " + e.what());
    }
    problem.dtype = query.column(3).text();
    problem.share = query.column(4).real();
    problem.calls = query.column(5).int64();
    const std::string plan = query.column(6).text();
    const auto parsed = batch_plan_from_string(plan);
    if (!parsed) throw std::runtime_error("stored batch plan '" + plan.substr(0, 40) + "' unknown");
    problem.plan = *parsed;
    if (!query.column(7).is_null()) problem.job_id = query.column(7).int64();
    problem.note = query.column(8).text();
    problem.error_code = query.column(9).text();
    batch.problems.push_back(std::move(problem));
  }
}

}  // namespace

std::int64_t BatchStore::create_batch(const NewBatch& batch) {
  std::lock_guard lock(writer_.mutex());
  writer_.mutex().touches_no_answer();  // batches are read from the store each time
  return with_context("create_batch", [&] {
    Transaction transaction(writer_.db(), TransactionKind::write);
    std::int64_t id = 0;
    {
      Statement insert(writer_.db(),
                       "INSERT INTO batches (label, device, device_model, budget_per_shape,"
                       " search, retune, minutes, deadline_ms, created_at)"
                       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                       " CASE WHEN ?8 < 0 THEN NULL ELSE " +
                           now_ms_sql(writer_.db().dialect()) + " + ?8 END, " +
                           now_sql(writer_.db().dialect()) + ") RETURNING id");
      insert.bind(1, batch.label);
      insert.bind(2, batch.device);
      insert.bind(3, batch.device_model);
      insert.bind(4, batch.budget_per_shape);
      insert.bind(5, batch.search);
      insert.bind(6, static_cast<std::int64_t>(batch.retune ? 1 : 0));
      if (batch.minutes)
        insert.bind(7, *batch.minutes);
      else
        insert.bind_null(7);
      insert.bind(8, batch.minutes ? static_cast<std::int64_t>(*batch.minutes * 60000.0)
                                   : std::int64_t{-1});
      if (!insert.step()) throw std::runtime_error("insert returned no batch id");
      id = insert.column(0).int64();
      insert.step();
    }
    Statement insert(writer_.db(),
                     "INSERT INTO batch_problems (batch_id, position, family, shape_json, dtype,"
                     " share, calls, plan, job_id, note, error_code)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const BatchProblemRecord& problem : batch.problems) {
      insert.bind(1, id);
      insert.bind(2, static_cast<std::int64_t>(problem.position));
      insert.bind(3, problem.family);
      insert.bind(4, to_json(problem.shape).dump());
      insert.bind(5, problem.dtype);
      insert.bind(6, problem.share);
      insert.bind(7, problem.calls);
      insert.bind(8, std::string(to_string(problem.plan)));
      if (problem.job_id)
        insert.bind(9, *problem.job_id);
      else
        insert.bind_null(9);
      insert.bind(10, problem.note);
      insert.bind(11, problem.error_code);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
    return id;
  });
}

std::optional<BatchRecord> BatchStore::batch(std::int64_t id) {
  const auto reader = readers_.acquire();
  return with_context("batch " + std::to_string(id), [&]() -> std::optional<BatchRecord> {
    // One read transaction: the batch and its problems as of one moment.
    Transaction transaction(*reader, TransactionKind::snapshot);
    Statement query(*reader, std::string(kBatchSelect) + " WHERE id = ?");
    query.bind(1, id);
    if (!query.step()) return std::nullopt;
    BatchRecord batch = read_batch(query);
    load_problems(*reader, batch);
    return batch;
  });
}

BatchPage BatchStore::batch_page(int limit, std::int64_t before_id) {
  if (limit < 1) throw std::invalid_argument("a batch page needs a limit of at least 1");
  const auto reader = readers_.acquire();
  return with_context("a page of batches", [&] {
    Transaction transaction(*reader, TransactionKind::snapshot);
    BatchPage page;
    {
      Statement query(*reader,
                      std::string(kBatchSelect) + " WHERE id < ? ORDER BY id DESC LIMIT ?");
      query.bind(1, before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max());
      query.bind(2, static_cast<std::int64_t>(limit) + 1);
      while (query.step()) {
        if (static_cast<int>(page.batches.size()) == limit) {
          page.next_before_id = page.batches.back().id;
          break;
        }
        page.batches.push_back(read_batch(query));
      }
    }
    for (BatchRecord& batch : page.batches) load_problems(*reader, batch);
    return page;
  });
}

std::vector<BatchRecord> BatchStore::batches_past_deadline() {
  const auto reader = readers_.acquire();
  return with_context("batches past their deadline", [&] {
    Transaction transaction(*reader, TransactionKind::snapshot);
    std::vector<BatchRecord> due;
    {
      Statement query(*reader, std::string(kBatchSelect) +
                                   " WHERE cancel_requested = 0 AND deadline_ms IS NOT NULL AND"
                                   " deadline_ms <= " +
                                   now_ms_sql((*reader).dialect()) + " ORDER BY id");
      while (query.step()) due.push_back(read_batch(query));
    }
    for (BatchRecord& batch : due) load_problems(*reader, batch);
    return due;
  });
}

bool BatchStore::request_batch_cancel(std::int64_t id) {
  std::lock_guard lock(writer_.mutex());
  writer_.mutex().touches_no_answer();
  return with_context("cancel batch " + std::to_string(id), [&] {
    Statement update(writer_.db(), "UPDATE batches SET cancel_requested = 1 WHERE id = ?");
    update.bind(1, id);
    return update.exec() > 0;
  });
}

}  // namespace kt::db
