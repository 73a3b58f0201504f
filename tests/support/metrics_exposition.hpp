// GET /metrics as numbers: the tests that read the daemon's Prometheus exposition.
#pragma once

#include <map>
#include <string>

namespace kt::test {

// "name{labels} value" -> value, for every line that is not a comment or empty; a line of
// another form is a test failure (and is skipped).
std::map<std::string, double> parse_exposition(const std::string& text);

}  // namespace kt::test
