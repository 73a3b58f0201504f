// The Pareto fronts per problem (device model, family, dtype, shape): keeping the stored front up
// to date as outcomes are recorded, and reading fronts, tuned problems and /v1/best from them
// (Store's front methods; db/store.hpp documents them).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/connection.hpp"
#include "db/model.hpp"

namespace kt::db {

class ReadPool;
class StoreWriter;

// The front's resource objective: bytes of on-chip state one block holds, shared memory plus the
// register file it occupies (4 bytes per register per thread). Unknown (-1) parts count as 0.
double footprint_bytes(const VariantRecord& variant);

// Replaces the stored front of the job's problem with pareto_front(old front + variant's point).
// The variant must carry timing and error. The caller holds the writer, in a write transaction.
void add_to_front(db::Connection& db, const JobRecord& job, const VariantRecord& variant);

// Drops the variant's point from every front (before it is re-recorded). As add_to_front.
void remove_from_front(db::Connection& db, std::int64_t variant_id);

class ParetoStore {
 public:
  // The writer's fronts stamp says when a kept best() answer is stale.
  ParetoStore(StoreWriter& writer, ReadPool& readers) : writer_(writer), readers_(readers) {}

  std::vector<VariantRecord> pareto(const std::string& family, const std::string& dtype,
                                    const std::string& shape_key, const std::string& device_name);
  std::vector<TunedProblem> tuned_problems(const std::string& family,
                                           const std::string& device_name, int limit);
  std::vector<std::string> tuned_shape_keys(const std::string& family, const std::string& dtype,
                                            const std::string& device_name, int limit);
  std::vector<VariantRecord> fastest_variants(std::int64_t job_id, int limit);
  std::optional<BestEntry> best(const std::string& family, const std::string& dtype,
                                const std::string& shape_key, const std::string& device_name);
  std::optional<JobRecord> newest_baseline_job(const std::string& family, const std::string& dtype,
                                               const std::string& shape_key,
                                               const std::string& device_name);

 private:
  std::optional<BestEntry> query_best(const std::string& family, const std::string& dtype,
                                      const std::string& shape_key, const std::string& device_name);

  StoreWriter& writer_;
  ReadPool& readers_;
  struct CachedBest {
    std::uint64_t writes;  // the fronts stamp before it was read
    std::optional<BestEntry> entry;
  };
  std::mutex best_cache_mutex_;
  std::unordered_map<std::string, CachedBest> best_cache_;
};

}  // namespace kt::db
