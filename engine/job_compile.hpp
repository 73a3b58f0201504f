// Gates 1–2 for one planned variant: evaluate its launch, compile it (or take it from the
// content-addressed kernel cache) and check its resources against the device. Records nothing:
// the runner stores what comes back (job_recorder.hpp).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/model.hpp"
#include "engine/compile_client.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

// The compile cache as the compile step reads it: the kernel stored under a key, if any.
using KernelLookup = std::function<std::optional<KernelBlob>(const std::string& key)>;

// Runs NVRTC for the compile step; the daemon's is compile_in_child (engine/compile_client.hpp),
// so that a compiler crash ends a child process and becomes the variant's outcome.
using KernelCompiler = std::function<CompileReply(const CompileRequest& request)>;

struct CompiledVariant {
  std::int64_t variant_id = 0;
  std::string arch;
  std::string kernel;       // entry point
  std::string kernel_key;   // compile cache key
  std::vector<char> cubin;  // the kernel, whenever it compiled
  ProblemInstance full;
  std::optional<ProblemInstance> smoke;
  // NVRTC's result, or the cache's (its cubin moved to `cubin`); unset when the variant stopped
  // before compiling (template gone, manifest error).
  std::optional<CompileResult> compile;
  bool cache_hit = false;
  std::optional<VariantOutcome> failure;  // set when the variant stops here
};

// Never throws for a bad variant: manifest evaluation errors, compile errors and resource
// overflows come back as `failure`, with the compile result (log, registers, spills, smem). A
// compile process that dies is `crashed`, one that runs past its timeout `hang` (gate compile,
// the reason also in the compile log).
CompiledVariant compile_variant(const KernelLookup& cached, const KernelCompiler& compile,
                                const Family& family, const JobRecord& job,
                                const VariantRecord& variant, const DeviceLimits& limits);

// A variant that already passed the compile gate, rebuilt from the compile cache for measuring it
// again (the final comparison). nullopt when its kernel is not in the cache.
std::optional<CompiledVariant> reload_compiled(const KernelLookup& cached, const Family& family,
                                               const JobRecord& job, const VariantRecord& variant,
                                               const DeviceLimits& limits);

}  // namespace kt
