// kt-compile-process-bench: what compiling in a child process (engine/compile_client.hpp) costs
// against NVRTC in-process, on this machine. The first N surviving variants of a family's space
// for one shape are compiled both ways, interleaved (in-process first for even variants, the child
// first for odd ones, so neither side always runs warm), on one thread. Prints one JSON object:
// per-variant wall times of both ways, their medians and sums, the child's median overhead, and
// whether every cubin and resource report came out the same.
//
//   kt-compile-process-bench [--family gemm] [--shape M=4096,N=4096,K=4096] [--dtype bf16]
//                            [--arch sm_90a] [--variants 24] [--worker build/bin/kerntune-worker]
#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/compile_client.hpp"
#include "tuner/compile/compile_protocol.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/median.hpp"
#include "tuner/paths.hpp"
#include "tuner/variant_space.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// 0 for no samples: a report of a run that timed nothing.
double median_or_zero(const std::vector<double>& values) {
  return values.empty() ? 0 : kt::median(values);
}

double sum(const std::vector<double>& values) {
  double total = 0;
  for (double v : values) total += v;
  return total;
}

kt::Shape parse_shape(const std::string& text) {
  kt::Shape shape;
  std::istringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("shape entry without '=': " + part);
    shape[part.substr(0, eq)] = std::stoll(part.substr(eq + 1));
  }
  return shape;
}

bool same_resources(const kt::ResourceUsage& a, const kt::ResourceUsage& b) {
  return a.registers == b.registers && a.spill_store_bytes == b.spill_store_bytes &&
         a.spill_load_bytes == b.spill_load_bytes && a.stack_frame_bytes == b.stack_frame_bytes &&
         a.static_smem_bytes == b.static_smem_bytes && a.const_bytes == b.const_bytes;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"NVRTC in-process against NVRTC in a compile process, interleaved"};
  std::string family_name = "gemm", shape_text = "M=4096,N=4096,K=4096", dtype = "bf16",
              arch = "sm_90a";
  int variants = 24;
  std::filesystem::path worker = kt::default_worker_path();
  std::filesystem::path families = kt::default_families_dir();
  app.add_option("--family", family_name)->capture_default_str();
  app.add_option("--shape", shape_text)->capture_default_str();
  app.add_option("--dtype", dtype)->capture_default_str();
  app.add_option("--arch", arch)->capture_default_str();
  app.add_option("--variants", variants)->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--worker", worker, "kerntune-worker")->capture_default_str();
  app.add_option("--families", families)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const kt::Family family = kt::load_family(families / family_name);
    const auto limits = kt::limits_for_arch(arch);
    if (!limits) throw std::invalid_argument("unknown arch " + arch);
    std::vector<kt::CompileRequest> requests;
    kt::for_each_variant(
        family, parse_shape(shape_text), dtype, *limits, [&](const kt::VariantPlan& plan) {
          if (plan.pruned_by || plan.unsupported_arch ||
              static_cast<int>(requests.size()) >= variants)
            return;
          requests.push_back(kt::compile_request(family, *plan.tmpl, plan.config, dtype, *limits));
        });
    if (requests.empty()) throw std::runtime_error("no variant survives for this shape and arch");

    kt::CompileClient client({worker});
    std::vector<double> in_process_ms, child_ms;
    int identical = 0, failed = 0;
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      kt::CompileResult local;
      kt::CompileReply remote;
      double local_ms = 0, remote_ms = 0;
      const auto run_local = [&] {
        const auto start = Clock::now();
        local = kt::compile_kernel(requests[i]);
        local_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      };
      const auto run_child = [&] {
        const auto start = Clock::now();
        remote = client.compile(requests[i]);
        remote_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      };
      if (i % 2 == 0)
        run_local(), run_child();
      else
        run_child(), run_local();
      const bool answered = remote.outcome == kt::CompileReply::Outcome::answered;
      if (!answered || !local.ok || !remote.result.ok) ++failed;
      if (answered && remote.result.cubin == local.cubin &&
          same_resources(remote.result.resources, local.resources))
        ++identical;
      in_process_ms.push_back(local_ms);
      child_ms.push_back(remote_ms);
      rows.push_back({{"in_process_ms", local_ms},
                      {"child_ms", remote_ms},
                      {"registers", local.resources.registers},
                      {"cubin_bytes", local.cubin.size()}});
    }
    std::vector<double> overhead;
    for (std::size_t i = 0; i < child_ms.size(); ++i)
      overhead.push_back(child_ms[i] - in_process_ms[i]);
    const nlohmann::json report = {
        {"family", family_name},
        {"shape", shape_text},
        {"dtype", dtype},
        {"arch", arch},
        {"variants", requests.size()},
        {"request_bytes", kt::to_json(requests.front()).dump().size()},
        {"request_bytes_headers_held", kt::to_json(requests.front(), false).dump().size()},
        {"compile_process_starts", client.starts()},
        {"identical_cubin_and_resources", identical},
        {"failed", failed},
        {"in_process_median_ms", median_or_zero(in_process_ms)},
        {"child_median_ms", median_or_zero(child_ms)},
        {"in_process_total_ms", sum(in_process_ms)},
        {"child_total_ms", sum(child_ms)},
        {"child_minus_in_process_median_ms", median_or_zero(overhead)},
        {"child_over_in_process_total", sum(child_ms) / sum(in_process_ms)},
        {"per_variant", rows}};
    std::cout << report.dump(2) << std::endl;
    return failed == 0 && identical == static_cast<int>(requests.size()) ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "kt-compile-process-bench: " << e.what() << std::endl;
    return 2;
  }
}
