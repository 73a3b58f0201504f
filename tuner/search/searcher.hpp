// Searchers: which variants of a job's space to measure next. One small interface, pure (no I/O,
// no clock): given the candidates (configs, with their compile-time resource report when known)
// and what has been measured so far, propose the next batch. Deterministic for a seed: the same
// inputs give the same batch, so a resumed job (which rebuilds its history from the store)
// proposes exactly what it would have proposed before the crash.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/config.hpp"

namespace kt {

// The compile-time resource report of a variant (what the cubin says); -1 when unknown.
struct CompileFacts {
  int registers = -1;
  int spill_bytes = -1;
  int smem_bytes = -1;
  int threads = -1;
};

struct SearchCandidate {
  std::string template_name;
  Config config;
  std::optional<CompileFacts> facts;  // unset until compiled
  // Blocks (CTAs) of the variant's launch grid for the job's shape on its device, and how many of
  // its blocks one SM holds at once, from the manifest's launch formulas
  // (tuner/search/launch_facts.hpp); 0 when not known.
  std::int64_t grid_blocks = 0;
  int blocks_per_sm = 0;
  std::int64_t dynamic_smem = 0;  // the launch's dynamic shared memory, bytes; 0 when not known
  // The shape predictor's score (tuner/search/shape_predictor.hpp: log time less the shape's
  // roofline, lower is faster), from a model fitted on other shapes; unset without a model.
  std::optional<double> predicted;
};

// What a searcher knows of the job beyond its configs. Default: nothing (no grid preference).
struct SearchProblem {
  int sm_count = 0;           // the device's SMs; 0 when not known
  bool memory_bound = false;  // the shape's arithmetic intensity is below the device's balance
  double operand_bytes = 0;   // the family's bytes formula for the shape; 0 when not known
};

// One finished variant, in the order they finished. time_us unset: it failed a gate (compile
// error, resources, wrong result, ...), which a searcher may learn from too.
struct SearchObservation {
  std::size_t candidate = 0;  // index into the candidates
  std::optional<double> time_us;
};

struct SearchState {
  const std::vector<SearchCandidate>& candidates;
  const std::vector<SearchObservation>& observations;
  // Candidates already handed out (measured, failed or in flight): never proposed again.
  const std::vector<bool>& taken;
  SearchProblem problem;
};

class Searcher {
 public:
  virtual ~Searcher() = default;
  virtual std::string_view name() const = 0;
  // Up to `count` candidate indices, none taken, no duplicates; empty when none is left.
  virtual std::vector<std::size_t> propose(const SearchState& state, std::size_t count) = 0;
};

// The searchers a job may name, in the order the API lists them.
const std::vector<std::string>& searcher_names();
// The one a budgeted job gets when it names none (the best in the committed replay results:
// leave one shape out, the best of its first 16 measured is within 0.1% of the optimum in the
// median, where local's is 2.7%). With no shape predictor for the family and dtype it runs as
// local, warm start included.
inline constexpr std::string_view kDefaultSearcher = "predicted";
// nullptr for an unknown name.
std::unique_ptr<Searcher> make_searcher(std::string_view name, std::uint64_t seed);

// Indices 0..n-1 in an order fixed by `seed` (Fisher-Yates over a 64-bit LCG, the same on every
// platform).
std::vector<std::size_t> seeded_order(std::size_t n, std::uint64_t seed);

}  // namespace kt
