#include "bench/bench_family.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt::bench {
namespace {

TEST(BenchFamily, EveryNamedFamilyDeclaresItsOptions) {
  EXPECT_EQ(bench_family_names(),
            (std::vector<std::string>{"gemm", "attention", "dual-gemm", "engine"}));
  for (const std::string& name : bench_family_names()) {
    CLI::App app;
    const auto family = make_bench_family(name);
    family->add_options(app);
    EXPECT_NE(app.get_option_no_throw("--server"), nullptr) << name;
    app.parse(std::vector<std::string>{});
    EXPECT_NO_THROW(family->finish_options()) << name;
  }
}

TEST(BenchFamily, OnlyTheReportingFamiliesTakeADocOrAShapeSet) {
  for (const std::string& name : {"gemm", "attention", "dual-gemm"}) {
    CLI::App app;
    make_bench_family(name)->add_options(app);
    EXPECT_NE(app.get_option_no_throw("--doc"), nullptr) << name;
    EXPECT_EQ(app.get_option_no_throw("--readme"), nullptr) << name;
  }
  CLI::App engine;
  make_bench_family("engine")->add_options(engine);
  EXPECT_EQ(engine.get_option_no_throw("--doc"), nullptr);
  CLI::App gemm;
  make_bench_family("gemm")->add_options(gemm);
  EXPECT_NO_THROW(gemm.parse(std::vector<std::string>{"square", "--shape-set"}));
  CLI::App old_name;
  make_bench_family("gemm")->add_options(old_name);
  EXPECT_THROW(old_name.parse(std::vector<std::string>{"issue4", "--shape-set"}),
               CLI::ValidationError);
}

TEST(BenchFamily, ChecksItsShapesAfterParsing) {
  CLI::App app;
  const auto family = make_bench_family("dual-gemm");
  family->add_options(app);
  app.parse(std::vector<std::string>{"64x4096", "--shape"});  // CLI11: arguments last-first
  EXPECT_THROW(family->finish_options(), std::invalid_argument);
}

TEST(BenchFamily, RefusesAnUnknownFamilyNamingTheKnownOnes) {
  try {
    make_bench_family("gemm-bench");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("gemm, attention, dual-gemm, engine"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace kt::bench
