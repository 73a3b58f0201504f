#include "engine/problem_query.hpp"

#include <cstdint>
#include <vector>

#include "engine/job_target.hpp"

namespace kt {

std::string device_model_of(Store& store, const std::string& selector) {
  if (selector.empty()) return "";
  const std::vector<DeviceInfo> known = store.devices();
  if (const DeviceInfo* device = select_device(known, selector)) return device->name;
  return selector;
}

std::optional<JobRecord> unfinished_tune_job(Store& store, const ProblemQuery& problem) {
  for (std::int64_t id : store.unfinished_jobs()) {
    auto job = store.job(id);
    if (job && job->mode == JobMode::tune && job->family == problem.family->name &&
        job->dtype == problem.dtype && job->shape_key == problem.shape_key &&
        (problem.device_name.empty() || job->device_name == problem.device_name))
      return job;
  }
  return std::nullopt;
}

}  // namespace kt
