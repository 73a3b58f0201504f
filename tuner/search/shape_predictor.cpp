#include "tuner/search/shape_predictor.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>

#include "tuner/config.hpp"
#include "tuner/expression.hpp"
#include "tuner/search/replay.hpp"
#include "tuner/shape_distance.hpp"
#include "tuner/thread_pool.hpp"
#include "tuner/variant_space.hpp"

namespace kt::search {
namespace {

constexpr double kPeakFlops = 1e15;  // per second: a round Hopper-class roofline, shape scale only
constexpr double kPeakBytes = 3e12;
constexpr double kMissing = -1.0;  // an axis the template does not have, a report not known

double log2p(double v) {
  return std::log2(1.0 + std::max(0.0, v));
}

// log2p of an axis value or grid size: small ones from a table (the same values, computed once),
// since every candidate of every answer takes a dozen.
double log2p(std::int64_t v) {
  constexpr std::int64_t kTable = 4096;
  static const std::vector<double> table = [] {
    std::vector<double> t(kTable);
    for (std::int64_t i = 0; i < kTable; ++i) t[i] = log2p(static_cast<double>(i));
    return t;
  }();
  return v >= 0 && v < kTable ? table[v] : log2p(static_cast<double>(v));
}

// The family's flops and bytes formulas for the shape (0 where one does not evaluate).
std::pair<double, double> work_of(const std::string& flops, const std::string& bytes,
                                  const RecordedSpace& space) {
  try {
    const Bindings bindings = make_bindings(space.shape, Config{}, space.dtype, DeviceLimits{});
    return {shared_expression(flops).evaluate(bindings),
            shared_expression(bytes).evaluate(bindings)};
  } catch (const ExpressionError&) {
    return {0, 0};
  }
}

double roofline_log(const std::pair<double, double>& work) {
  const double seconds = std::max(work.first / kPeakFlops, work.second / kPeakBytes);
  return seconds > 0 ? std::log(seconds * 1e6) : 0.0;
}

// The nearest other shape's (same family, dtype and GPU model) fastest config that `held` measured
// too, as a gap to held's optimum: the answer /v1/best?nearest=1 gave for an untuned shape.
std::optional<double> nearest_answer_gap(const RecordedSpace& held,
                                         const std::vector<RecordedSpace>& spaces) {
  const auto model = [](const RecordedSpace& s) { return s.device.value("name", std::string()); };
  const RecordedSpace* nearest = nullptr;
  double nearest_distance = 0;
  for (const RecordedSpace& s : spaces) {
    if (s.family != held.family || s.dtype != held.dtype || model(s) != model(held) ||
        s.shape == held.shape || !s.optimum_us())
      continue;
    const auto d = shape_distance(held.shape, s.shape);
    if (d && (!nearest || *d < nearest_distance)) {
      nearest = &s;
      nearest_distance = *d;
    }
  }
  if (!nearest) return std::nullopt;
  std::vector<const RecordedVariant*> fastest;
  for (const RecordedVariant& v : nearest->variants)
    if (v.median_us) fastest.push_back(&v);
  std::stable_sort(fastest.begin(), fastest.end(),
                   [](const auto* a, const auto* b) { return *a->median_us < *b->median_us; });
  for (const RecordedVariant* answer : fastest)
    for (const RecordedVariant& v : held.variants)
      if (v.median_us && v.candidate.template_name == answer->candidate.template_name &&
          v.candidate.config == answer->candidate.config)
        return *v.median_us / *held.optimum_us() - 1;
  return std::nullopt;
}

std::string model_of(const RecordedSpace& space) {
  return space.device.value("name", std::string());
}

std::vector<std::size_t> ranking(const std::vector<double>& score) {
  std::vector<std::size_t> order(score.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return score[a] < score[b]; });
  return order;
}

// The fastest measured among the first `count` of `order` (the first measured one when none of
// them is).
double best_within(const RecordedSpace& space, const std::vector<std::size_t>& order,
                   std::size_t count) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const auto& t = space.variants[order[rank]].median_us;
    if (t) best = std::min(best, *t);
    if (rank + 1 >= count && std::isfinite(best)) break;
  }
  return best;
}

// The predicted searcher replayed on `held` with `score` as its predictions.
void searched_figures(const RecordedSpace& held, const Family& family,
                      const std::vector<double>& score, PredictionCheck& check) {
  RecordedSpace ranked = held;
  for (std::size_t i = 0; i < ranked.variants.size(); ++i)
    ranked.variants[i].candidate.predicted = score[i];
  ReplayOptions options;
  options.within = -1;  // never "reached": it runs until it stops or kCheckStopAfter
  options.batch = kCheckBatch;
  options.stop_after = kCheckStopAfter;
  options.problem = add_launch_facts(ranked, family);
  const ReplayRun run = replay(ranked, "predicted", 1, options);
  const double optimum = *held.optimum_us();
  const auto best_by = [&](std::size_t measured) {
    std::optional<double> best;
    for (const auto& [at, us] : run.convergence)
      if (at <= measured) best = us;
    // Nothing measured by then (every one failed): its first success counts.
    if (!best && !run.convergence.empty()) best = run.convergence.front().second;
    return best ? *best / optimum - 1 : 1.0;
  };
  check.gap_searched_8 = best_by(8);
  check.gap_searched_16 = best_by(16);
  if (run.searcher_stopped) {
    check.searched_stop_measured = run.measured;
    check.searched_stop_gap = best_by(run.measured);
  }
}

std::string describe(const RecordedSpace& space) {
  std::string out = space.family + " " + space.dtype + " ";
  bool first = true;
  for (const auto& [name, value] : space.shape) {
    out += (first ? "" : ",") + name + "=" + std::to_string(value);
    first = false;
  }
  return out + " on " + space.device.value("name", std::string("?"));
}

}  // namespace

double ShapePredictor::roofline_offset(const Family& family, const RecordedSpace& space) {
  return roofline_log(work_of(family.flops, family.bytes, space));
}

ShapePredictor::ShapePredictor(const Family& family) : flops_(family.flops), bytes_(family.bytes) {
  for (const DimSpec& dim : family.dims) dims_.push_back(dim.name);
  std::set<std::string> axes;
  for (const TemplateSpec& t : family.templates) {
    templates_.push_back(t.name);
    for (const AxisSpec& a : t.axes) axes.insert(a.name);
  }
  axes_.assign(axes.begin(), axes.end());
}

std::size_t ShapePredictor::feature_count() const {
  return dims_.size() + 3 + templates_.size() + axes_.size() + 4;
}

std::vector<double> ShapePredictor::shape_features(const RecordedSpace& space) const {
  std::vector<double> f;
  for (const std::string& dim : dims_) {
    const auto it = space.shape.find(dim);
    f.push_back(it == space.shape.end() ? kMissing : log2p(static_cast<double>(it->second)));
  }
  const auto work = work_of(flops_, bytes_, space);
  f.push_back(log2p(work.first));
  f.push_back(log2p(work.second));
  f.push_back(work.second > 0 ? std::log2(std::max(work.first, 1.0) / work.second) : kMissing);
  return f;
}

void ShapePredictor::begin_row(const std::vector<double>& shape_part,
                               const std::string& template_name, FeatureCursor& cursor,
                               std::vector<double>& f) const {
  f.clear();
  f.insert(f.end(), shape_part.begin(), shape_part.end());
  // Candidates come template by template: the last one's position is nearly always the answer.
  if (cursor.template_at >= templates_.size() || templates_[cursor.template_at] != template_name)
    cursor.template_at = static_cast<std::size_t>(
        std::find(templates_.begin(), templates_.end(), template_name) - templates_.begin());
  for (std::size_t t = 0; t < templates_.size(); ++t)
    f.push_back(t == cursor.template_at ? 1.0 : 0.0);
}

void ShapePredictor::end_row(std::int64_t grid_blocks, int blocks_per_sm, int sm_count,
                             std::vector<double>& f) {
  const double grid = static_cast<double>(grid_blocks);
  const double slots = static_cast<double>(sm_count) * std::max(1, blocks_per_sm);
  const double waves = grid > 0 ? grid / slots : 0;
  f.push_back(grid > 0 ? log2p(grid_blocks) : kMissing);
  f.push_back(grid > 0 ? waves : kMissing);
  f.push_back(grid > 0 ? std::ceil(waves) : kMissing);
  f.push_back(grid > 0 ? waves / std::ceil(waves) : kMissing);  // how full the waves run
}

void ShapePredictor::features(const std::vector<double>& shape_part, int sm_count,
                              const SearchCandidate& c, std::vector<double>& f,
                              FeatureCursor& cursor) const {
  begin_row(shape_part, c.template_name, cursor, f);
  // axes_ and the config are both sorted by name: one walk, no lookups.
  auto it = c.config.begin();
  for (const std::string& a : axes_) {
    while (it != c.config.end() && it->first < a) ++it;
    f.push_back(it != c.config.end() && it->first == a ? log2p(it->second) : kMissing);
  }
  end_row(c.grid_blocks, c.blocks_per_sm, sm_count, f);
}

void ShapePredictor::features(const std::vector<double>& shape_part, int sm_count,
                              const CandidateValues& c, std::vector<double>& f,
                              FeatureCursor& cursor) const {
  begin_row(shape_part, *c.template_name, cursor, f);
  // Where each of axes_ sits among the candidate's axes (-1: not one of them), found once per
  // axes list: the rows of one template share theirs.
  if (cursor.axes != c.axes) {
    cursor.axes = c.axes;
    cursor.position.assign(axes_.size(), -1);
    for (std::size_t j = 0; j < axes_.size(); ++j)
      for (std::size_t a = 0; a < c.axes->size(); ++a)
        if ((*c.axes)[a] == axes_[j]) cursor.position[j] = static_cast<int>(a);
  }
  for (const int a : cursor.position) f.push_back(a >= 0 ? log2p(c.values[a]) : kMissing);
  end_row(c.grid_blocks, c.blocks_per_sm, sm_count, f);
}

ShapePredictor ShapePredictor::fit(const Family& family,
                                   const std::vector<const RecordedSpace*>& spaces,
                                   const BoostingOptions& options) {
  ShapePredictor p(family);
  std::vector<double> x, y;
  for (const RecordedSpace* space : spaces) {
    const double offset = roofline_log(work_of(p.flops_, p.bytes_, *space));
    const std::vector<double> shape_part = p.shape_features(*space);
    const int sm_count = space->device.value("sm_count", 132);
    std::vector<double> row;
    FeatureCursor cursor;
    for (const RecordedVariant& v : space->variants) {
      if (!v.median_us || *v.median_us <= 0) continue;
      p.features(shape_part, sm_count, v.candidate, row, cursor);
      x.insert(x.end(), row.begin(), row.end());
      y.push_back(std::log(*v.median_us) - offset);
    }
  }
  if (y.empty()) throw std::invalid_argument("shape predictor: no measured variant to fit");
  p.model_ = BoostedTrees::fit(x, p.feature_count(), y, options);
  return p;
}

std::vector<double> ShapePredictor::scores(const RecordedSpace& space) const {
  std::vector<double> out;
  out.reserve(space.variants.size());
  const std::vector<double> shape_part = shape_features(space);
  const int sm_count = space.device.value("sm_count", 132);
  std::vector<double> row;
  row.reserve(feature_count());
  FeatureCursor cursor;
  for (const RecordedVariant& v : space.variants) {
    features(shape_part, sm_count, v.candidate, row, cursor);
    out.push_back(model_.predict(row.data()));
  }
  return out;
}

BoostedTrees ShapePredictor::given_shape(const std::vector<double>& shape_part) const {
  // The shape's features are the first of every row and the same for all: decided once.
  std::vector<std::pair<std::size_t, double>> known;
  for (std::size_t i = 0; i < shape_part.size(); ++i) known.emplace_back(i, shape_part[i]);
  return model_.given(known);
}

template <typename Candidate>
std::vector<double> ShapePredictor::candidate_rows(const std::vector<double>& shape_part,
                                                   int sm_count,
                                                   const std::vector<Candidate>& candidates,
                                                   std::size_t first, std::size_t last) const {
  std::vector<double> rows, row;
  rows.reserve(feature_count() * (last - first));
  row.reserve(feature_count());
  FeatureCursor cursor;
  for (std::size_t i = first; i < last; ++i) {
    features(shape_part, sm_count, candidates[i], row, cursor);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

template <typename Candidate>
ShapePredictor::ShapeRows ShapePredictor::rows_of(const RecordedSpace& shape,
                                                  const std::vector<Candidate>& candidates) const {
  const std::vector<double> shape_part = shape_features(shape);
  const int sm_count = shape.device.value("sm_count", 132);
  return {given_shape(shape_part),
          candidate_rows(shape_part, sm_count, candidates, 0, candidates.size())};
}

std::vector<double> ShapePredictor::scores(const RecordedSpace& shape,
                                           const std::vector<SearchCandidate>& candidates) const {
  const ShapeRows rows = rows_of(shape, candidates);
  std::vector<double> out(candidates.size());
  rows.model.predict(rows.rows.data(), candidates.size(), out.data());
  return out;
}

std::pair<std::size_t, double> ShapePredictor::lowest(
    const RecordedSpace& shape, const std::vector<CandidateValues>& candidates,
    ThreadPool* helpers) const {
  const std::size_t n = candidates.size();
  if (n == 0) throw std::invalid_argument("shape predictor: lowest of no candidates");
  const std::vector<double> shape_part = shape_features(shape);
  const int sm_count = shape.device.value("sm_count", 132);
  const BoostedTrees model = given_shape(shape_part);
  // The lowest of candidates [first, last): their rows, then the trees' walk.
  const auto lowest_of = [&](std::size_t first, std::size_t last) {
    const std::vector<double> rows = candidate_rows(shape_part, sm_count, candidates, first, last);
    const auto [at, score] = model.lowest(rows.data(), last - first);
    return std::pair<std::size_t, double>{first + at, score};
  };
  // Hundreds of candidates (a GEMM space on most shapes) take a few threads, a run of candidates
  // each: a row's score is the same sum in the same order whichever run it is in, and of equal
  // scores the earlier run's wins, so the answer is the same to the bit. At about 3 us a candidate
  // (kt-predict-bench on an H100 host) a run of 128 is some 0.4 ms, far above what handing it to
  // a waiting helper costs; runs of 512 left the slowest GEMM answers (300-900 candidates) on one
  // or two threads. No more threads than the machine has cores.
  constexpr std::size_t kCandidatesPerThread = 128;
  const std::size_t threads =
      helpers ? std::min({n / kCandidatesPerThread + 1, std::size_t{helpers->size()} + 1,
                          std::max<std::size_t>(1, std::thread::hardware_concurrency())})
              : 1;
  if (threads == 1) return lowest_of(0, n);
  const auto bound = [&](std::size_t t) { return n * t / threads; };
  std::vector<std::future<std::pair<std::size_t, double>>> others;
  for (std::size_t t = 1; t < threads; ++t)
    others.push_back(helpers->submit([&, t] { return lowest_of(bound(t), bound(t + 1)); }));
  std::pair<std::size_t, double> best;
  try {
    best = lowest_of(0, bound(1));
  } catch (...) {
    // The helpers read this frame: it stays until they are done.
    for (auto& other : others) other.wait();
    throw;
  }
  for (auto& other : others) other.wait();  // all done before any get() may throw
  for (auto& other : others) {
    const std::pair<std::size_t, double> r = other.get();
    if (r.second < best.second) best = r;
  }
  return best;
}

std::vector<PredictionCheck> leave_one_shape_out(const Family& family,
                                                 std::vector<RecordedSpace>& spaces,
                                                 const BoostingOptions& options) {
  for (RecordedSpace& s : spaces)
    if (s.family == family.name) add_launch_facts(s, family);
  std::vector<PredictionCheck> checks;
  for (const RecordedSpace& held : spaces) {
    if (held.family != family.name || !held.optimum_us()) continue;
    std::vector<const RecordedSpace*> others;
    for (const RecordedSpace& s : spaces)
      if (s.family == family.name && s.shape != held.shape && s.optimum_us()) others.push_back(&s);
    if (others.empty()) continue;
    const ShapePredictor predictor = ShapePredictor::fit(family, others, options);
    const std::vector<double> score = predictor.scores(held);
    const std::vector<std::size_t> order = ranking(score);
    const double optimum = *held.optimum_us();
    PredictionCheck check;
    check.space = describe(held);
    check.device = model_of(held);
    check.variants = held.variants.size();
    searched_figures(held, family, score, check);
    std::vector<const RecordedSpace*> other_models;
    for (const RecordedSpace* s : others)
      if (model_of(*s) != check.device) other_models.push_back(s);
    if (!other_models.empty()) {
      const std::vector<std::size_t> cross =
          ranking(ShapePredictor::fit(family, other_models, options).scores(held));
      check.gap_first_other_gpus = best_within(held, cross, 1) / optimum - 1;
      check.gap_best_of_8_other_gpus = best_within(held, cross, 8) / optimum - 1;
    }
    double best = std::numeric_limits<double>::infinity();
    bool first_found = false;
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      const RecordedVariant& v = held.variants[order[rank]];
      if (v.median_us) {
        if (!first_found) check.gap_first = *v.median_us / optimum - 1;
        first_found = true;
        best = std::min(best, *v.median_us);
        if (*v.median_us <= optimum && check.rank_of_optimum == 0 && rank > 0)
          check.rank_of_optimum = static_cast<double>(rank) / static_cast<double>(order.size());
      }
      if (rank + 1 == 8) check.gap_best_of_8 = best / optimum - 1;
      if (rank + 1 == 16) check.gap_best_of_16 = best / optimum - 1;
    }
    if (order.size() < 8) check.gap_best_of_8 = best / optimum - 1;
    if (order.size() < 16) check.gap_best_of_16 = best / optimum - 1;
    check.gap_nearest = nearest_answer_gap(held, spaces);
    double sum = 0;
    std::size_t measured = 0;
    for (const RecordedVariant& v : held.variants)
      if (v.median_us) {
        sum += *v.median_us / optimum - 1;
        ++measured;
      }
    check.mean_gap = sum / static_cast<double>(std::max<std::size_t>(measured, 1));
    checks.push_back(check);
  }
  return checks;
}

}  // namespace kt::search
