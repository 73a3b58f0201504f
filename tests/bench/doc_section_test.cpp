#include "bench/doc_section.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace kt::bench {
namespace {

const std::string kBegin = kGemmTableBegin;
const std::string kEnd = kGemmTableEnd;

TEST(DocSection, ReplacesOnlyWhatLiesBetweenTheMarkers) {
  const std::string text =
      "# Title\n\n## Results\n" + kBegin + "\nold table\nold line 2\n" + kEnd + "\n\nafter\n";
  EXPECT_EQ(replace_marked_section(text, kBegin, kEnd, "| new |"),
            "# Title\n\n## Results\n" + kBegin + "\n| new |\n" + kEnd + "\n\nafter\n");
}

TEST(DocSection, FillsAnEmptySectionAndIsRepeatable) {
  const std::string text = "a\n" + kBegin + "\n" + kEnd + "\nb";
  const std::string once = replace_marked_section(text, kBegin, kEnd, "x\ny\n");
  EXPECT_EQ(once, "a\n" + kBegin + "\nx\ny\n" + kEnd + "\nb");
  EXPECT_EQ(replace_marked_section(once, kBegin, kEnd, "x\ny\n"), once);
  EXPECT_EQ(replace_marked_section(once, kBegin, kEnd, ""), text);
}

TEST(DocSection, MarkersOnOneLine) {
  EXPECT_EQ(replace_marked_section("p " + kBegin + kEnd + " q", kBegin, kEnd, "t"),
            "p " + kBegin + "\nt\n" + kEnd + " q");
}

TEST(DocSection, RefusesMissingRepeatedOrSwappedMarkers) {
  EXPECT_THROW(replace_marked_section("no markers", kBegin, kEnd, "t"), std::invalid_argument);
  EXPECT_THROW(replace_marked_section(kBegin + "\n", kBegin, kEnd, "t"), std::invalid_argument);
  EXPECT_THROW(replace_marked_section(kEnd + "\n" + kBegin + "\n", kBegin, kEnd, "t"),
               std::invalid_argument);
  EXPECT_THROW(replace_marked_section(kBegin + "\n" + kEnd + "\n" + kEnd, kBegin, kEnd, "t"),
               std::invalid_argument);
}

}  // namespace
}  // namespace kt::bench
