#include "bench/result_names.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <stdexcept>

#include "tuner/utc_time.hpp"

namespace kt::bench {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool has_digit(const std::string& word) {
  return std::any_of(word.begin(), word.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::int64_t parse_positive(const std::string& text, const std::string& whole) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value <= 0)
    throw std::invalid_argument("bad GEMM shape '" + whole +
                                "': expected MxNxK, MxNxK:BUDGET or MxNxK:BUDGET:TIMEOUT_S with "
                                "positive integers");
  return value;
}

}  // namespace

std::string device_tag(const std::string& device_name) {
  std::vector<std::string> words;
  std::string word;
  for (char c : lower(device_name) + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  std::string tag;
  for (const std::string& w : words) {
    if (w == "nvidia" || w == "geforce" || w == "tesla" || w == "quadro") continue;
    tag += (tag.empty() ? "" : "-") + w;
    if (has_digit(w)) break;
  }
  return tag.empty() ? "gpu" : tag;
}

std::string utc_date() {
  return utc_now_text("%Y-%m-%d");
}

std::string results_folder_name(const std::string& date, const std::string& device_name,
                                const std::string& kind) {
  return date + "-" + device_tag(device_name) + "-" + kind;
}

std::string shape_label(const GemmShape& shape) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
}

GemmShape parse_shape_label(const std::string& text) {
  std::string dims = text;
  GemmShape shape;
  if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
    dims = text.substr(0, colon);
    std::string budget = text.substr(colon + 1);
    if (const std::size_t second = budget.find(':'); second != std::string::npos) {
      shape.timeout_seconds = static_cast<double>(parse_positive(budget.substr(second + 1), text));
      budget = budget.substr(0, second);
    }
    shape.budget = budget == "0" ? 0 : parse_positive(budget, text);
  }
  const std::size_t x1 = dims.find('x');
  const std::size_t x2 = x1 == std::string::npos ? x1 : dims.find('x', x1 + 1);
  if (x2 == std::string::npos || dims.find('x', x2 + 1) != std::string::npos)
    throw std::invalid_argument("bad GEMM shape '" + text +
                                "': expected MxNxK, MxNxK:BUDGET or MxNxK:BUDGET:TIMEOUT_S with "
                                "positive integers");
  shape.m = parse_positive(dims.substr(0, x1), text);
  shape.n = parse_positive(dims.substr(x1 + 1, x2 - x1 - 1), text);
  shape.k = parse_positive(dims.substr(x2 + 1), text);
  return shape;
}

std::vector<GemmShape> square_set_shapes() {
  std::vector<GemmShape> shapes = {{8192, 8192, 8192}, {4096, 4096, 4096}, {2048, 2048, 2048}};
  for (std::int64_t m : {1, 16, 64, 128}) shapes.push_back({m, 4096, 7168});
  shapes.push_back({256, 7168, 2048});
  shapes.push_back({512, 4096, 1536});
  return shapes;
}

}  // namespace kt::bench
