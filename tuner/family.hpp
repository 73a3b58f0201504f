// A kernel family as data: the manifest (manifest.json) and device sources in one folder under
// kernel_templates/. A registry holds every family found under the configured roots.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/measure_protocol.hpp"

namespace kt {

class FamilyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DimSpec {
  std::string name;  // "M"
  std::int64_t min = 1;
  std::int64_t max = 1 << 20;
  std::string description;
  std::optional<std::int64_t> default_value;  // a shape that omits the dim gets it
};

struct AxisSpec {
  std::string name;  // "BM"; reaches the source as -DKT_BM=<value>
  std::vector<std::int64_t> values;
  std::vector<std::string> archs;  // empty: every arch of the template
  std::string description;
};

struct BufferSpec {
  std::string name;   // "A"
  std::string role;   // "input" (random), "output" (poisoned, checked), "scratch" (zeroed once)
  std::string dtype;  // "in" (the job's dtype), "bf16", "fp16", "f32", "i32", "u32", "e4m3", "e5m2"
  std::string elements;  // expression over dims, axes, elem_bytes
  // Inputs' random values are uniform in [range_low, range_high) ("range" in the manifest), e.g.
  // positive scale factors.
  double range_low = -1.0, range_high = 1.0;
};

struct ArgSpec {
  // reference_output: only in a kernel reference's args, the fp32 buffer it writes its answer to
  enum class Kind { buffer, i32, i64, f32, tensor_map, reference_output };
  Kind kind = Kind::buffer;
  std::string value;  // buffer name (buffer, tensor_map), or an expression for scalars
  // tensor_map only: a dense row-major view of the buffer for the TMA copy engine, innermost
  // dimension first; extents, box and swizzle bytes (0, 32, 64, 128) are expressions.
  std::vector<std::string> dims;
  std::vector<std::string> box;
  std::string swizzle = "0";
};

struct LaunchSpec {
  std::array<std::string, 3> grid{"1", "1", "1"};
  std::array<std::string, 3> block{"1", "1", "1"};
  std::array<std::string, 3> cluster{"1", "1", "1"};
  std::string dynamic_smem = "0";
};

struct TemplateSpec {
  std::string name;                // "mma_multistage"
  std::string source;              // file name inside the family folder
  std::string kernel;              // extern "C" entry point
  std::vector<std::string> archs;  // NVRTC targets it is written for: "sm_90a", "sm_100a", ...
  std::vector<AxisSpec> axes;
  std::vector<std::string> constraints;  // each must evaluate non-zero, else the variant is pruned
  LaunchSpec launch;
  std::vector<std::string> options;  // extra NVRTC options
  // The template's own kernel arguments, replacing the family's (a TMA kernel takes tensor maps
  // where the others take pointers); empty: the family's.
  std::vector<ArgSpec> args;
  // Figures reported per variant beside the compiler's (e.g. "tmem_columns": "TMEM_COLS"):
  // expressions over dims and axes.
  std::map<std::string, std::string> resources;
};

// What a variant's output is checked against.
//   cublas_gemm  built into the worker; params name buffers and dims
//   kernel       a plain, obviously correct kernel of the family folder: compiled with NVRTC,
//                run on the variant's inputs, writing fp32 into the reference_output argument
struct ReferenceSpec {
  std::string kind;
  nlohmann::json params;  // cublas_gemm: strings name buffers or dim expressions
  // kind "kernel" only: its source, entry point, the family output it answers for, its
  // arguments and launch (expressions over dims and elem_bytes).
  std::string source;
  std::string kernel;
  std::string output;
  std::vector<ArgSpec> args;
  LaunchSpec launch;
  // kind "kernel", optional: the kernel of the same source computing the magnitude m of each
  // output element for the per-element bound's magnitude term (tuner/error_bound.hpp), with the
  // reference's arguments and launch. cublas_gemm computes its own (|A| |B|^T, K the GEMM's k).
  struct Magnitude {
    std::string kernel;       // extern "C" entry point
    std::string reduction;    // K of u(dtype, K): expression over dims (e.g. "K"; "1": none)
    std::string description;  // what m is, stored with every check
  };
  std::optional<Magnitude> magnitude;
};

// What a variant's speedup is measured against, timed in the same job.
//   cublaslt_gemm           cublasLt, the best of its heuristic's top algorithms
//   cublaslt_fp8_gemm       cublasLt's fp8 GEMM with per-tensor or 1x128/128x128 block scales
//   unfused_dual_gemm_silu  per group two cublasLt GEMMs and an element-wise SiLU-multiply
//   external                not in-process (e.g. PyTorch SDPA, timed by a bench script)
struct BaselineSpec {
  std::string kind;
  std::string description;
  nlohmann::json params;  // like the reference's: strings name buffers or dim expressions
};

struct Family {
  std::string name;
  std::string description;
  std::filesystem::path dir;
  std::vector<DimSpec> dims;
  std::vector<std::string> dtypes;             // "bf16", "fp16"
  std::vector<std::string> shape_constraints;  // checked when a job is submitted
  std::vector<BufferSpec> buffers;
  std::vector<ArgSpec> args;
  ReferenceSpec reference;
  std::optional<BaselineSpec> baseline;  // none: the reference is the baseline
  // dtype -> what a correct output is (per element atol + rtol * |ref| + magnitude * u * m, and
  // max rel_l2); the manifest has one for every dtype it lists.
  std::map<std::string, Tolerance> tolerance;
  // A small ragged shape run before the full one: dim -> expression over the job's dims.
  std::map<std::string, std::string> smoke_shape;
  std::string flops = "0";  // expression over dims
  std::string bytes = "0";  // expression over dims and elem_bytes
  std::vector<TemplateSpec> templates;
  // Every *.cuh / *.h file of the folder and of the shared common/ folder beside it, by file name:
  // passed to NVRTC as headers and hashed into the compile cache key.
  std::vector<std::pair<std::string, std::string>> sources;
  nlohmann::ordered_json manifest;  // as written, in its key order
  // SHA-256 of the manifest and every device source (family_source_hash): a stored result is
  // stale once the family it was tuned with changed. "" for a family built in code.
  std::string source_hash;
  // Registered by a client (POST /v1/families) rather than shipped in a families folder: only
  // such a family may be replaced by a newer version.
  bool registered = false;
};

// The arguments a template's kernel takes: its own list if it has one, else the family's.
const std::vector<ArgSpec>& kernel_args(const Family& family, const TemplateSpec& tmpl);

// The family's tolerance for a job dtype; throws FamilyError naming the family and the dtype when
// it has none (a dtype the family does not list).
const Tolerance& tolerance_for(const Family& family, const std::string& dtype);

// Device sources shared by every family: a folder of this name beside the families, whose headers
// load_family reads as if they were the family's own (a family's file of the same name wins).
inline constexpr const char* kCommonSourcesFolder = "common";

// Reads dir/manifest.json and the sources next to it. Throws FamilyError with the file and the
// reason (missing field, bad expression, unknown buffer in args, ...).
Family load_family(const std::filesystem::path& dir);

// The hash load_family stores in Family::source_hash: the manifest (as parsed, so neither
// whitespace nor key order counts) and each source file's name and text, in name order.
std::string family_source_hash(const Family& family);

// Bytes of one element of a dtype name ("bf16" -> 2, "f32" -> 4); 0 if unknown.
int dtype_bytes(const std::string& dtype);

// Thread-safe: a family registered over the API is added or replaced while jobs and queries read
// the registry. A pointer it hands out stays valid for the registry's life, also after its family
// was replaced by a newer version (a running job keeps the version it started with).
class FamilyRegistry {
 public:
  FamilyRegistry() = default;
  FamilyRegistry(FamilyRegistry&& other) noexcept;
  FamilyRegistry& operator=(FamilyRegistry&& other) noexcept;

  // Loads every subfolder of root holding a manifest.json. Broken families are skipped and
  // reported in errors(), the rest stay usable.
  void load_root(const std::filesystem::path& root);
  // Adds one family; throws FamilyError if the name is taken.
  void add(Family family);
  // Adds a registered family (Family::registered), or replaces the registered family of its name
  // with this version. Throws FamilyError if the name is a shipped family's.
  void put_registered(Family family);
  const Family* find(const std::string& name) const;
  std::vector<const Family*> all() const;
  std::vector<std::string> errors() const;
  void add_error(std::string error);

 private:
  mutable std::shared_mutex mutex_;
  std::vector<std::unique_ptr<Family>> families_;
  std::vector<std::unique_ptr<Family>> replaced_;  // older versions, kept for their readers
  std::vector<std::string> errors_;
};

}  // namespace kt
