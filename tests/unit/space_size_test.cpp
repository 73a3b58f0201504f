// A template's space counted without enumerating it (tuner/space_size.hpp): the exact product,
// no wrap-around past 64 bits, and the cap load_family holds a manifest to, named in its refusal.
#include "tuner/space_size.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "server/json_views.hpp"
#include "support/test_family.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

TemplateSpec with_axes(const std::vector<std::size_t>& counts) {
  TemplateSpec tmpl;
  tmpl.name = "x";
  for (std::size_t a = 0; a < counts.size(); ++a) {
    AxisSpec axis;
    axis.name = "A" + std::to_string(a);
    for (std::size_t v = 0; v < counts[a]; ++v) axis.values.push_back(static_cast<std::int64_t>(v));
    tmpl.axes.push_back(axis);
  }
  return tmpl;
}

TEST(SpaceSize, IsTheExactProductWithinTheCapAndRefusedAbove) {
  EXPECT_EQ(template_space_size(with_axes({})), 1u);
  EXPECT_EQ(template_space_size(with_axes({3, 4, 5})), 60u);
  EXPECT_EQ(template_space_size(with_axes({100, 100, 1000})), kMaxTemplateConfigs);
  EXPECT_FALSE(space_too_large(with_axes({100, 100, 1000})));
  const auto over = space_too_large(with_axes({100, 100, 1000, 2}));
  ASSERT_TRUE(over);
  EXPECT_EQ(*over,
            "template 'x' has 20,000,000 configs (1000 x 100^2 x 2); at most 10,000,000 per "
            "template");
}

TEST(SpaceSize, ASpaceBeyondSixtyFourBitsIsNamedNotWrapped) {
  const TemplateSpec huge = with_axes(std::vector<std::size_t>(10, 100));
  EXPECT_FALSE(template_space_size(huge));
  EXPECT_EQ(saturated_space_size(huge), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(space_too_large(huge).value_or(""),
            "template 'x' has 10^20 configs (100^10); at most 10,000,000 per template");
  EXPECT_NE(space_too_large(with_axes({3, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}))
                .value_or("")
                .find("about 3.0 x 10^20 configs (100^10 x 3)"),
            std::string::npos);
  // 2^63 exactly would wrap a signed product to a negative number.
  EXPECT_EQ(saturated_space_size(with_axes(std::vector<std::size_t>(63, 2))),
            std::numeric_limits<std::int64_t>::max());
}

TEST(SpaceSize, TheFamiliesViewSaturatesInsteadOfWrapping) {
  Family family;
  family.name = "f";
  family.templates = {with_axes(std::vector<std::size_t>(10, 100)), with_axes({7, 9})};
  const nlohmann::json view = family_to_json(family);
  EXPECT_EQ(view["templates"][0]["space_size"].get<std::int64_t>(),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(view["templates"][1]["space_size"].get<std::int64_t>(), 63);
}

TEST(SpaceSize, LoadFamilyRefusesATemplateAboveTheCapNamingItsProduct) {
  test::TempDir dir;
  nlohmann::ordered_json manifest = test::tiny_family_manifest();
  nlohmann::ordered_json& axes = manifest["templates"][0]["axes"];
  for (int a = 0; a < 4; ++a) {
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (int v = 1; v <= 100; ++v) values.push_back(v);
    axes["EXTRA" + std::to_string(a)] = {{"values", values}};
  }
  test::write_tiny_family(dir.path() / "tiny", manifest);
  try {
    load_family(dir.path() / "tiny");
    FAIL() << "a space of 12 x 10^8 configurations loaded";
  } catch (const FamilyError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("templates[0].axes: template 'simple' has 1,200,000,000 configs (100^4 "
                           "x 3 x 2^2); at most 10,000,000 per template"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace kt
