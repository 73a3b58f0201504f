// The daemon's shape predictors (tuner/search/shape_predictor.hpp), one per (family, dtype),
// fitted on every variant the store measured in finished tune jobs of that family and dtype (every
// GPU model: the model has no device features, and the replay table measures it that way) and on
// the recorded spaces kerntuned was given (--predictor-spaces). A background thread refits a
// family's model within seconds of a new job of it finishing; readers get the model of the moment
// (a shared, immutable snapshot) and never wait for a fit.
//
// They give the predicted searcher its ranking (engine/job_search.cpp) and answer GET
// /v1/best?predict=1 for a shape nobody tuned (predicted_answer below).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/store.hpp"
#include "tuner/thread_pool.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/search/recorded_space.hpp"
#include "tuner/search/shape_predictor.hpp"
#include "tuner/space_index.hpp"

namespace kt {

struct FittedPredictor {
  search::ShapePredictor predictor;
  std::size_t variants = 0;     // measured variants it was fitted on
  std::size_t shapes = 0;       // distinct shapes among them
  std::int64_t newest_job = 0;  // the newest finished job it saw (0: recorded spaces only)
  std::string fitted_at;        // ISO 8601 UTC
  // The 5% and 95% quantiles of (measured - predicted) log time on shapes left out of the fit
  // (up to 4 folds of the shapes): the interval given with a predicted time.
  double residual_low = 0, residual_high = 0;
  // Every (template, config) it saw measured, "template|config_key": a config measured (so
  // checked against the reference) on some shape of the family.
  std::set<std::string> measured_configs;
};

// The predictor's pick for a shape.
struct PredictedConfig {
  std::string template_name;
  Config config;
  double expected_us = 0, low_us = 0, high_us = 0;
  std::size_t candidates = 0;  // feasible configs it ranked
  std::shared_ptr<const FittedPredictor> model;
};

class ShapePredictors {
 public:
  // recorded: spaces to fit on besides the store (families that are not loaded are ignored).
  // limits: the devices predicted answers are asked for (this daemon's GPUs, a Hopper part on a
  // daemon without one): their feasible-config indexes are built in the background with the
  // models, so an answer does not enumerate the space.
  ShapePredictors(Store& store, const FamilyRegistry& families,
                  std::vector<RecordedSpace> recorded = {}, std::vector<DeviceLimits> limits = {});
  ~ShapePredictors();
  ShapePredictors(const ShapePredictors&) = delete;
  ShapePredictors& operator=(const ShapePredictors&) = delete;

  // Fits every (family, dtype) that has data, then keeps them fresh from a background thread that
  // looks for newly finished jobs every `poll`, at the compile threads' priority (`nice`,
  // thread_pool.hpp: kIdleNice is SCHED_IDLE).
  void start(std::chrono::milliseconds poll = std::chrono::seconds(5), int nice = kIdleNice);
  // Fits (or refits) every (family, dtype) with data now, on the calling thread.
  void refit_all();

  // How many fits have completed since construction (every family and dtype).
  std::size_t fits() const { return fits_.load(); }

  // nullptr while nothing of the family and dtype was measured.
  std::shared_ptr<const FittedPredictor> model(const std::string& family,
                                               const std::string& dtype) const;

  // Each candidate's predicted score (unset without a model); candidates carry their grid facts
  // (add_grid_facts) already.
  void predict(const Family& family, const Shape& shape, const std::string& dtype,
               std::vector<SearchCandidate>& candidates) const;

  // True when `model` was fitted on a measured variant of this (template, config), on any shape.
  static bool measured_before(const FittedPredictor& model, const std::string& template_name,
                              const Config& config);

  // The top-ranked feasible config of `family` for the shape on a device with `limits`, nullopt
  // without a model or a feasible config.
  std::optional<PredictedConfig> best_config(const Family& family, const Shape& shape,
                                             const std::string& dtype,
                                             const DeviceLimits& limits) const;

 private:
  void refit(const std::string& family, const std::string& dtype);
  void watch(std::chrono::milliseconds poll);
  std::int64_t newest_tune_job(const std::string& family);
  // The index of (family, dtype, limits), built on first use (start() builds those of `limits_`);
  // `key` is index_key's for them, which the caller may have built already.
  std::shared_ptr<const SpaceIndex> index_for(const Family& family, const std::string& dtype,
                                              const DeviceLimits& limits,
                                              const std::string& key) const;

  Store& store_;
  const FamilyRegistry& families_;
  std::vector<RecordedSpace> recorded_;
  std::vector<DeviceLimits> limits_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const SpaceIndex>> indexes_;
  // best_config's answers by (index, shape), each kept while the model it came from is current,
  // so a shape asked again (its check still open, say) is not ranked again. Bounded: emptied when
  // full.
  static constexpr std::size_t kRememberedAnswers = 4096;
  mutable std::map<std::string, PredictedConfig> answers_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const FittedPredictor>> models_;
  std::map<std::string, std::int64_t>
      seen_job_;  // per family: the newest finished tune job fitted on
  std::atomic<std::size_t> fits_{0};
  std::condition_variable wake_;
  bool stopping_ = false;
  // best_config's helpers: an answer ranking hundreds of candidates splits them with these, at
  // the daemon's own priority (answers that overlap share them; each caller walks a run itself).
  // Kept rather than started per answer: a thread start is latency the answer need not pay.
  static constexpr unsigned kRankingHelpers = 3;
  mutable ThreadPool rankers_{kRankingHelpers};
  // The refit thread, at the compile threads' priority (SCHED_IDLE by default): a fit takes only
  // CPU time that serving and measuring do not want. Declared last: joined before the rest goes.
  std::unique_ptr<ThreadPool> refitter_;
};

}  // namespace kt
