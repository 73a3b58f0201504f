// A job's variants: the plan (with its pruned groups), compile results, outcomes, pages of them
// and the job's progress (Store's variant methods; db/store.hpp documents them).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "db/model.hpp"

namespace kt {

// One page of a job's variants, in id order (keyset paging: never an OFFSET scan).
struct VariantPageQuery {
  std::vector<VariantStatus> statuses;  // empty = every status
  bool gated_only = false;              // leave out pruned and unsupported_arch
  std::int64_t after_id = 0;            // rows with a larger id; 0 = from the start
  int limit = 100;                      // rows per page, >= 1
};
struct VariantPage {
  std::vector<VariantRecord> variants;
  // The after_id of the next page; nullopt when this page is the last.
  std::optional<std::int64_t> next_after_id;
};

}  // namespace kt

namespace kt::db {

class LeaseStore;
class ReadPool;
class StoreWriter;

class VariantStore {
 public:
  // Writes for a variant are checked against its lease (leases.require_lease).
  VariantStore(StoreWriter& writer, ReadPool& readers, LeaseStore& leases)
      : writer_(writer), readers_(readers), leases_(leases) {}

  std::vector<VariantRecord> plan_variants(std::int64_t job_id,
                                           const std::vector<VariantRecord>& planned,
                                           const std::vector<PrunedGroup>& pruned);
  std::vector<PrunedGroup> pruned_groups(std::int64_t job_id);
  std::vector<VariantRecord> variants(std::int64_t job_id, bool gated_only);
  VariantPage variant_page(std::int64_t job_id, const VariantPageQuery& query);
  std::optional<VariantRecord> fastest_variant(std::int64_t job_id);
  std::optional<VariantRecord> variant(std::int64_t id);
  void record_compile(std::int64_t variant_id, const CompileResult& result, int threads,
                      int dynamic_smem_bytes);
  void record_loaded_resources(std::int64_t variant_id, int registers, int smem_bytes);
  void record_outcome(std::int64_t variant_id, const VariantOutcome& outcome);
  JobProgress progress(std::int64_t job_id);

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
  LeaseStore& leases_;
};

}  // namespace kt::db
