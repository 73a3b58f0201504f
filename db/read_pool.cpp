#include "db/read_pool.hpp"

#include <stdexcept>

namespace kt::db {

ReadPool::ReadPool(const std::string& location, int connections,
                   std::shared_ptr<StoreHealth> health) {
  if (connections < 1) throw std::invalid_argument("a read pool needs at least one connection");
  for (int i = 0; i < connections; ++i) {
    auto db = open_connection(location, Access::read, health);
    idle_.push_back(db.get());
    connections_.push_back(std::move(db));
  }
}

ReadPool::~ReadPool() = default;

ReadPool::Lease::Lease(Lease&& other) noexcept : pool_(other.pool_), db_(other.db_) {
  other.pool_ = nullptr;
  other.db_ = nullptr;
}

ReadPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->give_back(db_);
}

ReadPool::Lease ReadPool::acquire() {
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [&] { return !idle_.empty(); });
  Connection* db = idle_.back();
  idle_.pop_back();
  return Lease(this, db);
}

void ReadPool::give_back(Connection* db) {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(db);
  }
  returned_.notify_one();
}

void ReadPool::observe(StatementObserver observer) {
  // Every connection idle while the hook changes: none is mid-statement.
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [&] { return idle_.size() == connections_.size(); });
  observer_ = observer ? std::make_unique<StatementObserver>(std::move(observer)) : nullptr;
  for (const auto& db : connections_) db->observe(observer_.get());
}

}  // namespace kt::db
