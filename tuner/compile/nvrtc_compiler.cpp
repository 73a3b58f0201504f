#include "tuner/compile/nvrtc_compiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <nvrtc.h>

#include "tuner/compile/cubin_resources.hpp"
#include "tuner/compile/nvrtc_program.hpp"
#include "tuner/compile/sha256.hpp"

namespace kt {
namespace {

// Bump when anything compile_kernel adds to a request changes, so old cache entries miss.
constexpr const char* kCompileRecipe = "kerntune-compile-v1";

std::vector<std::string> fixed_options(const std::string& arch) {
  return {"--gpu-architecture=" + arch, "-std=c++17", "--ptxas-options=-v", "-default-device"};
}

// "registers: ptxas log 40, cubin 42" for each figure the log gives differently.
std::string disagreements(const ResourceUsage& log, const ResourceUsage& cubin) {
  std::string text;
  const auto compare = [&](const char* what, int from_log, int from_cubin) {
    if (from_log >= 0 && from_log != from_cubin)
      text += std::string(text.empty() ? "" : "; ") + what + ": ptxas log " +
              std::to_string(from_log) + ", cubin " + std::to_string(from_cubin);
  };
  compare("registers", log.registers, cubin.registers);
  compare("static shared memory", log.static_smem_bytes, cubin.static_smem_bytes);
  compare("stack frame", log.stack_frame_bytes, cubin.stack_frame_bytes);
  return text;
}

}  // namespace

ResourceReport kernel_resources(const std::vector<char>& cubin, const std::string& kernel,
                                const std::string& ptxas_log) {
  const CubinKernelResources facts = read_cubin_resources(cubin, kernel);
  if (facts.registers <= 0)
    throw CubinError("cubin gives '" + kernel + "' " + std::to_string(facts.registers) +
                     " registers; every compiled kernel uses some");
  ResourceReport report;
  ResourceUsage& usage = report.usage;
  usage.registers = facts.registers;
  usage.static_smem_bytes = facts.static_smem_bytes;
  usage.stack_frame_bytes = facts.stack_frame_bytes;
  usage.const_bytes = facts.const_bytes;
  const ResourceUsage logged = parse_ptxas_report(ptxas_log, kernel);
  const bool log_has_spills = logged.spill_store_bytes >= 0 && logged.spill_load_bytes >= 0;
  const int unknown_spills = facts.stack_frame_bytes == 0 ? 0 : -1;
  usage.spill_store_bytes = log_has_spills ? logged.spill_store_bytes : unknown_spills;
  usage.spill_load_bytes = log_has_spills ? logged.spill_load_bytes : unknown_spills;
  report.disagreement = disagreements(logged, usage);
  return report;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  const nvrtcResult result = nvrtcVersion(&major, &minor);
  if (result != NVRTC_SUCCESS)
    throw NvrtcError(std::string("nvrtcVersion failed: ") + nvrtcGetErrorString(result));
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string compile_cache_key(const CompileRequest& request) {
  Sha256 hash;
  hash.update_field(kCompileRecipe);
  hash.update_field(nvrtc_version());
  hash.update_field(request.arch);
  hash.update_field(request.kernel);
  hash.update_field(request.source_name);
  hash.update_field(request.source);
  hash.update_field("headers=" + std::to_string(request.headers.size()));
  for (const auto& [name, text] : request.headers) {
    hash.update_field(name);
    hash.update_field(text);
  }
  const std::vector<std::string> options = fixed_options(request.arch);
  hash.update_field("options=" + std::to_string(options.size() + request.options.size()));
  for (const std::string& option : options) hash.update_field(option);
  for (const std::string& option : request.options) hash.update_field(option);
  return hash.hex_digest();
}

std::optional<std::filesystem::path> cuda_include_dir() {
  static const std::optional<std::filesystem::path> found =
      []() -> std::optional<std::filesystem::path> {
    std::vector<std::filesystem::path> candidates;
    if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
      candidates.emplace_back(std::filesystem::path(home) / "include");
#ifdef KT_CUDA_INCLUDE_DIR
    candidates.emplace_back(KT_CUDA_INCLUDE_DIR);
#endif
    candidates.emplace_back("/usr/local/cuda/include");
    for (const auto& dir : candidates) {
      std::error_code ignored;
      if (std::filesystem::exists(dir / "cuda_fp16.h", ignored)) return dir;
    }
    return std::nullopt;
  }();
  return found;
}

// The ELF string table holds every symbol name NUL-delimited; an extern "C" kernel appears
// under its own name. (The ptxas report is not a reliable witness: some NVRTC builds leave the
// program log empty even with --ptxas-options=-v.)
bool cubin_names_entry(const std::vector<char>& cubin, const std::string& kernel) {
  std::string needle(1, '\0');
  needle += kernel;
  needle += '\0';
  return std::search(cubin.begin(), cubin.end(), needle.begin(), needle.end()) != cubin.end();
}

CompileResult compile_kernel(const CompileRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  CompileResult result;
  result.key = compile_cache_key(request);
  std::vector<std::string> options = fixed_options(request.arch);
  options.insert(options.end(), request.options.begin(), request.options.end());
  // Not in the cache key: the NVRTC version (in the key) names the toolkit these headers are of.
  if (const auto include = cuda_include_dir())
    options.push_back("--include-path=" + include->string());
  try {
    NvrtcProgram program(request.source, request.source_name, request.headers);
    const std::string failure = program.compile(options);
    const std::string log = program.log();
    if (!failure.empty()) {
      result.log = "nvrtcCompileProgram failed (" + failure + ") for " + request.source_name +
                   " on " + request.arch + ":\n" + log;
    } else {
      result.cubin = program.cubin();
      result.log = log;
      if (result.cubin.empty()) {
        result.log = "NVRTC returned an empty cubin:\n" + log;
      } else if (!cubin_names_entry(result.cubin, request.kernel)) {
        result.log = "entry point '" + request.kernel + "' is not in the compiled program " +
                     "(missing, or not extern \"C\"):\n" + log;
        result.cubin.clear();
      } else {
        try {
          const ResourceReport report = kernel_resources(result.cubin, request.kernel, log);
          result.resources = report.usage;
          if (!report.disagreement.empty())
            result.log += "\nkerntune: the ptxas log and the cubin disagree (" +
                          report.disagreement + "); the cubin's figures are kept\n";
          result.ok = true;
        } catch (const CubinError& e) {
          // A kernel whose resources cannot be told must not pass the resource gate unseen.
          result.log = std::string("error reading the kernel's resources from its cubin: ") +
                       e.what() + "\n" + log;
          result.cubin.clear();
        }
      }
    }
  } catch (const NvrtcError& e) {
    result.ok = false;
    result.cubin.clear();
    result.log = std::string(e.what()) + (result.log.empty() ? "" : "\n" + result.log);
  }
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kt
