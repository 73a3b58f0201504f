// The seam between the runner and the searchers (tuner/search/): a searched job's variants come
// from a SearchFeed, one at a time, instead of from a plan fixed up front. Each batch is planned
// (stored as pending rows) only when the searcher proposes it, so the store always holds what
// was handed out; a resumed job rebuilds the searcher's history from the store and continues
// without repeating a finished variant (the pending ones it had handed out come first).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/search/searcher.hpp"

namespace kt {

class ShapePredictors;

// True when the job's variants come from a searcher rather than from its plan (a pipelined
// tuning job over the family's space whose search is not the plan's own order or sample).
bool uses_searcher(const JobRecord& job);

// Batches of this many when the job runs on `gpus` GPUs: enough to keep them and the compile
// pool busy, few enough that the searcher learns between batches.
std::size_t search_batch_size(std::size_t gpus);

// Why a search stopped handing out variants.
enum class SearchStop { none, budget, seconds, patience, exhausted };
std::string_view to_string(SearchStop stop);

// "No improvement above the noise in `patience` batches": the best-so-far curve (one entry per
// measured variant, in measurement order) has not dropped below (1 - noise) x its value at the
// last real improvement for patience x batch measured variants.
bool patience_exhausted(const std::vector<ConvergencePoint>& curve, int patience, std::size_t batch,
                        double noise);

class SearchFeed {
 public:
  // candidates: every variant of the job's space that can reach the compiler (not yet rows).
  // family and limits: what the searcher is told of each candidate's grid and of the shape
  // (tuner/search/launch_facts.hpp); no family: nothing, no grid preference.
  // predictors: the predicted searcher's rankings (null, or no model for the family and dtype:
  // it runs as the local searcher, warm-started like it).
  SearchFeed(Store& store, const JobRecord& job, std::vector<VariantRecord> candidates,
             std::size_t batch, const Family* family = nullptr,
             const DeviceLimits& limits = DeviceLimits{},
             const ShapePredictors* predictors = nullptr);

  // The next variant to compile (a stored pending row), or nullopt once the search stopped.
  // wall_seconds: the job's wall time so far, every run of it together.
  std::optional<VariantRecord> next(double wall_seconds);

  SearchStop stopped() const { return stop_; }
  // Every row this feed handed out or found pending (what a cancel marks cancelled).
  const std::vector<VariantRecord>& handed_out() const { return handed_out_; }

  // The candidates a warm start (the job's warm_start_json) put first: of each tuned shape, its
  // first kSeedsPerShape seeds that survived this shape's constraints, in the order they are
  // measured. Empty: not warm-started.
  const std::vector<std::size_t>& seeds() const { return seeds_; }
  // What the searcher is told of the shape and device.
  const SearchProblem& problem() const { return problem_; }

  static constexpr double kNoise = 0.01;  // an improvement under 1% is timing noise

 private:
  void seed(const JobRecord& job);
  void refill(double wall_seconds);

  Store& store_;
  const JobRecord job_;
  std::vector<VariantRecord> rows_;  // candidate i's row template (id 0 until planned)
  std::vector<SearchCandidate> candidates_;
  SearchProblem problem_;
  std::unique_ptr<Searcher> searcher_;
  std::size_t batch_;
  std::vector<VariantRecord> queue_;
  std::size_t queue_next_ = 0;
  std::vector<VariantRecord> handed_out_;
  SearchStop stop_ = SearchStop::none;
  bool resumed_ = false;
  std::vector<std::size_t> seeds_;
};

}  // namespace kt
