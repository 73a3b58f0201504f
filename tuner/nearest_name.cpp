#include "tuner/nearest_name.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace kt {
namespace {

// Lower case, without '_', '-', '.' and spaces: "SM_90a" and "sm90a" are the same name.
std::string folded(const std::string& name) {
  std::string out;
  for (const char c : name)
    if (c != '_' && c != '-' && c != '.' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// What people write for the dtypes, folded: torch's and numpy's names.
const std::map<std::string, std::string>& synonyms() {
  static const std::map<std::string, std::string> names{
      {"bfloat16", "bf16"},     {"torchbfloat16", "bf16"}, {"float16", "fp16"}, {"half", "fp16"},
      {"torchfloat16", "fp16"}, {"f16", "fp16"},           {"float32", "f32"},  {"fp32", "f32"}};
  return names;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> nearest_name(const std::string& asked,
                                        const std::vector<std::string>& known) {
  const std::string wanted = folded(asked);
  if (wanted.empty()) return std::nullopt;
  if (const auto synonym = synonyms().find(wanted); synonym != synonyms().end())
    for (const std::string& name : known)
      if (folded(name) == synonym->second) return name;
  for (const std::string& name : known)
    if (folded(name) == wanted) return name;
  const std::size_t allowed = wanted.size() <= 4 ? 1 : 2;
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  bool tie = false;
  for (const std::string& name : known) {
    const std::size_t distance = edit_distance(wanted, folded(name));
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
      tie = false;
    } else if (distance == best_distance) {
      tie = true;
    }
  }
  return tie ? std::nullopt : best;
}

std::string did_you_mean(const std::string& asked, const std::vector<std::string>& known) {
  const std::optional<std::string> name = nearest_name(asked, known);
  return name && *name != asked ? " (did you mean " + *name + "?)" : "";
}

}  // namespace kt
