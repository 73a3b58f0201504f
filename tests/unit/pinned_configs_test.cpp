#include "tuner/pinned_configs.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

// Two templates with the same axes (so a config without "template" is ambiguous), one axis only
// for Blackwell, and a constraint over the shape.
Family two_template_family() {
  Family family;
  family.name = "tiny";
  family.dims = {{"N", 1, 1 << 20, ""}};
  family.dtypes = {"bf16"};
  TemplateSpec narrow;
  narrow.name = "narrow";
  narrow.archs = {"sm_90a", "sm_100a"};
  narrow.axes = {{"A", {1, 2, 4}, {}, ""}, {"B", {1, 2}, {}, ""}, {"C", {1, 2}, {"sm_100a"}, ""}};
  narrow.constraints = {"A*B <= 4", "A <= N"};
  family.templates.push_back(narrow);
  TemplateSpec wide = narrow;
  wide.name = "wide";
  wide.constraints = {"A*B >= 4"};
  family.templates.push_back(wide);
  return family;
}

const Shape kShape{{"N", 1000}};

std::vector<PinnedConfig> validate(const nlohmann::json& configs,
                                   const std::string& arch = "sm_90a",
                                   const Shape& shape = kShape) {
  return validate_pinned_configs(configs, two_template_family(), shape, "bf16",
                                 *limits_for_arch(arch));
}

std::string error_of(const nlohmann::json& configs, const std::string& arch = "sm_90a") {
  try {
    validate(configs, arch);
  } catch (const PinnedConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(PinnedConfigs, NamedTemplateAndFirstFittingTemplate) {
  const auto configs = validate(
      nlohmann::json::parse(R"([{"template":"wide","A":2,"B":2},{"A":1,"B":2},{"A":4,"B":2}])"));
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(configs[0], (PinnedConfig{"wide", {{"A", 2}, {"B", 2}}}));
  EXPECT_EQ(configs[1].template_name, "narrow");  // first template where it is a point
  EXPECT_EQ(configs[2].template_name, "wide");    // narrow's constraint A*B <= 4 fails
}

TEST(PinnedConfigs, DuplicatesAreKeptOnce) {
  const auto configs =
      validate(nlohmann::json::parse(R"([{"A":1,"B":1},{"B":1,"A":1},{"template":"narrow",
                                        "A":1,"B":1}])"));
  EXPECT_EQ(configs.size(), 1u);
}

TEST(PinnedConfigs, ArchRestrictedAxesFollowTheTarget) {
  EXPECT_EQ(validate(nlohmann::json::parse(R"([{"A":1,"B":1,"C":2}])"), "sm_100a").size(), 1u);
  EXPECT_NE(error_of(nlohmann::json::parse(R"([{"A":1,"B":1,"C":2}])"), "sm_90a")
                .find("does not apply to sm_90a"),
            std::string::npos);
  EXPECT_NE(
      error_of(nlohmann::json::parse(R"([{"A":1,"B":1}])"), "sm_100a").find("no value for axis C"),
      std::string::npos);
}

TEST(PinnedConfigs, EachProblemIsNamed) {
  struct Case {
    const char* configs;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"A":1})", "must be an array"},
      {R"([])", "is empty"},
      {R"([3])", "configs[0] must be an object"},
      {R"([{"A":1,"B":1},{"A":3,"B":1}])", "configs[1]"},
      {R"([{"A":3,"B":1}])", "A = 3 is not one of 1, 2, 4"},
      {R"([{"template":"narrow","A":4,"B":2}])", "constraint failed: A*B <= 4"},
      {R"([{"template":"narrow","A":1,"B":1,"D":1}])", "'D' is not an axis"},
      {R"([{"template":"narrow","A":1}])", "no value for axis B"},
      {R"([{"template":"huge","A":1,"B":1}])", "has no template 'huge'"},
      {R"([{"template":7,"A":1,"B":1}])", "template must be a string"},
      {R"([{"A":"1","B":1}])", "configs[0]"},
      {R"([{"A":1.5,"B":1}])", "configs[0]"},
      {R"([{"template":"narrow"}])", "names no axis value"},
  };
  for (const Case& c : cases) {
    const std::string error = error_of(nlohmann::json::parse(c.configs));
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.configs << " -> " << error;
  }
}

TEST(PinnedConfigs, ConstraintsSeeTheJobShape) {
  const Shape tiny{{"N", 1}};
  EXPECT_THROW(
      validate(nlohmann::json::parse(R"([{"template":"narrow","A":2,"B":1}])"), "sm_90a", tiny),
      PinnedConfigError);
  EXPECT_EQ(validate(nlohmann::json::parse(R"([{"A":1,"B":1}])"), "sm_90a", tiny).size(), 1u);
}

TEST(PinnedConfigs, TemplateNotWrittenForTheArch) {
  Family family = two_template_family();
  family.templates[1].archs = {"sm_100a"};
  const TemplateSpec& wide = family.templates[1];
  const auto why =
      why_not_in_space(wide, {{"A", 2}, {"B", 2}}, kShape, "bf16", *limits_for_arch("sm_90a"));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("not written for sm_90a"), std::string::npos);
}

TEST(PinnedConfigs, StoredTextRoundTrips) {
  const std::vector<PinnedConfig> configs{{"narrow", {{"A", 1}, {"B", 2}}},
                                          {"wide", {{"A", 4}, {"B", 1}}}};
  const std::string text = pinned_configs_to_text(configs);
  EXPECT_EQ(pinned_configs_from_text(text), configs);
  EXPECT_EQ(pinned_configs_to_text({}), "");
  EXPECT_TRUE(pinned_configs_from_text("").empty());
  EXPECT_THROW(pinned_configs_from_text("[{\"template\":1}]"), std::runtime_error);
}

}  // namespace
}  // namespace kt
