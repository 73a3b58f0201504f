#include "bench/report_fields.hpp"

#include <charconv>
#include <stdexcept>

#include "bench/text_format.hpp"

namespace kt::bench {

std::vector<std::int64_t> parse_dims_label(const std::string& text, std::size_t count,
                                           const std::string& what, const std::string& form,
                                           std::int64_t& budget) {
  const std::string error = "bad " + what + " '" + text + "': expected " + form + " or " + form +
                            ":BUDGET with positive integers";
  auto parse = [&](const std::string& part, bool zero_ok) {
    std::int64_t value = 0;
    const auto [end, code] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || code != std::errc() || end != part.data() + part.size() || value < 0 ||
        (value == 0 && !zero_ok))
      throw std::invalid_argument(error);
    return value;
  };
  std::string dims = text;
  budget = -1;
  if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
    dims = text.substr(0, colon);
    budget = parse(text.substr(colon + 1), /*zero_ok=*/true);
  }
  std::vector<std::int64_t> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t x = dims.find('x', start);
    values.push_back(parse(dims.substr(start, x == std::string::npos ? x : x - start), false));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (values.size() != count) throw std::invalid_argument(error);
  return values;
}

std::string dims_label(const std::vector<std::int64_t>& dims, const std::string& sep) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i)
    text += (i == 0 ? "" : sep) + std::to_string(dims[i]);
  return text;
}

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<double> read_number(const nlohmann::json& j, const char* field) {
  if (!j.contains(field) || j.at(field).is_null()) return std::nullopt;
  if (!j.at(field).is_number())
    throw std::invalid_argument(std::string("field '") + field + "' is not a number");
  return j.at(field).get<double>();
}

std::string read_text(const nlohmann::json& j, const char* field) {
  if (!j.contains(field) || j.at(field).is_null()) return "";
  if (!j.at(field).is_string())
    throw std::invalid_argument(std::string("field '") + field + "' is not a string");
  return j.at(field).get<std::string>();
}

void read_interval(const nlohmann::json& j, std::optional<double>& low,
                   std::optional<double>& high) {
  low = read_number(j, "ratio_low");
  high = read_number(j, "ratio_high");
  if (low.has_value() != high.has_value())
    throw std::invalid_argument("fields 'ratio_low' and 'ratio_high' must both be set or null");
}

std::string ratio_interval_cell(const std::optional<double>& ratio,
                                const std::optional<double>& low,
                                const std::optional<double>& high) {
  if (!ratio) return "—";
  const std::string text = format_fixed(*ratio, 2) + "×";
  if (!low || !high) return text + " (no interval)";
  return text + " [" + format_fixed(*low, 2) + ", " + format_fixed(*high, 2) + "]";
}

std::string ratio_verdict(double min_ratio, const std::optional<double>& ratio,
                          const std::optional<double>& low, const std::optional<double>& high) {
  if (!ratio) return "no result";
  if (!low || !high)  // a point ratio can show a miss but not a win
    return *ratio < min_ratio ? "missed" : "not shown (no interval)";
  if (*high < min_ratio) return "missed";
  if (*low > min_ratio) return "met";
  return "not shown (interval spans target)";
}

}  // namespace kt::bench
