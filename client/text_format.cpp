#include "client/text_format.hpp"

#include <algorithm>
#include <cstdio>

namespace kt {

const nlohmann::json& field(const nlohmann::json& j, const std::string& name) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(name);
  return it == j.end() ? kNull : *it;
}

std::string format_config(const nlohmann::json& config) {
  std::string text;
  if (!config.is_object()) return "-";
  for (const auto& [name, value] : config.items())
    text += (text.empty() ? "" : " ") + name + "=" + value.dump();
  return text.empty() ? "-" : text;
}

std::string format_shape(const nlohmann::json& shape) {
  if (!shape.is_object()) return "-";
  std::vector<std::string> names;
  for (const auto& [name, value] : shape.items()) names.push_back(name);
  const auto rank = [](const std::string& name) {
    static const std::vector<std::string> kOrder{"M", "N", "K"};
    const auto it = std::find(kOrder.begin(), kOrder.end(), name);
    return static_cast<int>(it - kOrder.begin());
  };
  std::stable_sort(names.begin(), names.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  std::string text;
  for (const auto& name : names)
    text += (text.empty() ? "" : " ") + name + "=" + shape.at(name).dump();
  return text;
}

std::string format_number(const nlohmann::json& value, int decimals) {
  if (!value.is_number()) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value.get<double>());
  return buffer;
}

std::string format_us(const nlohmann::json& microseconds) {
  if (!microseconds.is_number()) return "-";
  const double us = microseconds.get<double>();
  if (us >= 10000) return format_number(us / 1000.0, 2) + " ms";
  return format_number(us, 1) + " us";
}

std::string shorten(const std::string& text, std::size_t width) {
  std::string flat = text;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(flat.begin(), flat.end(), '\t', ' ');
  if (flat.size() <= width) return flat;
  if (width <= 3) return flat.substr(0, width);
  return flat.substr(0, width - 3) + "...";
}

TextTable::TextTable(std::vector<std::string> header) {
  rows_.push_back(std::move(header));
}

void TextTable::add_row(std::vector<std::string> row) {
  rows_.push_back(std::move(row));
}

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << '\n';
  }
}

std::string final_speedup_text(const nlohmann::json& final) {
  if (!final.is_object() || !field(final, "speedup").is_number()) return "";
  const double low = field(final, "speedup_low").get<double>();
  const double high = field(final, "speedup_high").get<double>();
  const nlohmann::json& baseline = field(final, "baseline");
  const std::string kind = baseline.is_object() && baseline.contains("kind")
                               ? baseline["kind"].get<std::string>()
                               : std::string("baseline");
  const char* verdict = low > 1.0 ? "faster" : (high < 1.0 ? "slower" : "tie within the noise");
  return format_number(field(final, "speedup"), 3) + "x [" + format_number(low, 3) + ", " +
         format_number(high, 3) + "] vs " + kind + " (" +
         format_us(field(final, "baseline_median_us")) + "): " + verdict;
}

}  // namespace kt
