// Gates 1–2 for one planned variant: evaluate its launch, compile it (through the store's
// content-addressed kernel cache) and check its resources against the device.
#pragma once

#include <optional>
#include <vector>

#include "db/store.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

struct CompiledVariant {
  std::int64_t variant_id = 0;
  std::string kernel;       // entry point
  std::string kernel_key;   // compile cache key
  std::vector<char> cubin;  // empty if a gate failed
  ProblemInstance full;
  std::optional<ProblemInstance> smoke;
  std::optional<VariantOutcome> failure;  // set when the variant stops here
  bool cache_hit = false;
};

// Never throws for a bad variant: manifest evaluation errors, compile errors and resource
// overflows come back as `failure`, already recorded in the store together with the compile
// result (log, registers, spills, smem).
CompiledVariant compile_variant(Store& store, const Family& family, const JobRecord& job,
                                const VariantRecord& variant, const DeviceLimits& limits);

// A variant that already passed the compile gate, rebuilt from the compile cache for measuring it
// again (the near-tie re-measure); records nothing. nullopt when its kernel is not in the cache.
std::optional<CompiledVariant> reload_compiled(Store& store, const Family& family,
                                               const JobRecord& job, const VariantRecord& variant,
                                               const DeviceLimits& limits);

}  // namespace kt
