// A family's variant space for one job: the cartesian product of each template's axes, pruned by
// the manifest's constraints against the device's limits, and the evaluated launch of a variant.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/config.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/expression.hpp"
#include "tuner/family.hpp"
#include "tuner/measure_protocol.hpp"

namespace kt {

struct VariantPlan {
  const TemplateSpec* tmpl = nullptr;
  Config config;                         // one value per axis that applies to the arch
  std::optional<std::string> pruned_by;  // the failing constraint's text, or the arch mismatch
  bool unsupported_arch = false;         // template not written for this arch
  std::uint64_t index = 0;               // its position in the template's enumeration
};

// Asked during an enumeration at most every kStopCheckInterval: true abandons it (a cancelled
// job, a daemon stopping), so that a space of millions is never waited out.
using StopCheck = std::function<bool()>;
inline constexpr std::chrono::milliseconds kStopCheckInterval{50};

// Names every expression of the family may use: dims, axes, elem_bytes, and the device limits
// (smem_optin, smem_per_sm, max_threads, regs_per_block, max_regs_per_thread, sm_count,
// max_cluster, l2_bytes, tmem_columns, sm).
Bindings make_bindings(const Shape& shape, const Config& config, const std::string& dtype,
                       const DeviceLimits& limits);

// Every variant of every template, in a stable order (template order, then axes in manifest order
// with the first axis varying slowest). Templates not written for limits.arch come back once each,
// unsupported_arch = true and an empty config.
std::vector<VariantPlan> enumerate_variants(const Family& family, const Shape& shape,
                                            const std::string& dtype, const DeviceLimits& limits);

// The same variants in the same order, each handed to `visit` and not kept: a space of millions of
// configurations, nearly all pruned, is planned in constant memory. The plan handed over is
// reused for the next variant (copy what is kept). Returns false when `stop` said so.
bool for_each_variant(const Family& family, const Shape& shape, const std::string& dtype,
                      const DeviceLimits& limits,
                      const std::function<void(const VariantPlan&)>& visit,
                      const StopCheck& stop = {});

// The config at `index` of the template's enumeration for `arch` (VariantPlan::index).
Config variant_config(const TemplateSpec& tmpl, const std::string& arch, std::uint64_t index);

// NVRTC options for a variant: -DKT_<AXIS>=<v> per axis, -DKT_DTYPE_BF16 / -DKT_DTYPE_FP16,
// -DKT_SM=<sm>, then the template's own options. (The arch option is added by the compiler.)
std::vector<std::string> variant_defines(const TemplateSpec& tmpl, const Config& config,
                                         const std::string& dtype, const DeviceLimits& limits);

// The NVRTC request for a variant: the template's source with the family's sources as headers, its
// kernel, the target arch and variant_defines(...).
CompileRequest compile_request(const Family& family, const TemplateSpec& tmpl, const Config& config,
                               const std::string& dtype, const DeviceLimits& limits);

// A variant's launch (grid, block, cluster, dynamic shared memory) for one shape, as instantiate()
// evaluates it, without the buffers and args. Throws ExpressionError / FamilyError with context.
LaunchDims evaluate_launch(const Family& family, const TemplateSpec& tmpl, const Config& config,
                           const Shape& shape, const std::string& dtype,
                           const DeviceLimits& limits);

// Evaluates buffers, args, launch, reference params, flops and bytes for one shape. For a kernel
// reference, reference.params holds {"source", "kernel", "output", "args": [evaluated args, the
// output as {"kind": "reference_output"}], "launch": {"grid", "block", "dynamic_smem"}}.
// Throws ExpressionError / FamilyError with context on a bad manifest.
ProblemInstance instantiate(const Family& family, const TemplateSpec& tmpl, const Config& config,
                            const Shape& shape, const std::string& dtype,
                            const DeviceLimits& limits);

// The problem as the family's baseline needs it, with no variant: the input and output buffers,
// the reference and the baseline (scratch buffers, args and launch belong to a variant and are
// left out). For timing the baseline of a job none of whose variants reached a GPU.
ProblemInstance baseline_instance(const Family& family, const Shape& shape,
                                  const std::string& dtype, const DeviceLimits& limits);

// The template's "resources" (e.g. tmem_columns) evaluated for a variant.
std::map<std::string, std::int64_t> template_resources(const Family& family,
                                                       const TemplateSpec& tmpl,
                                                       const Config& config, const Shape& shape,
                                                       const std::string& dtype,
                                                       const DeviceLimits& limits);

// The shape with every dim it omits that has a default filled in.
Shape with_default_dims(const Family& family, Shape shape);

// The family's smoke shape for a job of `job_shape`: each entry evaluated over the job's dims
// (an empty shape: the family has none). Throws ExpressionError on a bad entry.
Shape smoke_shape_for(const Family& family, const Shape& job_shape);

// Checks a submitted shape: every dim present, integral, within [min,max], no unknown dims, the
// family's shape constraints hold. Returns an error message, or nullopt if valid.
std::optional<std::string> validate_shape(const Family& family, const Shape& shape,
                                          const std::string& dtype);

}  // namespace kt
