// Jobs: creating them, reading them (one, a filtered list, a page), and their status, reference
// and cancel flag (Store's job methods; db/store.hpp documents them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/model.hpp"

namespace kt {

// One page of jobs, newest first (keyset on the id, like VariantPage).
struct JobPage {
  std::vector<JobRecord> jobs;
  std::optional<std::int64_t> next_before_id;  // nullopt when this page is the last
};

}  // namespace kt

namespace kt::db {

class ReadPool;
class StoreWriter;

class JobStore {
 public:
  JobStore(StoreWriter& writer, ReadPool& readers) : writer_(writer), readers_(readers) {}

  std::int64_t create_job(const NewJob& job);
  std::optional<JobRecord> job(std::int64_t id);
  std::vector<JobRecord> jobs(const JobFilter& filter);
  JobPage job_page(const JobFilter& filter, std::int64_t before_id);
  std::vector<std::int64_t> unfinished_jobs();
  // Returns how many pending variants a cancel closed (0 for other states).
  std::int64_t set_job_status(std::int64_t id, JobStatus status, const std::string& reason);
  void set_job_reference(std::int64_t id, double reference_us);
  bool request_cancel(std::int64_t id);

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
};

}  // namespace kt::db
