#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tuner/search/features.hpp"
#include "tuner/search/launch_facts.hpp"
#include "tuner/search/replay.hpp"
#include "tuner/search/searcher.hpp"
#include "tuner/search/warm_start.hpp"

namespace kt {
namespace {

// A synthetic space with one clear optimum: time grows with each axis' log-distance from
// (BM=128, BN=128, STAGES=4), some configs fail.
RecordedSpace synthetic_space() {
  RecordedSpace space;
  space.family = "gemm";
  space.shape = {{"M", 1024}, {"N", 1024}, {"K", 1024}};
  space.dtype = "bf16";
  for (int bm : {16, 32, 64, 128, 256})
    for (int bn : {16, 32, 64, 128, 256})
      for (int stages : {1, 2, 3, 4, 5, 6, 7, 8}) {
        RecordedVariant v;
        v.candidate.template_name = "t";
        v.candidate.config = {{"BM", bm}, {"BN", bn}, {"STAGES", stages}};
        v.candidate.facts = CompileFacts{64 + stages * 8, 0, bm * bn * stages, 128};
        if (bm == 256 && bn == 256) {
          v.status = "resource_exceeded";
        } else {
          v.status = "measured";
          v.median_us =
              100.0 * (1 + std::abs(std::log2(bm / 128.0)) * 0.3 +
                       std::abs(std::log2(bn / 128.0)) * 0.25 + std::abs(stages - 4) * 0.05);
        }
        space.variants.push_back(std::move(v));
      }
  return space;
}

std::vector<SearchCandidate> candidates_of(const RecordedSpace& space) {
  std::vector<SearchCandidate> out;
  for (const auto& v : space.variants) out.push_back(v.candidate);
  return out;
}

TEST(Searcher, EveryNameMakesOneAndUnknownMakesNone) {
  for (const std::string& name : searcher_names()) {
    auto s = make_searcher(name, 7);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(s->name(), name);
  }
  EXPECT_EQ(make_searcher("annealing", 7), nullptr);
  EXPECT_NE(
      std::find(searcher_names().begin(), searcher_names().end(), std::string(kDefaultSearcher)),
      searcher_names().end());
}

TEST(Searcher, ProposalsAreUntakenDistinctAndCoverTheSpace) {
  const RecordedSpace space = synthetic_space();
  for (const std::string& name : searcher_names()) {
    auto searcher = make_searcher(name, 3);
    std::vector<SearchCandidate> candidates = candidates_of(space);
    std::vector<SearchObservation> observations;
    std::vector<bool> taken(candidates.size(), false);
    std::size_t seen = 0;
    while (true) {
      const auto batch = searcher->propose({candidates, observations, taken}, 16);
      if (batch.empty()) break;
      EXPECT_LE(batch.size(), 16u);
      for (std::size_t c : batch) {
        ASSERT_LT(c, taken.size()) << name;
        ASSERT_FALSE(taken[c]) << name << " proposed " << c << " twice";
        taken[c] = true;
        observations.push_back({c, space.variants[c].median_us});
        ++seen;
      }
    }
    EXPECT_EQ(seen, candidates.size()) << name << " stopped before the space was exhausted";
  }
}

TEST(Searcher, SameSeedSameProposalsOtherSeedOtherOrder) {
  const RecordedSpace space = synthetic_space();
  for (const std::string name : {"random", "model", "local"}) {
    const ReplayRun a = replay(space, name, 11);
    const ReplayRun b = replay(space, name, 11);
    EXPECT_EQ(a.evaluations, b.evaluations) << name;
    EXPECT_EQ(a.convergence, b.convergence) << name;
  }
  std::set<std::size_t> evaluations;
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    evaluations.insert(replay(space, "random", seed).evaluations);
  EXPECT_GT(evaluations.size(), 1u) << "random search ignores its seed";
}

// A resumed job rebuilds its history from the store: a fresh searcher given the same history
// proposes what the one that ran before the crash would have.
TEST(Searcher, AFreshSearcherContinuesAnInterruptedSearchIdentically) {
  const RecordedSpace space = synthetic_space();
  for (const std::string name : {"random", "model", "local"}) {
    std::vector<SearchCandidate> candidates = candidates_of(space);
    std::vector<SearchObservation> observations;
    std::vector<bool> taken(candidates.size(), false);
    auto first = make_searcher(name, 5);
    for (int round = 0; round < 4; ++round)
      for (std::size_t c : first->propose({candidates, observations, taken}, 8)) {
        taken[c] = true;
        observations.push_back({c, space.variants[c].median_us});
      }
    auto resumed = make_searcher(name, 5);
    EXPECT_EQ(first->propose({candidates, observations, taken}, 8),
              resumed->propose({candidates, observations, taken}, 8))
        << name;
  }
}

TEST(Searcher, LearnersBeatRandomOnASmoothSpace) {
  const RecordedSpace space = synthetic_space();
  auto median_evaluations = [&](const std::string& name) {
    std::vector<double> e;
    for (std::uint64_t seed = 1; seed <= 15; ++seed)
      e.push_back(static_cast<double>(replay(space, name, seed).evaluations));
    return quantile(e, 0.5);
  };
  const double random = median_evaluations("random");
  EXPECT_LT(median_evaluations("local"), random);
  EXPECT_LT(median_evaluations("model"), random);
}

// The synthetic space with grids: 2048/BM x 2048/BN blocks, one per SM, so on 132 SMs only
// BM x BN = 128 x 256 and 256 x 128 fill one wave (16 of 200 candidates, none the optimum).
RecordedSpace space_with_grids() {
  RecordedSpace space = synthetic_space();
  for (RecordedVariant& v : space.variants) {
    v.candidate.grid_blocks =
        (2048 / v.candidate.config.at("BM")) * (2048 / v.candidate.config.at("BN"));
    v.candidate.blocks_per_sm = 1;
  }
  return space;
}

std::vector<std::size_t> first_batch(const RecordedSpace& space, const std::string& searcher,
                                     std::uint64_t seed, const SearchProblem& problem) {
  const std::vector<SearchCandidate> candidates = candidates_of(space);
  const std::vector<SearchObservation> none;
  const std::vector<bool> taken(candidates.size(), false);
  return make_searcher(searcher, seed)->propose({candidates, none, taken, problem}, 8);
}

TEST(OneWaveSearch, OnAMemoryBoundShapeTheFirstBatchFillsOneWave) {
  const RecordedSpace space = space_with_grids();
  const SearchProblem memory_bound{132, true};
  for (const std::string name : {"local", "model"})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const auto batch = first_batch(space, name, seed, memory_bound);
      ASSERT_EQ(batch.size(), 8u);
      for (std::size_t c : batch)
        EXPECT_TRUE(fills_one_wave(space.variants[c].candidate, memory_bound))
            << name << " seed " << seed << " proposed "
            << canonical_key(space.variants[c].candidate.config);
      EXPECT_NE(batch, first_batch(space, name, seed, {})) << "the plain seeded sample differs";
    }
  // Once measured, the learners climb from there: the optimum is still found.
  ReplayOptions options;
  options.problem = memory_bound;
  for (const std::string name : {"local", "model"})
    EXPECT_TRUE(replay(space, name, 3, options).reached);
}

TEST(OneWaveSearch, AComputeBoundShapeIsSearchedExactlyAsBefore) {
  const RecordedSpace with_grids = space_with_grids(), without = synthetic_space();
  ReplayOptions compute_bound;
  compute_bound.problem = SearchProblem{132, false};
  ReplayOptions memory_bound_no_wave;  // memory-bound, but no candidate fills one wave
  memory_bound_no_wave.problem = SearchProblem{1000, true};
  for (const std::string name : {"local", "model"})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const ReplayRun before = replay(without, name, seed);
      for (const ReplayOptions& options : {compute_bound, memory_bound_no_wave}) {
        const ReplayRun after = replay(with_grids, name, seed, options);
        EXPECT_EQ(after.evaluations, before.evaluations) << name << " seed " << seed;
        EXPECT_EQ(after.convergence, before.convergence) << name << " seed " << seed;
      }
    }
}

// Deterministic for a seed, and a resumed job (a fresh searcher given the same history) proposes
// what the one before the crash would have, with the preference on.
TEST(OneWaveSearch, ProposalsAreDeterministicAndSurviveAResume) {
  const RecordedSpace space = space_with_grids();
  const SearchProblem memory_bound{132, true};
  ReplayOptions options;
  options.problem = memory_bound;
  for (const std::string name : {"local", "model"}) {
    const ReplayRun a = replay(space, name, 11, options), b = replay(space, name, 11, options);
    EXPECT_EQ(a.convergence, b.convergence) << name;
    std::vector<SearchCandidate> candidates = candidates_of(space);
    std::vector<SearchObservation> observations;
    std::vector<bool> taken(candidates.size(), false);
    auto first = make_searcher(name, 5);
    for (int round = 0; round < 3; ++round)
      for (std::size_t c : first->propose({candidates, observations, taken, memory_bound}, 8)) {
        taken[c] = true;
        observations.push_back({c, space.variants[c].median_us});
      }
    auto resumed = make_searcher(name, 5);
    EXPECT_EQ(first->propose({candidates, observations, taken, memory_bound}, 8),
              resumed->propose({candidates, observations, taken, memory_bound}, 8))
        << name;
  }
}

// A warm start in replay: the nearest other recordings' fastest configs, mapped into the space;
// with them the learners reach the optimum at once, where the neighbour's optimum is the same.
TEST(Replay, WarmStartSeedsComeFromTheNearestOtherShapesOfTheSameProblem) {
  const RecordedSpace space = synthetic_space();
  RecordedSpace near = space, far = space, twin = space, other_model = space;
  near.shape["M"] = 2048;  // log 2
  far.shape["M"] = 16384;  // log 16
  twin.shape["M"] = 2048;  // a second recording of the near shape: its variants join near's
  for (RecordedVariant& v : twin.variants)
    if (v.median_us) *v.median_us *= 2;  // slower: none of its configs ranks first
  other_model.shape["M"] = 1536;
  other_model.device = {{"name", "NVIDIA H200"}};
  for (RecordedVariant& v : far.variants)  // far's fastest is another config
    if (v.median_us && v.candidate.config.at("BM") == 16) *v.median_us = 1;

  const auto seeds = warm_start_seeds(space, {&space, &far, &near, &twin, &other_model});
  ASSERT_EQ(seeds.size(), 2 * kSeedsPerShape);
  const Config optimum{{"BM", 128}, {"BN", 128}, {"STAGES", 4}};
  EXPECT_EQ(space.variants[seeds[0]].candidate.config, optimum) << "near's fastest first";
  for (std::size_t i = kSeedsPerShape; i < seeds.size(); ++i)
    EXPECT_EQ(space.variants[seeds[i]].candidate.config.at("BM"), 16) << "then far's";
  EXPECT_TRUE(warm_start_seeds(space, {&space, &other_model}).empty());

  ReplayOptions warm;
  warm.seeds = seeds;
  for (const std::string name : {"local", "model"})
    EXPECT_EQ(replay(space, name, 3, warm).evaluations, 1u) << name;
  EXPECT_GT(replay(space, "exhaustive", 3, warm).evaluations, 1u) << "exhaustive is not seeded";
}

TEST(Replay, StopsAtTheTargetAndRecordsConvergence) {
  const RecordedSpace space = synthetic_space();
  const ReplayRun run = replay(space, "exhaustive", 1);
  ASSERT_TRUE(run.reached);
  ASSERT_FALSE(run.convergence.empty());
  EXPECT_LE(run.convergence.back().second, *space.optimum_us() * 1.03);
  for (std::size_t i = 1; i < run.convergence.size(); ++i)
    EXPECT_LT(run.convergence[i].second, run.convergence[i - 1].second);
  EXPECT_THROW(replay(space, "nope", 1), std::invalid_argument);
}

TEST(RecordedSpace, RoundTripsAndRejectsBadInput) {
  const RecordedSpace space = synthetic_space();
  const RecordedSpace back = recorded_space_from_json(to_json(space));
  ASSERT_EQ(back.variants.size(), space.variants.size());
  EXPECT_EQ(back.variants[3].candidate.config, space.variants[3].candidate.config);
  EXPECT_EQ(back.variants[3].median_us, space.variants[3].median_us);
  EXPECT_EQ(back.optimum_us(), space.optimum_us());
  nlohmann::json bad = to_json(space);
  bad["format"] = "something-else/2";
  EXPECT_THROW(recorded_space_from_json(bad), std::invalid_argument);
  bad = to_json(space);
  bad["variants"][0].erase("median_us");
  EXPECT_THROW(recorded_space_from_json(bad), std::invalid_argument);
}

// A re-recorded problem supersedes its older recording; other GPU models and shapes stay.
TEST(RecordedSpace, OnlyTheNewestRecordingOfAProblemIsKept) {
  RecordedSpace old_h100 = synthetic_space(), new_h100 = old_h100, h200 = old_h100,
                other_shape = old_h100, undated = old_h100;
  old_h100.device["name"] = new_h100.device["name"] = undated.device["name"] = "H100";
  other_shape.device["name"] = "H100";
  h200.device["name"] = "H200";
  old_h100.provenance["recorded"] = "2026-11-22";
  new_h100.provenance["created_at"] = "2026-12-06T16:37:09.172Z";
  new_h100.variants.resize(7);
  h200.provenance["created_at"] = "2026-11-01T00:00:00Z";
  other_shape.shape["M"] = 64;
  EXPECT_EQ(recorded_at(old_h100), "2026-11-22");
  EXPECT_EQ(recorded_at(undated), "");

  const std::vector<RecordedSpace> kept =
      newest_recordings({undated, old_h100, h200, new_h100, other_shape});
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].variants.size(), 7u) << "the 2026-12-06 recording, in the first one's place";
  EXPECT_EQ(kept[1].device["name"], "H200");
  EXPECT_EQ(kept[2].shape.at("M"), 64);
}

TEST(Features, OccupancyFollowsTheScarcestResource) {
  EXPECT_DOUBLE_EQ(search::occupancy_estimate({32, 0, 0, 256}), 1.0);
  // 168 registers x 384 threads: one block of 12 warps.
  EXPECT_DOUBLE_EQ(search::occupancy_estimate({168, 0, 0, 384}), 12.0 / 64.0);
  // 200 KiB of shared memory: one block.
  EXPECT_DOUBLE_EQ(search::occupancy_estimate({32, 0, 200 * 1024, 128}), 4.0 / 64.0);
}

}  // namespace
}  // namespace kt
