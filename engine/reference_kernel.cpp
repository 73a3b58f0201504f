#include "engine/reference_kernel.hpp"

#include <atomic>
#include <fstream>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family_baseline.hpp"

namespace kt {

std::filesystem::path prepare_reference_kernel(const KernelLookup& cached,
                                               const KernelCompiler& compile, Store& store,
                                               const Family& family, const std::string& dtype,
                                               const DeviceLimits& limits,
                                               const std::filesystem::path& work_dir) {
  const CompileRequest request = reference_compile_request(family, dtype, limits);
  const std::string key = compile_cache_key(request);
  std::vector<char> cubin;
  if (auto blob = cached(key); blob && !blob->cubin.empty()) {
    cubin = std::move(blob->cubin);
  } else {
    CompileReply reply = compile(request);
    CompileResult result = std::move(reply.result);
    if (reply.outcome != CompileReply::Outcome::answered)
      throw std::runtime_error("the reference kernel " + request.kernel + " (" +
                               request.source_name + ") of family '" + family.name +
                               "' could not be compiled for " + limits.arch + " " + dtype + ": " +
                               reply.reason);
    if (!result.ok)
      throw std::runtime_error("the reference kernel " + request.kernel + " (" +
                               request.source_name + ") of family '" + family.name +
                               "' does not compile for " + limits.arch + " " + dtype +
                               "; NVRTC log:\n" + result.log);
    spdlog::info("family {}: reference kernel {} compiled for {} {} in {:.0f} ms", family.name,
                 request.kernel, limits.arch, dtype, result.compile_ms);
    store.put_kernel({key, limits.arch, request.kernel, nvrtc_version(), result.cubin, result.log,
                      result.resources});
    cubin = std::move(result.cubin);
  }
  // The magnitude kernel shares the reference's source and cubin: one missing (or not extern "C")
  // fails here, before a worker would find out on a GPU.
  if (family.reference.magnitude && !cubin_names_entry(cubin, family.reference.magnitude->kernel))
    throw std::runtime_error("the reference source " + request.source_name + " of family '" +
                             family.name + "' has no magnitude kernel '" +
                             family.reference.magnitude->kernel +
                             "' (reference.magnitude.kernel: missing, or not extern \"C\")");
  std::filesystem::create_directories(work_dir);
  const auto path = work_dir / (key + ".cubin");
  if (std::filesystem::exists(path)) return path;
  static std::atomic<int> writers{0};  // jobs of one daemon may write the same kernel at once
  const auto partial =
      work_dir / (key + ".cubin.partial.reference." + std::to_string(writers.fetch_add(1)));
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, path);
  return path;
}

void attach_reference_kernel(ProblemInstance& problem, const std::filesystem::path& cubin) {
  if (problem.reference.kind == "kernel") problem.reference.params["cubin_path"] = cubin.string();
}

}  // namespace kt
