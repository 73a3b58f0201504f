#include "bench/bench_family.hpp"

#include <stdexcept>

#include "bench/attention_bench_run.hpp"
#include "bench/dual_gemm_bench_run.hpp"
#include "bench/engine_bench_run.hpp"
#include "bench/gemm_bench_run.hpp"

namespace kt::bench {
namespace {

// A family as its options and its three functions (declare, check, run) make it.
template <class Options, void (*Add)(CLI::App&, Options&), void (*Finish)(Options&),
          int (*Run)(const Options&, std::ostream&)>
class FamilyOf : public BenchFamily {
 public:
  void add_options(CLI::App& app) override { Add(app, options_); }
  void finish_options() override { Finish(options_); }
  int run(std::ostream& log) override { return Run(options_, log); }

 private:
  Options options_;
};

using GemmFamily =
    FamilyOf<GemmBenchOptions, add_gemm_bench_options, finish_gemm_bench_options, run_gemm_bench>;
using AttentionFamily = FamilyOf<AttentionBenchOptions, add_attention_bench_options,
                                 finish_attention_bench_options, run_attention_bench>;
using DualGemmFamily = FamilyOf<DualGemmBenchOptions, add_dual_gemm_bench_options,
                                finish_dual_gemm_bench_options, run_dual_gemm_bench>;
using EngineFamily = FamilyOf<EngineBenchOptions, add_engine_bench_options,
                              finish_engine_bench_options, run_engine_bench>;

}  // namespace

std::vector<std::string> bench_family_names() {
  return {"gemm", "attention", "dual-gemm", "engine"};
}

std::unique_ptr<BenchFamily> make_bench_family(const std::string& name) {
  if (name == "gemm") return std::make_unique<GemmFamily>();
  if (name == "attention") return std::make_unique<AttentionFamily>();
  if (name == "dual-gemm") return std::make_unique<DualGemmFamily>();
  if (name == "engine") return std::make_unique<EngineFamily>();
  std::string known;
  for (const std::string& family : bench_family_names())
    known += (known.empty() ? "" : ", ") + family;
  throw std::invalid_argument("unknown benchmark family '" + name + "' (known: " + known + ")");
}

}  // namespace kt::bench
