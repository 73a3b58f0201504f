#include "engine/job_runner.hpp"

#include <exception>
#include <string>

#include <spdlog/spdlog.h>

#include "engine/job_execution.hpp"

namespace kt {
namespace {

void fail(Store& store, std::int64_t job_id, const std::string& reason) {
  spdlog::warn("job {}: failed: {}", job_id, reason);
  store.set_job_status(job_id, JobStatus::failed, reason);
}

}  // namespace

void run_job(std::int64_t job_id, JobRunContext& ctx) {
  try {
    auto job = ctx.store.job(job_id);
    if (!job || job->status == JobStatus::done || job->status == JobStatus::failed ||
        job->status == JobStatus::cancelled)
      return;
    if (job->cancel_requested) {
      const std::int64_t closed =
          ctx.store.set_job_status(job_id, JobStatus::cancelled, "cancelled by request");
      if (ctx.metrics) ctx.metrics->variant_ended(VariantStatus::cancelled, closed);
      return;
    }
    const Family* family = ctx.families.find(job->family);
    if (family == nullptr)
      return fail(ctx.store, job_id, "family '" + job->family + "' is not loaded");
    JobExecution(*job, *family, ctx.target.limits, ctx).run();
  } catch (const std::exception& e) {
    // A shutdown drops the job's GPU work mid-way; the job stays "running" and resumes.
    if (ctx.stopping && ctx.stopping()) {
      spdlog::info("job {}: interrupted by shutdown ({}); it resumes when the daemon restarts",
                   job_id, e.what());
      return;
    }
    fail(ctx.store, job_id, e.what());
  }
}

}  // namespace kt
