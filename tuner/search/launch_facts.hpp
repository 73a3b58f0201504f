// What a searcher is told about a job's launches besides the configs: each candidate's grid in
// blocks and how many of them an SM holds, the device's SM count, and whether the shape is
// memory-bound. On memory-bound shapes the learners put candidates whose whole grid runs in one
// wave first (the 2026-11-27 decode runs: one-wave grids won M = 16..128 × 4096 × 7168 on an H100
// and an H200, where searched winners with a part-filled second wave lost to cuBLAS).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"
#include "tuner/search/searcher.hpp"

namespace kt {

// The device's balance point, FLOP per byte of DRAM traffic, for 16-bit tensor-core work: the
// lowest among the arch's datacenter parts (datasheet dense FLOP/s over memory bandwidth), so a
// shape called memory-bound is memory-bound on every part of the arch. 0 for an arch with no
// figure: no shape is called memory-bound there, and the search behaves as it did before.
double balance_flops_per_byte(int sm);

// The job's SearchProblem: the device's SM count, and memory_bound when the family's flops over
// its bytes (the manifest's formulas; for GEMM 2MNK over the bytes of A, B and C) lies below
// balance_flops_per_byte(limits.sm). Not memory-bound when either formula is 0 or fails.
SearchProblem search_problem(const Family& family, const Shape& shape, const std::string& dtype,
                             const DeviceLimits& limits);

struct GridFacts {
  std::int64_t blocks = 0;  // product of the template's grid formulas, as the engine launches it
  // Blocks one SM holds at once by the launch's dynamic shared memory (plus the 1 KiB the driver
  // reserves per block) and block size; registers are not known before the variant is compiled.
  int blocks_per_sm = 0;
  std::int64_t dynamic_smem = 0;  // bytes of the launch's dynamic shared memory
};

// A variant's grid for the shape and device; zeros when the template is unknown or a formula
// cannot be evaluated for this config (e.g. a config recorded before the template gained an axis).
GridFacts grid_facts(const Family& family, const std::string& template_name, const Config& config,
                     const Shape& shape, const std::string& dtype, const DeviceLimits& limits);

// The same from a launch already evaluated (SpaceIndex::feasible's), on the device `limits`.
GridFacts grid_facts(const LaunchDims& launch, const DeviceLimits& limits);

// Sets every candidate's grid_blocks and blocks_per_sm.
void add_grid_facts(std::vector<SearchCandidate>& candidates, const Family& family,
                    const Shape& shape, const std::string& dtype, const DeviceLimits& limits);

// One wave: the whole grid is resident at once (blocks <= sm_count x blocks_per_sm, so no block
// waits for a second wave) and at least kOneWaveLow of the SMs hold a block. The decode winners
// launched 128 blocks on 132 SMs; below three quarters a quarter of the SMs would idle throughout.
// On every memory-bound recorded space (tests/data/spaces/) all configs within 3% of the
// optimum are one-wave by this rule, and they are about half of each space.
inline constexpr double kOneWaveLow = 0.75;
bool fills_one_wave(const SearchCandidate& candidate, const SearchProblem& problem);

// Above this many operand bytes a memory-bound shape's natural grids run many waves and a ragged
// last one costs little; there the one-wave candidates are mostly persistent grids, and trying
// them first cost 8x128256x4096 (1 GB of weights; H200, budget 16) its 1.01x cp.async winner
// (0.94x, 2026-11-27). The decode shapes the preference is for move 1-90 MB.
inline constexpr double kOneWaveMaxBytes = 256.0 * 1024 * 1024;

// Memory-bound, the SM count known, and at most kOneWaveMaxBytes of operands (0: not known).
bool prefers_one_wave(const SearchProblem& problem);

// `order` with, where prefers_one_wave(), the candidates that fill one wave first (each part in
// its order); otherwise `order` itself, unchanged.
std::vector<std::size_t> one_wave_first(const std::vector<std::size_t>& order,
                                        const SearchState& state);

// `order` sorted by the launch's dynamic shared memory, largest first (ties in their order), where
// prefers_one_wave(); otherwise `order` itself. A memory-bound kernel streams at about the bytes it
// keeps in flight over the memory's latency: the decode winners had the deepest rings that fit
// (2026-11-27). The local searcher orders a parent's neighbours so; sorting its first batch or
// random slots so was worse in replay (64x4096x7168: best of 48 at 1.18x the optimum).
std::vector<std::size_t> deeper_rings_first(const std::vector<std::size_t>& order,
                                            const SearchState& state);

}  // namespace kt
