// kt-replay: searchers against recorded whole spaces, on the CPU. For each searcher, over every
// space and seed: the fraction of the space measured before the best found is within 3% (by
// default) of the space's optimum, its median and 90th percentile, and the evaluations relative
// to random search. --expect fails (exit 1) when the named searcher does worse than stored figures.
// --warm-start seeds the learning searchers of each space with the fastest configs of the nearest
// other spaces given (as a job is warm-started from the nearest tuned shapes); random stays cold,
// the yardstick. --families DIR tells the searchers each candidate's grid and whether the shape
// is memory-bound (launch formulas and flops/bytes of DIR/<family>/manifest.json), as a job is
// told; without it they know neither, as before. --budget N adds the best found within N measured
// variants, relative to the space's optimum. --predict (with --families) runs no searcher: for
// each space, the shape predictor fitted on the family's other shapes ranks its variants, and the
// table gives the gap to the optimum of the first measured in that order and of the best within
// the first 8 and 16 (tuner/search/shape_predictor.hpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tuner/search/launch_facts.hpp"
#include "tuner/search/recorded_space_file.hpp"
#include "tuner/search/replay.hpp"
#include "tuner/search/shape_predictor.hpp"

namespace fs = std::filesystem;

namespace {

struct SearcherFigures {
  std::vector<double> fractions;                     // every (space, seed)
  std::vector<double> at_budget;                     // best within --budget / optimum, ditto
  std::map<std::string, double> median_evaluations;  // per space
  std::size_t runs = 0, reached = 0;
};

// --predict: leave-one-shape-out checks of the shape predictor per family, summed up per family
// and per family and GPU model; 0 when every family with more than one shape got its checks.
// With `expect` ({family: {max_median_first, max_p90_first, max_median_best_of_16,
// max_median_searched_8, max_p90_searched_8, max_median_searched_16}}): 1 when a family's
// figures are worse.
struct PredictionFigures {
  std::vector<double> first, of8, of16, searched8, searched16, nearest, random, cross_first, cross8;
  std::size_t stopped = 0;
  void add(const kt::search::PredictionCheck& c) {
    first.push_back(c.gap_first);
    of8.push_back(c.gap_best_of_8);
    of16.push_back(c.gap_best_of_16);
    searched8.push_back(c.gap_searched_8);
    searched16.push_back(c.gap_searched_16);
    if (c.gap_nearest) nearest.push_back(*c.gap_nearest);
    random.push_back(c.mean_gap);
    if (c.gap_first_other_gpus) cross_first.push_back(*c.gap_first_other_gpus);
    if (c.gap_best_of_8_other_gpus) cross8.push_back(*c.gap_best_of_8_other_gpus);
    stopped += c.searched_stop_measured ? 1 : 0;
  }
};

std::string median_p90(const std::vector<double>& v) {
  if (v.empty()) return "—";
  return fmt::format("{:+.1f}% / {:+.1f}%", 100 * kt::quantile(v, 0.5), 100 * kt::quantile(v, 0.9));
}

std::string percent(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100 * *v) : std::string("—");
}

int run_predictions(std::vector<kt::RecordedSpace> spaces, const std::string& families_dir,
                    const std::string& json_out, const nlohmann::json& expect) {
  int status = 0;
  std::map<std::string, std::vector<kt::RecordedSpace>> by_family;
  for (kt::RecordedSpace& s : spaces) by_family[s.family].push_back(std::move(s));
  nlohmann::json out = nlohmann::json::array();
  std::map<std::pair<std::string, std::string>, PredictionFigures> per_model;
  std::map<std::string, PredictionFigures> per_family;
  std::cout << "| space | variants | predicted first | best of 8 ranked | searched: best of 8 | "
               "searched: best of 16 | searched: stopped at | first, fitted on other GPUs | "
               "nearest shape's config | a random config (mean) |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (auto& [name, family_spaces] : by_family) {
    const kt::Family family = kt::load_family(fs::path(families_dir) / name);
    for (const kt::search::PredictionCheck& c :
         kt::search::leave_one_shape_out(family, family_spaces)) {
      std::cout << fmt::format(
          "| {} | {} | {:+.1f}% | {:+.1f}% | {:+.1f}% | {:+.1f}% | {} | {} | {} | {:+.1f}% |\n",
          c.space, c.variants, 100 * c.gap_first, 100 * c.gap_best_of_8, 100 * c.gap_searched_8,
          100 * c.gap_searched_16,
          c.searched_stop_measured
              ? fmt::format("{} ({:+.1f}%)", *c.searched_stop_measured, 100 * *c.searched_stop_gap)
              : std::string("—"),
          percent(c.gap_first_other_gpus), percent(c.gap_nearest), 100 * c.mean_gap);
      per_family[name].add(c);
      per_model[{name, c.device}].add(c);
      const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
      out.push_back({{"space", c.space},
                     {"family", name},
                     {"device", c.device},
                     {"variants", c.variants},
                     {"gap_first", c.gap_first},
                     {"gap_best_of_8", c.gap_best_of_8},
                     {"gap_best_of_16", c.gap_best_of_16},
                     {"gap_searched_8", c.gap_searched_8},
                     {"gap_searched_16", c.gap_searched_16},
                     {"searched_stop_measured", opt(c.searched_stop_measured)},
                     {"searched_stop_gap", opt(c.searched_stop_gap)},
                     {"gap_first_other_gpus", opt(c.gap_first_other_gpus)},
                     {"gap_best_of_8_other_gpus", opt(c.gap_best_of_8_other_gpus)},
                     {"rank_of_optimum", c.rank_of_optimum},
                     {"gap_nearest", opt(c.gap_nearest)},
                     {"mean_gap", c.mean_gap}});
    }
  }
  std::cout << "\nmedian / p90 of the gap to each space's optimum, leave one shape out:\n\n"
               "| family | GPU | spaces | predicted first | best of 8 ranked | searched: best of 8 "
               "| searched: best of 16 | searcher stopped itself | first, fitted on other GPUs | "
               "best of 8 ranked, fitted on other GPUs | nearest shape's config | a random config "
               "(mean) |\n"
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  const auto row = [](const std::string& family, const std::string& gpu,
                      const PredictionFigures& f) {
    std::cout << fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} of {} | {} | {} | {} | {} |\n", family, gpu,
        f.first.size(), median_p90(f.first), median_p90(f.of8), median_p90(f.searched8),
        median_p90(f.searched16), f.stopped, f.first.size(), median_p90(f.cross_first),
        median_p90(f.cross8), median_p90(f.nearest), median_p90(f.random));
  };
  for (const auto& [name, f] : per_family) {
    row(name, "all", f);
    for (const auto& [key, g] : per_model)
      if (key.first == name) row(name, key.second, g);
  }
  for (const auto& [name, f] : per_family) {
    if (!expect.contains(name)) continue;
    const nlohmann::json& e = expect.at(name);
    const std::vector<std::pair<const char*, double>> figures{
        {"max_median_first", kt::quantile(f.first, 0.5)},
        {"max_p90_first", kt::quantile(f.first, 0.9)},
        {"max_median_best_of_16", kt::quantile(f.of16, 0.5)},
        {"max_median_searched_8", kt::quantile(f.searched8, 0.5)},
        {"max_p90_searched_8", kt::quantile(f.searched8, 0.9)},
        {"max_median_searched_16", kt::quantile(f.searched16, 0.5)}};
    for (const auto& [key, value] : figures)
      if (e.contains(key) && value > e.at(key).get<double>()) {
        std::cout << fmt::format("FAIL {}: {} is {:.4f}, above the expected {:.4f}\n", name, key,
                                 value, e.at(key).get<double>());
        status = 1;
      }
  }
  if (!json_out.empty()) std::ofstream(json_out) << out.dump(1) << "\n";
  return out.empty() ? 1 : status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kt-replay: searchers against recorded whole spaces (no GPU)"};
  std::vector<std::string> spaces;
  std::vector<std::string> searchers;
  int seeds = 20;
  kt::ReplayOptions options;
  std::string json_out, expect_file;
  bool no_facts = false;
  bool warm_start = false;
  std::string families_dir, memory_bound = "auto";
  bool predict = false;
  app.add_option("spaces", spaces, "space files (kerntune-space/1) or folders of them")->required();
  app.add_option("--searcher", searchers, "searchers to run (default: all)");
  app.add_option("--seeds", seeds, "seeds per space and searcher")->check(CLI::Range(1, 100000));
  app.add_option("--batch", options.batch, "variants proposed at a time")
      ->check(CLI::Range(1, 4096));
  app.add_option("--within", options.within, "target: within this fraction of the optimum")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--no-facts", no_facts,
               "resource reports known only once a variant is compiled (not up front)");
  app.add_flag("--warm-start", warm_start,
               "seed local/model with the nearest other spaces' fastest configs (2 shapes, 4 "
               "each)");
  app.add_option("--families", families_dir,
                 "family folders: tell the searchers each candidate's grid and whether the shape "
                 "is memory-bound, from DIR/<family>/manifest.json");
  app.add_option("--memory-bound", memory_bound,
                 "with --families: auto (from the shape and device), yes or no for every space")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  app.add_option("--budget", options.budget,
                 "also report the best found within this many measured variants");
  app.add_flag("--predict", predict,
               "no searcher: leave-one-shape-out checks of the shape predictor (needs --families)");
  app.add_option("--json", json_out, "write the figures here as JSON");
  app.add_option("--expect", expect_file,
                 "fail when worse than these figures ({searcher, max_median_fraction, "
                 "max_p90_fraction, max_vs_random})");
  CLI11_PARSE(app, argc, argv);
  options.facts_known = !no_facts;
  if (searchers.empty()) searchers = kt::searcher_names();
  if (std::find(searchers.begin(), searchers.end(), "random") == searchers.end())
    searchers.push_back("random");  // the yardstick

  try {
    std::vector<std::pair<std::string, kt::RecordedSpace>> loaded;
    for (const fs::path& file : kt::recorded_space_files(spaces)) {
      loaded.emplace_back(file.filename().string(), kt::load_recorded_space(file));
      if (!loaded.back().second.optimum_us())
        throw std::runtime_error(file.string() + ": no measured variant (not a tuned space)");
    }
    if (loaded.empty()) throw std::runtime_error("no space files found");
    if (predict) {
      if (families_dir.empty()) throw std::runtime_error("--predict needs --families DIR");
      std::vector<kt::RecordedSpace> spaces;
      for (auto& entry : loaded) spaces.push_back(std::move(entry.second));
      const std::size_t given = spaces.size();
      spaces = kt::newest_recordings(std::move(spaces));
      if (spaces.size() < given)
        std::cout << fmt::format(
            "{} of {} spaces left out: a newer recording of the same problem (family, dtype, GPU "
            "model, shape) is given\n\n",
            given - spaces.size(), given);
      nlohmann::json expect = nlohmann::json::object();
      if (!expect_file.empty()) expect = nlohmann::json::parse(std::ifstream(expect_file));
      return run_predictions(std::move(spaces), families_dir, json_out, expect);
    }

    std::map<std::string, SearcherFigures> figures;
    nlohmann::json per_space = nlohmann::json::array();
    std::vector<const kt::RecordedSpace*> all;
    std::map<std::string, kt::SearchProblem> problems;  // per space file
    std::map<std::string, kt::Family> families;
    for (auto& [name, space] : loaded) {
      all.push_back(&space);
      if (families_dir.empty()) continue;
      auto family = families.find(space.family);
      if (family == families.end())
        family =
            families.emplace(space.family, kt::load_family(fs::path(families_dir) / space.family))
                .first;
      kt::SearchProblem& problem = problems[name] = kt::add_launch_facts(space, family->second);
      if (memory_bound != "auto") problem.memory_bound = memory_bound == "yes";
    }
    for (const auto& [name, space] : loaded) {
      std::cout << fmt::format("{}: {} variants, optimum {:.1f} us\n", name, space.variants.size(),
                               *space.optimum_us());
      options.problem = problems.count(name) ? problems.at(name) : kt::SearchProblem{};
      if (!families_dir.empty()) {
        std::size_t one_wave = 0, unknown = 0;
        for (const kt::RecordedVariant& v : space.variants) {
          one_wave += kt::fills_one_wave(v.candidate, options.problem) ? 1 : 0;
          unknown += v.candidate.grid_blocks == 0 ? 1 : 0;
        }
        std::cout << fmt::format("  {} on {} SMs: {} candidates fill one wave, {} grids unknown\n",
                                 options.problem.memory_bound ? "memory-bound" : "compute-bound",
                                 options.problem.sm_count, one_wave, unknown);
      }
      options.seeds.clear();
      if (warm_start) {
        options.seeds = kt::warm_start_seeds(space, all);
        std::cout << fmt::format("  warm start: {} seeds from the nearest other spaces\n",
                                 options.seeds.size());
      }
      for (const std::string& searcher : searchers) {
        std::vector<double> evaluations, fractions, at_budget;
        SearcherFigures& f = figures[searcher];
        for (int seed = 1; seed <= seeds; ++seed) {
          const kt::ReplayRun run =
              kt::replay(space, searcher, static_cast<std::uint64_t>(seed), options);
          evaluations.push_back(static_cast<double>(run.evaluations));
          fractions.push_back(run.fraction());
          f.fractions.push_back(run.fraction());
          if (run.best_at_budget_us) {
            at_budget.push_back(*run.best_at_budget_us / *space.optimum_us());
            f.at_budget.push_back(at_budget.back());
          }
          ++f.runs;
          f.reached += run.reached ? 1 : 0;
        }
        f.median_evaluations[name] = kt::quantile(evaluations, 0.5);
        std::cout << fmt::format(
            "  {:<10} median {:5.1f}% of the space ({:.0f} variants), p90 "
            "{:5.1f}%\n",
            searcher, 100 * kt::quantile(fractions, 0.5), f.median_evaluations[name],
            100 * kt::quantile(fractions, 0.9));
        nlohmann::json row{{"space", name},
                           {"searcher", searcher},
                           {"median_fraction", kt::quantile(fractions, 0.5)},
                           {"p90_fraction", kt::quantile(fractions, 0.9)},
                           {"median_evaluations", f.median_evaluations[name]}};
        if (!at_budget.empty()) {
          std::cout << fmt::format(
              "  {:<10} best within {} measured: median {:.3f}x the optimum, worst {:.3f}x\n", "",
              options.budget, kt::quantile(at_budget, 0.5), kt::quantile(at_budget, 1.0));
          row["budget_median_ratio"] = kt::quantile(at_budget, 0.5);
          row["budget_worst_ratio"] = kt::quantile(at_budget, 1.0);
        }
        per_space.push_back(std::move(row));
      }
    }

    std::cout << fmt::format(
        "\nover {} spaces x {} seeds (batch {}, target within {:.0f}% of the optimum{}{}{}):\n",
        loaded.size(), seeds, options.batch, 100 * options.within,
        options.facts_known ? "" : ", resource reports only once compiled",
        warm_start ? ", learners warm-started from the nearest other spaces" : "",
        families_dir.empty() ? "" : ", grids and memory-bound shapes known");
    const bool budgeted = options.budget > 0;
    std::cout << "| searcher | median fraction | p90 fraction | evaluations vs random |"
              << (budgeted ? fmt::format(" best within {} / optimum: median, p90, worst |",
                                         options.budget)
                           : std::string())
              << "\n| --- | --- | --- | --- |" << (budgeted ? " --- |" : "") << "\n";
    nlohmann::json summary = nlohmann::json::object();
    const SearcherFigures& random = figures["random"];
    for (const std::string& searcher : searchers) {
      const SearcherFigures& f = figures[searcher];
      double ours = 0, theirs = 0;  // per-space medians, summed
      for (const auto& [name, evals] : f.median_evaluations) {
        ours += evals;
        theirs += random.median_evaluations.at(name);
      }
      const double vs_random = theirs > 0 ? ours / theirs : 0;
      const double median = kt::quantile(f.fractions, 0.5), p90 = kt::quantile(f.fractions, 0.9);
      std::cout << fmt::format("| {} | {:.1f}% | {:.1f}% | {:.2f}x |", searcher, 100 * median,
                               100 * p90, vs_random);
      summary[searcher] = {{"median_fraction", median},
                           {"p90_fraction", p90},
                           {"vs_random", vs_random},
                           {"runs", f.runs},
                           {"reached", f.reached}};
      if (budgeted) {
        std::cout << fmt::format(" {:.3f}x, {:.3f}x, {:.3f}x |", kt::quantile(f.at_budget, 0.5),
                                 kt::quantile(f.at_budget, 0.9), kt::quantile(f.at_budget, 1.0));
        summary[searcher]["budget_median_ratio"] = kt::quantile(f.at_budget, 0.5);
        summary[searcher]["budget_p90_ratio"] = kt::quantile(f.at_budget, 0.9);
        summary[searcher]["budget_worst_ratio"] = kt::quantile(f.at_budget, 1.0);
      }
      std::cout << "\n";
    }
    if (!json_out.empty()) {
      std::ofstream out(json_out);
      out << nlohmann::json{{"seeds", seeds},
                            {"batch", options.batch},
                            {"within", options.within},
                            {"facts_known", options.facts_known},
                            {"warm_start", warm_start},
                            {"budget", options.budget},
                            {"families", !families_dir.empty()},
                            {"memory_bound", memory_bound},
                            {"summary", summary},
                            {"per_space", per_space}}
                 .dump(1)
          << "\n";
    }
    if (!expect_file.empty()) {
      std::ifstream in(expect_file);
      if (!in) throw std::runtime_error("cannot read " + expect_file);
      const nlohmann::json expect = nlohmann::json::parse(in);
      const std::string searcher = expect.at("searcher").get<std::string>();
      if (!summary.contains(searcher))
        throw std::runtime_error("--expect names '" + searcher + "', which did not run");
      bool ok = true;
      for (const auto& [figure, limit] : {std::pair{"median_fraction", "max_median_fraction"},
                                          std::pair{"p90_fraction", "max_p90_fraction"},
                                          std::pair{"vs_random", "max_vs_random"}}) {
        if (!expect.contains(limit)) continue;
        const double got = summary[searcher][figure].get<double>();
        const double max = expect.at(limit).get<double>();
        if (got > max) {
          std::cerr << fmt::format("REGRESSION: {} {} is {:.4f}, above {:.4f} ({})\n", searcher,
                                   figure, got, max, expect_file);
          ok = false;
        }
      }
      if (!ok) return 1;
      std::cout << fmt::format("{}: within the expected figures of {}\n", searcher, expect_file);
    }
  } catch (const std::exception& e) {
    std::cerr << "kt-replay: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
