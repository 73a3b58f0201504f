// A shapes file, as kerntune.torch.record writes it: one JSON object a line, each a problem a
// program ran (family, shape, dtype, layout, op, supported, calls, time_us, share). tune-all and
// export --bundle read it as problems: one per family, shape and dtype, whatever ops ran it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt {

struct RecordedProblem {
  std::string family;
  std::map<std::string, std::int64_t> shape;
  std::string dtype;
  double share = 0;  // of the recorded time, summed over the lines of this problem
  std::int64_t calls = 0;
  std::vector<std::string> ops;  // "linear", "matmul", ... as recorded
};

struct ShapesFile {
  std::vector<RecordedProblem> problems;  // the supported ones, largest share first
  // Lines the families cannot take (a layout or dtype they do not have), with their reasons.
  std::vector<std::string> unsupported;
};

// Throws std::invalid_argument naming the file and line of the first line that is not a
// problem (not JSON, no family, a shape that is not dims to positive integers).
ShapesFile read_shapes_file(const std::string& path);

// "gemm M=64 N=4096 K=4096 bf16"
std::string problem_label(const RecordedProblem& problem);

}  // namespace kt
