#include "tuner/search/launch_facts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tuner/expression.hpp"
#include "tuner/variant_space.hpp"

namespace kt {

double balance_flops_per_byte(int sm) {
  // Datasheet dense bf16/fp16 tensor FLOP/s over DRAM bandwidth; the lowest part of each arch.
  // A shape between the lowest part's balance and a faster-computing part's (H100 SXM: 989 TFLOP/s
  // over 3.35 TB/s, 295) counts as compute-bound: the search then does what it always did.
  switch (sm) {
    case 80:
      return 153;  // A100 SXM 80 GB: 312 TFLOP/s over 2.04 TB/s
    case 90:
      return 200;  // GH200 144 GB: 989 TFLOP/s over 4.9 TB/s (H200: 4.8 TB/s, 206)
    case 100:
      return 281;  // B200: 2.25 PFLOP/s over 8 TB/s
    default:
      return 0;
  }
}

SearchProblem search_problem(const Family& family, const Shape& shape, const std::string& dtype,
                             const DeviceLimits& limits) {
  SearchProblem problem;
  problem.sm_count = std::max(0, limits.sm_count);
  const double balance = balance_flops_per_byte(limits.sm);
  if (balance <= 0) return problem;
  try {
    const Bindings bindings = make_bindings(shape, Config{}, dtype, limits);
    const double flops = shared_expression(family.flops).evaluate(bindings);
    const double bytes = shared_expression(family.bytes).evaluate(bindings);
    problem.memory_bound = flops > 0 && bytes > 0 && flops / bytes < balance;
    problem.operand_bytes = std::max(0.0, bytes);
  } catch (const ExpressionError&) {
    // A family whose flops or bytes do not evaluate: no claim, the search as before.
  }
  return problem;
}

namespace {

// Threads an SM holds (the CUDA programming guide's per-compute-capability table).
int max_threads_per_sm(int sm) {
  if (sm == 86 || sm == 89 || sm == 120) return 1536;
  if (sm < 80) return 1024;
  return 2048;
}

constexpr std::int64_t kReservedSmemPerBlock = 1024;  // the driver's, on sm_80 and later
constexpr std::int64_t kMaxBlocksPerSm = 32;

}  // namespace

GridFacts grid_facts(const Family& family, const std::string& template_name, const Config& config,
                     const Shape& shape, const std::string& dtype, const DeviceLimits& limits) {
  const auto tmpl = std::find_if(family.templates.begin(), family.templates.end(),
                                 [&](const TemplateSpec& t) { return t.name == template_name; });
  if (tmpl == family.templates.end()) return {};
  LaunchDims launch;
  try {
    launch = evaluate_launch(family, *tmpl, config, shape, dtype, limits);
  } catch (const ExpressionError&) {
    return {};  // e.g. a config recorded before the template gained an axis
  } catch (const FamilyError&) {
    return {};
  }
  return grid_facts(launch, limits);
}

GridFacts grid_facts(const LaunchDims& launch, const DeviceLimits& limits) {
  std::int64_t blocks = 1, threads = 1;
  for (const std::uint32_t extent : launch.grid) blocks *= extent;
  for (const std::uint32_t extent : launch.block) threads *= extent;
  if (threads > 1024) return {};
  const std::int64_t smem = launch.dynamic_smem;
  std::int64_t per_sm =
      std::min<std::int64_t>(kMaxBlocksPerSm, max_threads_per_sm(limits.sm) / threads);
  if (limits.smem_per_sm > 0)
    per_sm = std::min<std::int64_t>(per_sm, limits.smem_per_sm / (smem + kReservedSmemPerBlock));
  GridFacts facts;
  facts.blocks = blocks;
  facts.blocks_per_sm = static_cast<int>(std::max<std::int64_t>(per_sm, 1));
  facts.dynamic_smem = smem;
  return facts;
}

void add_grid_facts(std::vector<SearchCandidate>& candidates, const Family& family,
                    const Shape& shape, const std::string& dtype, const DeviceLimits& limits) {
  for (SearchCandidate& c : candidates) {
    const GridFacts facts = grid_facts(family, c.template_name, c.config, shape, dtype, limits);
    c.grid_blocks = facts.blocks;
    c.blocks_per_sm = facts.blocks_per_sm;
    c.dynamic_smem = facts.dynamic_smem;
  }
}

bool fills_one_wave(const SearchCandidate& candidate, const SearchProblem& problem) {
  if (problem.sm_count <= 0 || candidate.grid_blocks <= 0) return false;
  const auto low = static_cast<std::int64_t>(std::ceil(kOneWaveLow * problem.sm_count));
  const std::int64_t resident =
      static_cast<std::int64_t>(problem.sm_count) * std::max(1, candidate.blocks_per_sm);
  return candidate.grid_blocks >= low && candidate.grid_blocks <= resident;
}

bool prefers_one_wave(const SearchProblem& problem) {
  return problem.memory_bound && problem.sm_count > 0 && problem.operand_bytes <= kOneWaveMaxBytes;
}

std::vector<std::size_t> one_wave_first(const std::vector<std::size_t>& order,
                                        const SearchState& state) {
  if (!prefers_one_wave(state.problem)) return order;
  std::vector<std::size_t> out(order);
  std::stable_partition(out.begin(), out.end(), [&](std::size_t c) {
    return fills_one_wave(state.candidates[c], state.problem);
  });
  return out;
}

std::vector<std::size_t> deeper_rings_first(const std::vector<std::size_t>& order,
                                            const SearchState& state) {
  if (!prefers_one_wave(state.problem)) return order;
  std::vector<std::size_t> out(order);
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) {
    return state.candidates[a].dynamic_smem > state.candidates[b].dynamic_smem;
  });
  return out;
}

}  // namespace kt
