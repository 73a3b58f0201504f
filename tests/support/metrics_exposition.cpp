#include "support/metrics_exposition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace kt::test {

std::map<std::string, double> parse_exposition(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line.front() == '#') continue;
    const auto space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    const std::string value = line.substr(space + 1);
    samples[line.substr(0, space)] = value == "+Inf" ? INFINITY : std::stod(value);
  }
  return samples;
}

}  // namespace kt::test
