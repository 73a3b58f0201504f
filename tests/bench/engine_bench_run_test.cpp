#include "bench/engine_bench_run.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt::bench {
namespace {

EngineBenchOptions parse(std::vector<std::string> args) {
  CLI::App app;
  EngineBenchOptions options;
  add_engine_bench_options(app, options);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  finish_engine_bench_options(options);
  return options;
}

TEST(EngineBenchOptions, Defaults) {
  const EngineBenchOptions options = parse({});
  EXPECT_EQ(options.phases, (std::vector<std::string>{"spread", "repeat", "sweep"}));
  EXPECT_EQ(options.spread_shape, (GemmShape{4096, 4096, 4096}));
  EXPECT_EQ(options.spread_runs, 10);
  EXPECT_TRUE(options.spread_config.is_null());
  EXPECT_EQ(options.repeat_shape, (GemmShape{2048, 2048, 2048}));
  EXPECT_EQ(options.sweep_budget, 24);
  EXPECT_TRUE(options.kerntuned.empty());
}

TEST(EngineBenchOptions, PhasesShapesAndPinnedConfig) {
  const EngineBenchOptions options =
      parse({"--phases", "sweep,spread", "--spread-shape", "2048x2048x2048", "--spread-config",
             R"({"template":"wgmma_ws","BM":128})", "--sweep-budget", "8", "--repeat-budget", "0"});
  EXPECT_EQ(options.phases, (std::vector<std::string>{"sweep", "spread"}));
  EXPECT_EQ(options.spread_shape, (GemmShape{2048, 2048, 2048}));
  EXPECT_EQ(options.spread_config.at("template"), "wgmma_ws");
  EXPECT_EQ(options.sweep_budget, 8);
  EXPECT_EQ(options.repeat_budget, 0);
}

TEST(EngineBenchOptions, RefusesBadInput) {
  EXPECT_THROW(parse({"--phases", "spread,speed"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--phases", "spread,sweep,spread"}), std::invalid_argument);
  EXPECT_THROW(parse({"--spread-runs", "1"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--sweep-budget", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--spread-config", "{not json"}), std::invalid_argument);
  EXPECT_THROW(parse({"--spread-config", R"({"BM":128})"}), std::invalid_argument);
  EXPECT_THROW(parse({"--repeat-shape", "2048x2048x2048:8"}), std::invalid_argument);
  EXPECT_THROW(parse({"--kerntuned", "/no/such/kerntuned"}), CLI::ValidationError);
}

}  // namespace
}  // namespace kt::bench
