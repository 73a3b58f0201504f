// Internal to engine/: the job's queue on the GPU pool, for as long as the job runs. On every way
// out the job's queued GPU tasks are dropped and the running ones awaited, since they refer to the
// job's execution.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/gpu_pool.hpp"

namespace kt {

class GpuJobScope {
 public:
  GpuJobScope(GpuPool& pool, std::int64_t job_id, std::vector<int> ordinals)
      : pool_(pool), job_id_(job_id) {
    pool_.open(job_id_, std::move(ordinals));
  }
  ~GpuJobScope() {
    pool_.drop_queued(job_id_);
    pool_.wait_below(job_id_, 1);
    pool_.close(job_id_);
  }
  GpuJobScope(const GpuJobScope&) = delete;
  GpuJobScope& operator=(const GpuJobScope&) = delete;

 private:
  GpuPool& pool_;
  std::int64_t job_id_;
};

}  // namespace kt
