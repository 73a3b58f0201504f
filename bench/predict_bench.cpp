// kt-predict-bench: what ranking a never-tuned shape's configs costs in process, apart from HTTP,
// the store and whatever else the host runs (bench/predict_latency.sh times the whole answer
// through the daemon). Fits the shape predictors on recorded spaces as kerntuned does
// (--predictor-spaces), then per family asks ShapePredictors::best_config for shapes drawn as the
// latency bench asks for them (log-uniform dims, fixed seed), each new to it, one at a time (an
// answer's ranking takes the predictors' helper threads, as in the daemon). Prints one JSON object
// on stdout (the fits' log goes to stderr): per family the percentiles, the candidate counts and
// the ten slowest.
// --shapes-only prints the shapes instead ({family: [warm-up shape, then --requests shapes]}), and
// fits nothing: bench/predict_latency.sh asks the daemon for these, so both time the same shapes.
//
//   kt-predict-bench [--spaces tests/data/spaces-2026-12 --spaces tests/data/spaces]
//                    [--families kernel_templates] [--requests 1000] [--seed 20261205]
//                    [--shapes-only]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "db/store.hpp"
#include "engine/shape_predictors.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"
#include "tuner/search/recorded_space_file.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Untuned shapes for a family's predicted answers: log-uniform dims, odd and prime ones among them.
class ShapeDraws {
 public:
  explicit ShapeDraws(std::uint64_t seed) : rng_(seed) {}
  kt::Shape draw(const std::string& family) {
    if (family == "gemm")
      return {{"M", dim(1, 16384)}, {"N", dim(16, 16384)}, {"K", dim(16, 16384)}};
    if (family == "dual_gemm_silu")  // N and K multiples of 8, as the family's dims want
      return {{"G", uniform(1, 8)},
              {"M", dim(1, 1024)},
              {"N", (dim(64, 8192) + 7) / 8 * 8},
              {"K", (dim(64, 8192) + 7) / 8 * 8}};
    return {{"B", uniform(1, 8)},
            {"H", uniform(1, 32)},
            {"S", dim(16, 16384)},
            {"D", uniform(0, 1) ? 128 : 64},
            {"CAUSAL", uniform(0, 1)}};
  }

 private:
  std::int64_t uniform(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(rng_);
  }
  // Log-uniform, so small and large dims both come up.
  std::int64_t dim(std::int64_t low, std::int64_t high) {
    const double bits = std::uniform_real_distribution<double>(
        std::floor(std::log2(static_cast<double>(low))),
        std::floor(std::log2(static_cast<double>(high))) + 1)(rng_);
    return std::clamp<std::int64_t>(std::llround(std::exp2(bits)), low, high);
  }
  std::mt19937_64 rng_;
};

const std::vector<std::string> kFamilies{"gemm", "dual_gemm_silu", "attention_fwd"};

// Per family (in kFamilies' order, from one generator) a warm-up shape, then `requests` shapes.
std::map<std::string, std::vector<kt::Shape>> draw_shapes(std::uint64_t seed,
                                                          std::size_t requests) {
  ShapeDraws draws(seed);
  std::map<std::string, std::vector<kt::Shape>> out;
  for (const std::string& name : kFamilies)
    for (std::size_t i = 0; i <= requests; ++i) out[name].push_back(draws.draw(name));
  return out;
}

double quantile(const std::vector<double>& sorted, double p) {
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(sorted.size() * p))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kt-predict-bench: a predicted answer's ranking, in process"};
  std::vector<std::string> spaces{"tests/data/spaces-2026-12", "tests/data/spaces"};
  std::string families_dir = "kernel_templates";
  std::size_t requests = 1000;
  std::uint64_t seed = 20261205;
  app.add_option("--spaces", spaces, "recorded spaces (folders or files) the predictors fit on");
  app.add_option("--families", families_dir, "family folders");
  app.add_option("--requests", requests, "shapes per family")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", seed, "the shapes' seed");
  bool shapes_only = false;
  app.add_flag("--shapes-only", shapes_only, "print the shapes (JSON) and fit nothing");
  CLI11_PARSE(app, argc, argv);
  const std::map<std::string, std::vector<kt::Shape>> shapes = draw_shapes(seed, requests);
  if (shapes_only) {
    std::cout << nlohmann::json(shapes).dump() << "\n";
    return 0;
  }
  // stdout is the JSON; the predictors' fit log goes beside it.
  spdlog::set_default_logger(spdlog::stderr_color_mt("kt-predict-bench"));
  try {
    kt::FamilyRegistry families;
    families.load_root(families_dir);
    std::vector<kt::RecordedSpace> recorded;
    for (const auto& file : kt::recorded_space_files(spaces))
      recorded.push_back(kt::load_recorded_space(file));
    recorded = kt::newest_recordings(std::move(recorded));  // as kerntuned keeps them
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("kt-predict-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    nlohmann::json out;
    {
      kt::Store store(dir / "kerntune.db");
      const kt::DeviceLimits limits = *kt::limits_for_arch("sm_90a");
      kt::ShapePredictors predictors(store, families, std::move(recorded), {limits});
      const Clock::time_point fit_start = Clock::now();
      predictors.refit_all();
      out["fit_s"] = std::chrono::duration<double>(Clock::now() - fit_start).count();
      for (const std::string& name : kFamilies) {
        const kt::Family* family = families.find(name);
        if (!family || !predictors.model(name, "bf16")) continue;
        const std::vector<kt::Shape>& asked = shapes.at(name);
        // The first answer builds the family's space index: not an answer's cost.
        predictors.best_config(*family, asked.front(), "bf16", limits);
        struct Answer {
          double ms;
          std::size_t candidates;
          kt::Shape shape;
        };
        std::vector<Answer> answers;
        std::size_t unanswered = 0;
        for (std::size_t i = 1; i < asked.size(); ++i) {
          const kt::Shape& shape = asked[i];
          const Clock::time_point start = Clock::now();
          const auto best = predictors.best_config(*family, shape, "bf16", limits);
          const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
          if (!best) {
            ++unanswered;
            continue;
          }
          answers.push_back({ms, best->candidates, shape});
        }
        if (answers.empty()) continue;
        std::sort(answers.begin(), answers.end(),
                  [](const Answer& a, const Answer& b) { return a.ms < b.ms; });
        std::vector<double> ms, candidates;
        for (const Answer& a : answers) ms.push_back(a.ms);
        for (const Answer& a : answers) candidates.push_back(static_cast<double>(a.candidates));
        std::sort(candidates.begin(), candidates.end());
        nlohmann::json slowest = nlohmann::json::array();
        for (std::size_t i = answers.size() - std::min<std::size_t>(10, answers.size());
             i < answers.size(); ++i)
          slowest.push_back({{"ms", answers[i].ms},
                             {"candidates_ranked", answers[i].candidates},
                             {"shape", answers[i].shape}});
        out[name] = {{"answered", answers.size()},
                     {"not_answered", unanswered},
                     {"p50_ms", quantile(ms, 0.5)},
                     {"p90_ms", quantile(ms, 0.9)},
                     {"p99_ms", quantile(ms, 0.99)},
                     {"max_ms", ms.back()},
                     {"candidates_ranked_median", quantile(candidates, 0.5)},
                     {"candidates_ranked_max", candidates.back()},
                     {"slowest", slowest}};
      }
    }
    std::filesystem::remove_all(dir);
    std::cout << out.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kt-predict-bench: " << e.what() << "\n";
    return 1;
  }
}
