// Small text helpers for the kerntune CLI: configs, shapes, times and fixed-width tables.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt {

// j[name] if j is an object holding it, else null: safe on const JSON from the server.
const nlohmann::json& field(const nlohmann::json& j, const std::string& name);

// {"BM":128,"BN":64} -> "BM=128 BN=64" (in the order the server sent them).
std::string format_config(const nlohmann::json& config);
// {"K":4096,"M":64,"N":7168} -> "M=64 N=7168 K=4096": the GEMM-conventional M, N, K first.
std::string format_shape(const nlohmann::json& shape);
// 812.4 -> "812.4 us", 12345.6 -> "12.35 ms"; null -> "-".
std::string format_us(const nlohmann::json& microseconds);
// A number with the given decimals; null -> "-".
std::string format_number(const nlohmann::json& value, int decimals);
// The text, cut to at most `width` characters with "..." when cut; newlines become spaces.
std::string shorten(const std::string& text, std::size_t width);
// A variant's final-comparison view ({"speedup","speedup_low","speedup_high","baseline",
// "baseline_median_us", ...}) in words: "1.02x [1.01, 1.03] vs cublaslt_gemm (828.6 us): faster";
// "tie" when the interval holds 1, "slower" when it lies below; "" for null.
std::string final_speedup_text(const nlohmann::json& final);

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> row);
  // Columns padded to their widest cell, two spaces apart.
  void print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kt
