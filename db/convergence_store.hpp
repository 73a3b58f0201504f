// The best-so-far of a job after every measured variant (table job_convergence), written in the
// transaction that records the measurement, so a crash never loses or repeats a point.
#pragma once

#include <cstdint>
#include <vector>

#include "db/connection.hpp"
#include "db/model.hpp"

namespace kt::db {

class ReadPool;

// Appends the job's next point unless the variant already has one (a re-recorded outcome).
void append_convergence(db::Connection& db, std::int64_t job_id, std::int64_t variant_id,
                        double median_us);

// Store::convergence.
class ConvergenceStore {
 public:
  explicit ConvergenceStore(ReadPool& readers) : readers_(readers) {}

  std::vector<ConvergencePoint> convergence(std::int64_t job_id);

 private:
  ReadPool& readers_;
};

}  // namespace kt::db
