#include "db/store_writer.hpp"

#include <mutex>
#include <utility>

#include "db/model.hpp"

namespace kt::db {

StoreWriter::StoreWriter(std::unique_ptr<Connection> connection)
    : db_(std::move(connection)), shared_(db_->dialect() == Dialect::postgresql) {}

StoreWriter::~StoreWriter() = default;

void StoreWriter::touches_job(std::int64_t job_id) {
  db::Statement query(*db_, "SELECT mode FROM jobs WHERE id = ?");
  query.bind(1, job_id);
  mutex_.touches_job(job_id);
  // An unknown job: the write changes nothing (it will throw); a tune job's rows reach /v1/best.
  if (query.step() && query.column(0).text() == to_string(JobMode::tune)) mutex_.touches_fronts();
}

void StoreWriter::touches_job_of_variant(std::int64_t variant_id) {
  db::Statement query(*db_,
                      "SELECT v.job_id, j.mode FROM variants v JOIN jobs j ON j.id = v.job_id"
                      " WHERE v.id = ?");
  query.bind(1, variant_id);
  if (!query.step()) {
    mutex_.touches_no_answer();  // no such variant: the write changes nothing
    return;
  }
  mutex_.touches_job(query.column(0).int64());
  if (query.column(1).text() == to_string(JobMode::tune)) mutex_.touches_fronts();
}

void StoreWriter::note_outside_change() {
  std::lock_guard lock(mutex_);  // an unlock without touches_* counts as a write of any scope
}

void StoreWriter::observe(const StatementObserver& observer) {
  std::lock_guard lock(mutex_);
  observer_ = observer ? std::make_unique<StatementObserver>(observer) : nullptr;
  db_->observe(observer_.get());
}

}  // namespace kt::db
