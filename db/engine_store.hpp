// The engine's bookkeeping: how many GPUs a job used, its wall and GPU-busy time, which GPU
// measured each variant and for how long, and the NVRTC times behind the job's stats (Store's
// methods for them; db/store.hpp documents them).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace kt::db {

class LeaseStore;
class ReadPool;
class StoreWriter;

class EngineStore {
 public:
  // A variant's worker time is written by its lease holder only (leases.require_lease).
  EngineStore(StoreWriter& writer, ReadPool& readers, LeaseStore& leases)
      : writer_(writer), readers_(readers), leases_(leases) {}

  void set_job_gpus(std::int64_t job_id, int gpus);
  void set_job_timing(std::int64_t job_id, std::optional<double> wall_seconds,
                      std::optional<double> gpu_busy_seconds);
  void record_worker_time(std::int64_t variant_id, int gpu_ordinal, double measure_ms);
  std::vector<double> compile_times_ms(std::int64_t job_id);

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
  LeaseStore& leases_;
};

}  // namespace kt::db
