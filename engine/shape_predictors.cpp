#include "engine/shape_predictors.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>

#include <spdlog/spdlog.h>

#include "tuner/search/launch_facts.hpp"
#include "tuner/search/replay.hpp"
#include "tuner/utc_time.hpp"

namespace kt {
namespace {

std::string config_id(const std::string& template_name, const Config& config) {
  return template_name + "|" + canonical_key(config);
}

// A finished tune job's measured variants as a recorded space (what `kerntune export` writes).
RecordedSpace space_of(const JobRecord& job, const std::vector<VariantRecord>& rows) {
  RecordedSpace space;
  space.family = job.family;
  space.shape = job.shape;
  space.dtype = job.dtype;
  space.device = {{"name", job.device_name}, {"arch", job.arch}};
  for (const VariantRecord& row : rows) {
    if (row.status != VariantStatus::measured || !row.timing || !(row.timing->median_us > 0))
      continue;
    RecordedVariant v;
    v.candidate.template_name = row.template_name;
    v.candidate.config = row.config;
    if (row.registers >= 0)
      v.candidate.facts = CompileFacts{row.registers, row.spill_bytes, row.smem_bytes, row.threads};
    v.status = "measured";
    v.median_us = row.timing->median_us;
    space.variants.push_back(std::move(v));
  }
  return space;
}

// The shape to score candidates of (its variants are not read).
RecordedSpace shape_to_score(const Shape& shape, const std::string& family,
                             const std::string& dtype) {
  RecordedSpace space;
  space.family = family;
  space.shape = shape;
  space.dtype = dtype;
  return space;
}

// The interval a predicted time comes with: (measured - predicted) log time of the top-ranked
// measured variants of shapes the model did not see, the shapes split into up to kIntervalFolds
// folds (each fold predicted by a model fitted on the others). An in-sample spread would be far too
// narrow for a new shape. One shape only: the in-sample spread, all there is.
constexpr std::size_t kIntervalFolds = 4;
// Of each held-out shape, the residuals of its top-ranked 5% (at least this many): the error of
// the configs a prediction answers with, not of the slow ones it ranks last.
constexpr std::size_t kIntervalTop = 8;

std::vector<double> out_of_fold_residuals(const Family& family,
                                          const std::vector<const RecordedSpace*>& spaces,
                                          const std::set<std::string>& shapes) {
  const std::vector<std::string> ordered(shapes.begin(), shapes.end());
  const std::size_t folds = std::min(kIntervalFolds, ordered.size());
  const auto fold_of = [&](const RecordedSpace& s) {
    const auto at = std::find(ordered.begin(), ordered.end(), canonical_key(s.shape));
    return static_cast<std::size_t>(at - ordered.begin()) % std::max<std::size_t>(folds, 1);
  };
  std::vector<double> residuals;
  for (std::size_t fold = 0; fold < std::max<std::size_t>(folds, 1); ++fold) {
    std::vector<const RecordedSpace*> train, held;
    for (const RecordedSpace* s : spaces)
      (folds > 1 && fold_of(*s) == fold ? held : train).push_back(s);
    if (folds <= 1) held = spaces;
    if (train.empty() || held.empty()) continue;
    const search::ShapePredictor model = search::ShapePredictor::fit(family, train);
    for (const RecordedSpace* s : held) {
      const std::vector<double> score = model.scores(*s);
      const double offset = search::ShapePredictor::roofline_offset(family, *s);
      // The configs the model would answer with: its top-ranked measured ones of the shape.
      std::vector<std::size_t> ranked;
      for (std::size_t i = 0; i < s->variants.size(); ++i)
        if (s->variants[i].median_us) ranked.push_back(i);
      std::stable_sort(ranked.begin(), ranked.end(),
                       [&](std::size_t a, std::size_t b) { return score[a] < score[b]; });
      const std::size_t top =
          std::min(ranked.size(), std::max<std::size_t>(kIntervalTop, ranked.size() / 20));
      for (std::size_t r = 0; r < top; ++r)
        residuals.push_back(std::log(*s->variants[ranked[r]].median_us) - offset -
                            score[ranked[r]]);
    }
  }
  return residuals;
}

}  // namespace

ShapePredictors::ShapePredictors(Store& store, const FamilyRegistry& families,
                                 std::vector<RecordedSpace> recorded,
                                 std::vector<DeviceLimits> limits)
    : store_(store),
      families_(families),
      recorded_(std::move(recorded)),
      limits_(std::move(limits)) {}

namespace {

// A family replaced by a new version (a registered one) has a new hash, so a new index; the old
// version stays alive in the registry for its readers.
std::string index_key(const Family& family, const std::string& dtype, const DeviceLimits& l) {
  return family.name + "|" + family.source_hash + "|" + dtype + "|" + l.arch + "|" +
         std::to_string(l.sm_count) + "|" + std::to_string(l.smem_optin) + "|" +
         std::to_string(l.max_threads) + "|" + std::to_string(l.max_cluster) + "|" +
         std::to_string(l.tmem_columns);
}

}  // namespace

std::shared_ptr<const SpaceIndex> ShapePredictors::index_for(const Family& family,
                                                             const std::string& dtype,
                                                             const DeviceLimits& limits,
                                                             const std::string& key) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = indexes_.find(key);
    if (it != indexes_.end()) return it->second;
  }
  auto index = std::make_shared<const SpaceIndex>(family, dtype, limits);
  std::lock_guard<std::mutex> lock(mutex_);
  return indexes_.emplace(key, std::move(index)).first->second;
}

ShapePredictors::~ShapePredictors() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void ShapePredictors::start(std::chrono::milliseconds poll, int nice) {
  refitter_ = std::make_unique<ThreadPool>(1, nice);
  refitter_->submit([this, poll] {
    try {
      refit_all();
    } catch (const std::exception& e) {
      spdlog::warn("shape predictors: first fit failed: {}", e.what());
    }
    watch(poll);
  });
}

std::int64_t ShapePredictors::newest_tune_job(const std::string& family) {
  JobFilter filter;
  filter.family = family;
  filter.status = JobStatus::done;
  // Only tune jobs are fitted on: a finished compile job (the predicted answers' own checks
  // among them) changes nothing, and refitting on each kept the refit thread busy while answers
  // were being served.
  filter.mode = JobMode::tune;
  filter.limit = 1;
  const JobPage page = store_.job_page(filter, 0);
  return page.jobs.empty() ? 0 : page.jobs.front().id;
}

void ShapePredictors::refit_all() {
  std::set<std::pair<std::string, std::string>> keys;
  for (const RecordedSpace& s : recorded_) keys.emplace(s.family, s.dtype);
  for (const Family* family : families_.all()) {
    const std::int64_t newest = newest_tune_job(family->name);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seen_job_[family->name] = newest;
    }
    if (newest == 0) continue;
    for (const std::string& dtype : family->dtypes) keys.emplace(family->name, dtype);
  }
  for (const auto& [family, dtype] : keys) {
    refit(family, dtype);
    const Family* f = families_.find(family);
    if (f && model(family, dtype))
      for (const DeviceLimits& l : limits_) index_for(*f, dtype, l, index_key(*f, dtype, l));
  }
}

void ShapePredictors::watch(std::chrono::milliseconds poll) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, poll, [this] { return stopping_; });
    if (stopping_) return;
    lock.unlock();
    try {
      for (const Family* family : families_.all()) {
        const std::int64_t newest = newest_tune_job(family->name);
        std::int64_t seen = 0;
        {
          std::lock_guard<std::mutex> guard(mutex_);
          seen = seen_job_[family->name];
          seen_job_[family->name] = newest;
        }
        if (newest == seen) continue;
        for (const std::string& dtype : family->dtypes) refit(family->name, dtype);
      }
    } catch (const std::exception& e) {
      spdlog::warn("shape predictors: refit skipped: {}", e.what());
    }
    lock.lock();
  }
}

void ShapePredictors::refit(const std::string& family_name, const std::string& dtype) {
  const Family* family = families_.find(family_name);
  if (!family) return;
  std::vector<RecordedSpace> spaces;
  for (const RecordedSpace& s : recorded_)
    if (s.family == family_name && s.dtype == dtype) spaces.push_back(s);
  JobFilter filter;
  filter.family = family_name;
  filter.status = JobStatus::done;
  filter.mode = JobMode::tune;
  filter.limit = -1;
  std::int64_t newest = 0;
  for (const JobRecord& job : store_.jobs(filter)) {
    if (job.dtype != dtype) continue;
    newest = std::max(newest, job.id);
    RecordedSpace space = space_of(job, store_.variants(job.id, true));
    if (!space.variants.empty()) spaces.push_back(std::move(space));
  }
  std::set<std::string> shapes;
  std::vector<const RecordedSpace*> fit_on;
  for (RecordedSpace& s : spaces) {
    if (!s.optimum_us()) continue;
    add_launch_facts(s, *family);
    shapes.insert(canonical_key(s.shape));
    fit_on.push_back(&s);
  }
  if (fit_on.empty()) return;
  try {
    auto fitted = std::make_shared<FittedPredictor>(
        FittedPredictor{.predictor = search::ShapePredictor::fit(*family, fit_on),
                        .variants = 0,
                        .shapes = shapes.size(),
                        .newest_job = newest,
                        .fitted_at = utc_now_text(),
                        .residual_low = 0,
                        .residual_high = 0,
                        .measured_configs = {}});
    for (const RecordedSpace* s : fit_on)
      for (const RecordedVariant& v : s->variants)
        if (v.median_us) {
          fitted->measured_configs.insert(config_id(v.candidate.template_name, v.candidate.config));
          ++fitted->variants;
        }
    const std::vector<double> residuals = out_of_fold_residuals(*family, fit_on, shapes);
    fitted->residual_low = quantile(residuals, 0.05);
    fitted->residual_high = quantile(residuals, 0.95);
    spdlog::info("shape predictor for {} {}: fitted on {} variants of {} shapes", family_name,
                 dtype, fitted->variants, fitted->shapes);
    std::lock_guard<std::mutex> lock(mutex_);
    models_[{family_name, dtype}] = std::move(fitted);
    ++fits_;
  } catch (const std::exception& e) {
    spdlog::warn("shape predictor for {} {}: not fitted: {}", family_name, dtype, e.what());
  }
}

std::shared_ptr<const FittedPredictor> ShapePredictors::model(const std::string& family,
                                                              const std::string& dtype) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = models_.find({family, dtype});
  return it == models_.end() ? nullptr : it->second;
}

void ShapePredictors::predict(const Family& family, const Shape& shape, const std::string& dtype,
                              std::vector<SearchCandidate>& candidates) const {
  const auto fitted = model(family.name, dtype);
  if (!fitted || candidates.empty()) return;
  const std::vector<double> score =
      fitted->predictor.scores(shape_to_score(shape, family.name, dtype), candidates);
  for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i].predicted = score[i];
}

bool ShapePredictors::measured_before(const FittedPredictor& model,
                                      const std::string& template_name, const Config& config) {
  return model.measured_configs.count(config_id(template_name, config)) > 0;
}

std::optional<PredictedConfig> ShapePredictors::best_config(const Family& family,
                                                            const Shape& shape,
                                                            const std::string& dtype,
                                                            const DeviceLimits& limits) const {
  const auto fitted = model(family.name, dtype);
  if (!fitted) return std::nullopt;
  const std::string key = index_key(family, dtype, limits);
  const std::string answer_key = key + "|" + canonical_key(shape);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = answers_.find(answer_key);
    if (it != answers_.end() && it->second.model == fitted) return it->second;
  }
  // The candidates by position (no Config built for thousands of them), the top one's after.
  const std::shared_ptr<const SpaceIndex> index = index_for(family, dtype, limits, key);
  const std::vector<SpaceIndex::Row> rows = index->feasible_rows(shape, true);
  if (rows.empty()) return std::nullopt;
  std::vector<search::ShapePredictor::CandidateValues> candidates(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    search::ShapePredictor::CandidateValues& c = candidates[i];
    c.template_name = &index->template_of(rows[i]).name;
    c.axes = &index->axes_of(rows[i]);
    c.values = index->row_values(rows[i]).data();
    if (rows[i].launch) {
      const GridFacts facts = grid_facts(*rows[i].launch, limits);
      c.grid_blocks = facts.blocks;
      c.blocks_per_sm = facts.blocks_per_sm;
    }
  }
  // Only the top one is wanted: the trees drop the candidates that cannot be it as they go.
  const auto [best, score] =
      fitted->predictor.lowest(shape_to_score(shape, family.name, dtype), candidates, &rankers_);
  const SpaceIndex::Entry top = index->entry(rows[best]);
  RecordedSpace one;
  one.family = family.name;
  one.shape = shape;
  one.dtype = dtype;
  const double offset = search::ShapePredictor::roofline_offset(family, one);
  const double log_us = score + offset;
  PredictedConfig out;
  out.template_name = top.tmpl->name;
  out.config = top.config;
  out.expected_us = std::exp(log_us);
  out.low_us = std::exp(log_us + fitted->residual_low);
  out.high_us = std::exp(log_us + fitted->residual_high);
  out.candidates = candidates.size();
  out.model = fitted;
  std::lock_guard<std::mutex> lock(mutex_);
  if (answers_.size() >= kRememberedAnswers) answers_.clear();
  answers_.insert_or_assign(answer_key, out);
  return out;
}

}  // namespace kt
