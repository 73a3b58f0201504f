#include "client/shapes_file.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "client/text_format.hpp"

namespace kt {
namespace {

std::invalid_argument line_error(const std::string& path, int number, const std::string& what) {
  return std::invalid_argument(path + ":" + std::to_string(number) + ": " + what);
}

RecordedProblem problem_of(const nlohmann::json& line, const std::string& path, int number) {
  RecordedProblem problem;
  if (!field(line, "family").is_string() || !field(line, "dtype").is_string())
    throw line_error(path, number, "a line needs \"family\" and \"dtype\" strings");
  problem.family = line["family"].get<std::string>();
  problem.dtype = line["dtype"].get<std::string>();
  const nlohmann::json& shape = field(line, "shape");
  if (!shape.is_object() || shape.empty())
    throw line_error(path, number, "\"shape\" is not an object of dims");
  for (const auto& [dim, extent] : shape.items()) {
    if (!extent.is_number_integer() || extent.get<std::int64_t>() < 0)
      throw line_error(path, number, "dim " + dim + " is not a non-negative integer");
    problem.shape[dim] = extent.get<std::int64_t>();
  }
  const nlohmann::json& share = field(line, "share");
  problem.share = share.is_number() ? share.get<double>() : 0.0;
  const nlohmann::json& calls = field(line, "calls");
  problem.calls = calls.is_number_integer() ? calls.get<std::int64_t>() : 0;
  if (field(line, "op").is_string()) problem.ops.push_back(line["op"].get<std::string>());
  return problem;
}

}  // namespace

std::string problem_label(const RecordedProblem& problem) {
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& [dim, extent] : problem.shape) shape[dim] = extent;
  return problem.family + " " + format_shape(shape) + " " + problem.dtype;
}

ShapesFile read_shapes_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read the shapes file " + path);
  ShapesFile file;
  std::map<std::string, std::size_t> index;  // label -> position in file.problems
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json line;
    try {
      line = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error&) {
      throw line_error(path, number, "not JSON");
    }
    if (!line.is_object()) throw line_error(path, number, "not a JSON object");
    RecordedProblem problem = problem_of(line, path, number);
    if (field(line, "supported") == false) {
      const nlohmann::json& reason = field(line, "reason");
      file.unsupported.push_back(
          problem_label(problem) + " (" +
          (problem.ops.empty() ? std::string("?") : problem.ops.front()) +
          "): " + (reason.is_string() ? reason.get<std::string>() : std::string("not supported")));
      continue;
    }
    const std::string label = problem_label(problem);
    if (auto it = index.find(label); it != index.end()) {
      RecordedProblem& seen = file.problems[it->second];
      seen.share += problem.share;
      seen.calls += problem.calls;
      for (const std::string& op : problem.ops)
        if (std::find(seen.ops.begin(), seen.ops.end(), op) == seen.ops.end())
          seen.ops.push_back(op);
      continue;
    }
    index.emplace(label, file.problems.size());
    file.problems.push_back(std::move(problem));
  }
  // The problems that take most of the time first: a batch cut short has tuned those.
  std::stable_sort(
      file.problems.begin(), file.problems.end(),
      [](const RecordedProblem& a, const RecordedProblem& b) { return a.share > b.share; });
  return file;
}

}  // namespace kt
