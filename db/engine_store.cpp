// kt::db::EngineStore: the engine's bookkeeping — how many GPUs a job used, its wall and GPU-busy
// time, which GPU measured each variant and for how long, and the NVRTC times behind the job's
// stats.
#include "db/engine_store.hpp"

#include <mutex>

#include "db/connection.hpp"
#include "db/lease_store.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {

void EngineStore::set_job_gpus(std::int64_t job_id, int gpus) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("set_job_gpus " + std::to_string(job_id), [&] {
    writer_.touches_job(job_id);
    db::Statement update(writer_.db(), "UPDATE jobs SET gpus = ? WHERE id = ?");
    update.bind(1, gpus);
    update.bind(2, job_id);
    if (update.exec() == 0)
      throw std::invalid_argument("job " + std::to_string(job_id) + " does not exist");
  });
}

void EngineStore::set_job_timing(std::int64_t job_id, std::optional<double> wall_seconds,
                                 std::optional<double> gpu_busy_seconds) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("set_job_timing " + std::to_string(job_id), [&] {
    writer_.touches_job(job_id);
    db::Statement update(writer_.db(),
                         "UPDATE jobs SET wall_seconds = ?, gpu_busy_seconds = ? WHERE id = ?");
    if (wall_seconds) update.bind(1, *wall_seconds);  // unbound: NULL
    if (gpu_busy_seconds) update.bind(2, *gpu_busy_seconds);
    update.bind(3, job_id);
    if (update.exec() == 0)
      throw std::invalid_argument("job " + std::to_string(job_id) + " does not exist");
  });
}

void EngineStore::record_worker_time(std::int64_t variant_id, int gpu_ordinal, double measure_ms) {
  std::lock_guard lock(writer_.mutex());
  db::with_context("record_worker_time for variant " + std::to_string(variant_id), [&] {
    writer_.touches_job_of_variant(variant_id);
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    leases_.require_lease(variant_id);
    db::Statement update(writer_.db(),
                         "UPDATE variants SET gpu_ordinal = ?, measure_ms = ? WHERE id = ?");
    update.bind(1, gpu_ordinal);
    update.bind(2, measure_ms);
    update.bind(3, variant_id);
    if (update.exec() == 0)
      throw std::invalid_argument("variant " + std::to_string(variant_id) + " does not exist");
    transaction.commit();
  });
}

std::vector<double> EngineStore::compile_times_ms(std::int64_t job_id) {
  const auto reader = readers_.acquire();
  return db::with_context("compile_times_ms of job " + std::to_string(job_id), [&] {
    // A cache hit stores compile_ms 0: that variant cost this job no NVRTC time.
    db::Statement query(
        *reader, "SELECT compile_ms FROM variants WHERE job_id = ? AND compile_ms > 0 ORDER BY id");
    query.bind(1, job_id);
    std::vector<double> out;
    while (query.step()) out.push_back(query.column(0).real());
    return out;
  });
}

}  // namespace kt::db
