// The shape predictor: boosted trees (boosted_trees.hpp) of a variant's log time over its shape
// (log dims, log flops and bytes, arithmetic intensity), its config (template, log2 of every axis)
// and its launch (grid blocks, blocks per SM, waves, the last wave's fill), fitted on every
// measured variant of a family's recorded spaces. It ranks a shape's candidates without measuring
// or compiling any. The compile-time resource report is left out on purpose: a daemon knows it
// only for configs compiled before, and with it unknown for part of a shape's candidates the
// leave-one-shape-out p90 of the first pick went from +20% to +78% on the committed spaces, while
// a model without it does as well as one given every report (+18%: docs/search.md).
//
// The target is log(time) less log(a roofline of the shape: max(flops / 1 PFLOP/s, bytes / 3
// TB/s)), so shapes of very different sizes share one scale; the offset is the same for every
// candidate of a shape, so the ranking is that of predicted time. No device features: a model
// fitted on one GPU model's spaces ranks another's (H100 -> H200) as is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/family.hpp"
#include "tuner/search/boosted_trees.hpp"
#include "tuner/search/recorded_space.hpp"

namespace kt {
class ThreadPool;
}

namespace kt::search {

class ShapePredictor {
 public:
  // Fitted on every measured variant of `spaces` (spaces of `family`, their launch facts added:
  // replay.hpp's add_launch_facts). Throws std::invalid_argument when none is measured.
  static ShapePredictor fit(const Family& family, const std::vector<const RecordedSpace*>& spaces,
                            const BoostingOptions& options = {});

  // The predicted log-time score of each of the space's variants (lower: faster), in order.
  std::vector<double> scores(const RecordedSpace& space) const;
  // The same for candidates of the shape (family, shape, dtype and device of `shape`, whose
  // variants are not read), without copying them into a space.
  std::vector<double> scores(const RecordedSpace& shape,
                             const std::vector<SearchCandidate>& candidates) const;
  // A candidate by position (SpaceIndex::feasible_rows's): its template's name, its axes and their
  // values in one order, and its grid facts; scored as the same SearchCandidate would be, to the
  // bit, without building its Config. The pointers must outlive the call. lowest(): the one with
  // the lowest score (the first of equals) and that score, without scoring every candidate to the
  // end; with `helpers`, more than 128 candidates are split in runs, one on the calling thread and
  // the others on the helpers (the same answer to the bit). Throws std::invalid_argument for none.
  struct CandidateValues {
    const std::string* template_name = nullptr;
    const std::vector<std::string>* axes = nullptr;
    const std::int64_t* values = nullptr;  // axes->size() of them
    std::int64_t grid_blocks = 0;
    int blocks_per_sm = 0;
  };
  std::pair<std::size_t, double> lowest(const RecordedSpace& shape,
                                        const std::vector<CandidateValues>& candidates,
                                        ThreadPool* helpers = nullptr) const;
  // What a score is relative to: log(microseconds) of the shape's rough roofline. A variant's
  // predicted time is exp(score + roofline_offset) microseconds.
  static double roofline_offset(const Family& family, const RecordedSpace& space);

 private:
  explicit ShapePredictor(const Family& family);
  // The shape's part of every variant's features (dims, flops, bytes), once per space, and a
  // variant's whole row with it.
  std::vector<double> shape_features(const RecordedSpace& space) const;
  // Where a run of candidates' features left off: the last one's template (its position in
  // templates_) and, for CandidateValues, where each of axes_ sits among its axes. Candidates
  // come template by template, so neither is searched for again within a template.
  struct FeatureCursor {
    std::size_t template_at = 0;
    const std::vector<std::string>* axes = nullptr;
    std::vector<int> position;
  };
  // A candidate's whole row, written into `row` (reused: no allocation per candidate).
  void features(const std::vector<double>& shape_part, int sm_count, const SearchCandidate& c,
                std::vector<double>& row, FeatureCursor& cursor) const;
  void features(const std::vector<double>& shape_part, int sm_count, const CandidateValues& c,
                std::vector<double>& row, FeatureCursor& cursor) const;
  void begin_row(const std::vector<double>& shape_part, const std::string& template_name,
                 FeatureCursor& cursor, std::vector<double>& row) const;
  static void end_row(std::int64_t grid_blocks, int blocks_per_sm, int sm_count,
                      std::vector<double>& row);
  std::size_t feature_count() const;
  // The model with the shape's features (the first of every row) decided once.
  BoostedTrees given_shape(const std::vector<double>& shape_part) const;
  // Candidates [first, last)'s rows, row-major, the shape's features (`shape_part`) first in each.
  template <typename Candidate>
  std::vector<double> candidate_rows(const std::vector<double>& shape_part, int sm_count,
                                     const std::vector<Candidate>& candidates, std::size_t first,
                                     std::size_t last) const;
  // The model given the shape's features and every candidate's row, for scores().
  struct ShapeRows {
    BoostedTrees model;
    std::vector<double> rows;
  };
  template <typename Candidate>
  ShapeRows rows_of(const RecordedSpace& shape, const std::vector<Candidate>& candidates) const;

  std::vector<std::string> dims_, templates_, axes_;
  std::string flops_, bytes_;
  BoostedTrees model_;
};

// A leave-one-shape-out check of one recorded space: a predictor fitted on the family's spaces of
// every other shape ranks its variants; the measured variants are then taken in that order.
struct PredictionCheck {
  std::string space;           // "gemm bf16 K=4096,M=4096,N=4096 on NVIDIA H200"
  std::string device;          // the space's GPU model ("NVIDIA H200")
  std::size_t variants = 0;    // in the space
  double gap_first = 0;        // (time of the first measured in the ranking) / optimum - 1
  double gap_best_of_8 = 0;    // best of the first 8 ranked (failed ones count) / optimum - 1
  double gap_best_of_16 = 0;   // the same within 16
  double rank_of_optimum = 0;  // the optimum's place in the ranking / variants (0: first)
  // What kerntune answered before: the nearest other shape's (same GPU model) fastest config
  // that this space measured, / optimum - 1; nullopt when no other shape of the model shares one.
  std::optional<double> gap_nearest;
  double mean_gap = 0;  // a config picked at random among the measured: its expected gap
  // The predicted searcher (replayed in batches of kCheckBatch with the ranking as its
  // predictions): the best within its first 8 and 16 measured variants / optimum - 1 (a searcher
  // that stopped earlier: its best when it stopped), and when it stopped by itself (within
  // kCheckStopAfter measured), how many it measured and its gap then.
  double gap_searched_8 = 0;
  double gap_searched_16 = 0;
  std::optional<std::size_t> searched_stop_measured;
  std::optional<double> searched_stop_gap;
  // Fitted on the other shapes of other GPU models only (the space's own model left out as a
  // whole): the first measured in that ranking / optimum - 1; nullopt when no other model has
  // spaces of the family.
  std::optional<double> gap_first_other_gpus;
  std::optional<double> gap_best_of_8_other_gpus;
};

inline constexpr std::size_t kCheckBatch = 8;  // the daemon's batch on one GPU
inline constexpr std::size_t kCheckStopAfter = 64;

// One check per space, spaces of other families left alone; `spaces` get their launch facts.
// A space whose family's other shapes hold nothing measured is left out.
std::vector<PredictionCheck> leave_one_shape_out(const Family& family,
                                                 std::vector<RecordedSpace>& spaces,
                                                 const BoostingOptions& options = {});

}  // namespace kt::search
