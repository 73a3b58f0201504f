// Names of the benchmark outputs: a short device tag from the GPU's name, today's date, the
// results folder bench/results/<date>-<device>-<kind>, and GEMM shapes as "MxNxK".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kt::bench {

// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA A100-SXM4-80GB" -> "a100",
// "NVIDIA GeForce RTX 4090" -> "rtx-4090": the words up to the first with a digit, vendor and
// brand words dropped, lower case; "gpu" when nothing is left.
std::string device_tag(const std::string& device_name);

// Today's date in UTC, "YYYY-MM-DD".
std::string utc_date();

// "<date>-<device_tag>-<kind>", e.g. "2026-11-23-h100-gemm".
std::string results_folder_name(const std::string& date, const std::string& device_name,
                                const std::string& kind);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t budget = -1;    // -1 = the run's default budget
  double timeout_seconds = 0;  // 0 = the run's default job timeout
  std::string set;             // the named shape set it came from ("square", "models"); "" = none
  bool operator==(const GemmShape&) const = default;
};

// "MxNxK" (e.g. "64x4096x7168").
std::string shape_label(const GemmShape& shape);
// "MxNxK", "MxNxK:BUDGET" or "MxNxK:BUDGET:TIMEOUT_S"; throws std::invalid_argument on anything
// else (zero or negative dims, a negative budget, a timeout that is not a positive number, junk).
GemmShape parse_shape_label(const std::string& text);

// The "square" set, bf16: 8192^3, 4096^3, 2048^3, M in {1,16,64,128} x N=4096 x K=7168,
// 256x7168x2048 and 512x4096x1536.
std::vector<GemmShape> square_set_shapes();

}  // namespace kt::bench
