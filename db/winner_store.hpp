// A job's result: the family's baseline as timed on each of its GPUs, and the final comparison
// of its top candidates beside the baseline (Store's methods for them; db/store.hpp documents
// them).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "db/model.hpp"
#include "tuner/interleaved_protocol.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt::db {

class StoreWriter;

class WinnerStore {
 public:
  explicit WinnerStore(StoreWriter& writer) : writer_(writer) {}

  void record_job_baseline(std::int64_t id, int gpu_ordinal, const BaselineTiming& baseline);
  void record_job_baseline_failure(std::int64_t id, int gpu_ordinal, const std::string& reason,
                                   const nlohmann::json& baseline);
  void record_winner_comparison(std::int64_t job_id, const InterleavedResult& comparison);

 private:
  StoreWriter& writer_;
};

}  // namespace kt::db
