// bench/experiments/gemm_templates/pinned.json (the configs its check.sh pins for the GEMM
// templates' shapes) stays a set of points of the GEMM space on an H100: a manifest change that
// prunes one would make the daemon refuse the whole job (400 invalid_configs) on the GPU.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/gemm_templates.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

TEST(GemmPinnedConfigs, EveryPinnedConfigSurvivesForItsShapeOnAnH100) {
  std::ifstream in(test::source_dir() / "bench" / "experiments" / "gemm_templates" / "pinned.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json pinned = nlohmann::json::parse(in);
  const DeviceLimits limits = test::gemm_limits("sm_90a");
  int checked = 0;
  for (const auto& [shape_text, configs] : pinned.items()) {
    long long m = 0, n = 0, k = 0;
    ASSERT_EQ(std::sscanf(shape_text.c_str(), "%lldx%lldx%lld", &m, &n, &k), 3) << shape_text;
    for (const nlohmann::json& entry : configs) {
      const std::string tmpl = entry.at("template").get<std::string>();
      Config config;
      for (const auto& [name, value] : entry.items())
        if (name != "template") config[name] = value.get<std::int64_t>();
      bool found = false;
      for (const VariantPlan& plan : test::gemm_survivors(tmpl, test::gemm_shape(m, n, k), limits))
        found = found || plan.config == config;
      EXPECT_TRUE(found) << shape_text << ": " << entry.dump();
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace kt
