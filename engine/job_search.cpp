#include "engine/job_search.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "engine/shape_predictors.hpp"
#include "engine/warm_start.hpp"
#include "tuner/search/launch_facts.hpp"
#include "tuner/search/warm_start.hpp"

namespace kt {

bool uses_searcher(const JobRecord& job) {
  if (job.mode != JobMode::tune || job.pipeline != Pipeline::pipelined ||
      !job.pinned_configs_json.empty() || job.search.empty())
    return false;
  const bool stop_rules = job.search_seconds > 0 || job.search_patience > 0;
  if (stop_rules) return true;
  if (job.search == "random") return false;                         // the plan's own seeded sample
  if (job.search == "exhaustive" && job.budget == 0) return false;  // the plan, in order
  return true;
}

std::size_t search_batch_size(std::size_t gpus) {
  return std::max<std::size_t>(8, 4 * gpus);
}

std::string_view to_string(SearchStop stop) {
  switch (stop) {
    case SearchStop::none:
      return "running";
    case SearchStop::budget:
      return "budget reached";
    case SearchStop::seconds:
      return "time limit reached";
    case SearchStop::patience:
      return "no improvement above the noise";
    case SearchStop::exhausted:
      return "space exhausted";
  }
  return "?";
}

bool patience_exhausted(const std::vector<ConvergencePoint>& curve, int patience, std::size_t batch,
                        double noise) {
  if (patience <= 0 || curve.empty()) return false;
  std::int64_t anchor_at = curve.front().measured;
  double anchor = curve.front().best_us;
  for (const ConvergencePoint& p : curve)
    if (p.best_us < anchor * (1.0 - noise)) {
      anchor = p.best_us;
      anchor_at = p.measured;
    }
  return curve.back().measured - anchor_at >=
         static_cast<std::int64_t>(patience) * static_cast<std::int64_t>(batch);
}

namespace {

std::string row_key(const std::string& template_name, const std::string& config_key) {
  return template_name + "|" + config_key;
}

}  // namespace

SearchFeed::SearchFeed(Store& store, const JobRecord& job, std::vector<VariantRecord> candidates,
                       std::size_t batch, const Family* family, const DeviceLimits& limits,
                       const ShapePredictors* predictors)
    : store_(store),
      job_(job),
      rows_(std::move(candidates)),
      // Seeded by the job id: a resumed job's searcher makes the same choices (the daemon's seed
      // changes from run to run).
      searcher_(make_searcher(job.search, static_cast<std::uint64_t>(job.id))),
      batch_(batch) {
  if (!searcher_) throw std::runtime_error("unknown search '" + job.search + "'");
  for (const VariantRecord& row : rows_) {
    SearchCandidate& candidate = candidates_.emplace_back();
    candidate.template_name = row.template_name;
    candidate.config = row.config;
  }
  if (family) {
    add_grid_facts(candidates_, *family, job.shape, job.dtype, limits);
    problem_ = search_problem(*family, job.shape, job.dtype, limits);
    if (prefers_one_wave(problem_) && learns_from_measurements(job.search)) {
      std::size_t one_wave = 0;
      for (const SearchCandidate& c : candidates_) one_wave += fills_one_wave(c, problem_) ? 1 : 0;
      spdlog::info(
          "job {}: memory-bound shape: {} of {} candidates fill one wave of {} SMs; the "
          "searcher tries them first",
          job.id, one_wave, candidates_.size(), problem_.sm_count);
    } else if (problem_.memory_bound && learns_from_measurements(job.search)) {
      spdlog::info(
          "job {}: memory-bound shape of {:.0f} MB: its grids run many waves, no one-wave "
          "preference",
          job.id, problem_.operand_bytes / 1e6);
    }
  }
  bool predicted = false;
  if (job.search == "predicted") {
    if (predictors && family) predictors->predict(*family, job.shape, job.dtype, candidates_);
    predicted = !candidates_.empty() && candidates_.front().predicted.has_value();
    if (predicted) {
      const auto model = predictors->model(family->name, job.dtype);
      spdlog::info(
          "job {}: predicted search: {} candidates ranked by the shape predictor ({} "
          "variants of {} shapes, fitted {})",
          job.id, candidates_.size(), model->variants, model->shapes, model->fitted_at);
    } else {
      spdlog::info(
          "job {}: predicted search: no shape predictor for {} {} yet (nothing measured); "
          "it runs as the local searcher",
          job.id, job.family, job.dtype);
    }
  }
  const bool takes_seeds =
      learns_from_measurements(job.search) || (job.search == "predicted" && !predicted);
  if (!job.warm_start_json.empty() && takes_seeds) seed(job);
}

void SearchFeed::seed(const JobRecord& job) {
  WarmStart warm;
  try {
    warm = warm_start_from_text(job.warm_start_json);
  } catch (const std::runtime_error& e) {
    spdlog::warn("job {}: warm start ignored: {}", job.id, e.what());
    return;
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows_.size(); ++i)
    index.emplace(row_key(rows_[i].template_name, canonical_key(rows_[i].config)), i);
  // A seed this shape's constraints pruned (or another arch's template) is not a candidate here;
  // of each tuned shape, the first kSeedsPerShape that are.
  std::map<std::string, std::size_t> per_shape;
  for (const WarmStartSeed& seed : warm.seeds) {
    const auto found = index.find(row_key(seed.template_name, canonical_key(seed.config)));
    if (found == index.end() || per_shape[seed.shape_key] >= kSeedsPerShape) continue;
    if (std::find(seeds_.begin(), seeds_.end(), found->second) != seeds_.end()) continue;
    seeds_.push_back(found->second);
    ++per_shape[seed.shape_key];
  }
  if (seeds_.empty()) return;
  searcher_ = seeded_first(std::move(searcher_), seeds_);
}

std::optional<VariantRecord> SearchFeed::next(double wall_seconds) {
  if (queue_next_ >= queue_.size() && stop_ == SearchStop::none) refill(wall_seconds);
  if (queue_next_ >= queue_.size()) return std::nullopt;
  return queue_[queue_next_++];
}

void SearchFeed::refill(double wall_seconds) {
  queue_.clear();
  queue_next_ = 0;
  // What happened so far, from the store (the one truth, also after a crash).
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows_.size(); ++i)
    index.emplace(row_key(rows_[i].template_name, rows_[i].config_key), i);
  std::vector<bool> taken(rows_.size(), false);
  std::vector<SearchObservation> observations;
  std::size_t handed = 0;
  for (const VariantRecord& row : store_.variants(job_.id)) {
    const auto found = index.find(row_key(row.template_name, row.config_key));
    if (found == index.end()) continue;  // unsupported arch, or no longer in the space
    const std::size_t i = found->second;
    taken[i] = true;
    ++handed;
    if (row.registers >= 0)
      candidates_[i].facts =
          CompileFacts{row.registers, row.spill_bytes, row.smem_bytes, row.threads};
    if (row.status == VariantStatus::pending) {
      if (!resumed_) queue_.push_back(row);  // handed out before a restart, never finished
      continue;
    }
    if (row.status == VariantStatus::cancelled) continue;
    std::optional<double> time;
    if (row.status == VariantStatus::measured && row.timing) time = row.timing->median_us;
    observations.push_back({i, time});
  }
  if (!resumed_) {
    resumed_ = true;
    handed_out_.insert(handed_out_.end(), queue_.begin(), queue_.end());
    if (!queue_.empty()) {
      spdlog::info("job {}: {} search resumes: {} variants finished, {} handed out again", job_.id,
                   job_.search, observations.size(), queue_.size());
      return;
    }
  }

  std::size_t count = batch_;
  if (job_.budget > 0) {
    const auto budget = static_cast<std::size_t>(job_.budget);
    if (handed >= budget) {
      stop_ = SearchStop::budget;
      return;
    }
    count = std::min(count, budget - handed);
  }
  if (job_.search_seconds > 0 && wall_seconds >= job_.search_seconds) {
    stop_ = SearchStop::seconds;
    return;
  }
  if (patience_exhausted(store_.convergence(job_.id), job_.search_patience, batch_, kNoise)) {
    stop_ = SearchStop::patience;
    return;
  }
  const std::vector<std::size_t> proposed =
      searcher_->propose({candidates_, observations, taken, problem_}, count);
  if (proposed.empty()) {
    stop_ = SearchStop::exhausted;
    return;
  }
  std::vector<VariantRecord> planned;
  for (std::size_t i : proposed) planned.push_back(rows_.at(i));
  std::map<std::string, VariantRecord> stored;
  for (VariantRecord& row : store_.plan_variants(job_.id, planned))
    stored.emplace(row_key(row.template_name, row.config_key), std::move(row));
  for (const VariantRecord& p : planned) {
    const auto row = stored.find(row_key(p.template_name, p.config_key));
    if (row == stored.end() || row->second.status != VariantStatus::pending) continue;
    queue_.push_back(row->second);
    handed_out_.push_back(row->second);
  }
  if (queue_.empty()) stop_ = SearchStop::exhausted;  // cannot happen unless the store disagrees
}

}  // namespace kt
