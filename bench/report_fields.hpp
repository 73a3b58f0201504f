// Pieces the benchmark reports of the newer families (dual GEMM, attention) share: shapes written
// as "AxBxC..." with an optional ":BUDGET", optional numbers in JSON (null = unknown) read back
// with the field named in the error, the ratio cell and the verdict of a ratio target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt::bench {

// "4x16x4096x128:8" -> {4, 16, 4096, 128} and budget 8 (-1 without ":BUDGET"); `count` positive
// integers wanted. Throws std::invalid_argument naming `what` and the expected form.
std::vector<std::int64_t> parse_dims_label(const std::string& text, std::size_t count,
                                           const std::string& what, const std::string& form,
                                           std::int64_t& budget);
// {4, 16, 4096, 128} -> "4x16x4096x128"; with sep "×" for tables.
std::string dims_label(const std::vector<std::int64_t>& dims, const std::string& sep = "x");

nlohmann::json number_or_null(const std::optional<double>& value);
// nullopt for a missing or null field; throws std::invalid_argument if it is not a number.
std::optional<double> read_number(const nlohmann::json& j, const char* field);
// "" for a missing or null field; throws std::invalid_argument if it is not a string.
std::string read_text(const nlohmann::json& j, const char* field);
// "ratio_low" and "ratio_high": both or neither, else std::invalid_argument.
void read_interval(const nlohmann::json& j, std::optional<double>& low,
                   std::optional<double>& high);

// "1.02× [0.99, 1.04]", "1.02× (no interval)", "—".
std::string ratio_interval_cell(const std::optional<double>& ratio,
                                const std::optional<double>& low,
                                const std::optional<double>& high);

// "met" when the interval's low end is above min_ratio, "missed" when its high end is below it
// (or, without an interval, the point ratio is), "not shown (interval spans target)" /
// "not shown (no interval)" otherwise, "no result" without a ratio.
std::string ratio_verdict(double min_ratio, const std::optional<double>& ratio,
                          const std::optional<double>& low, const std::optional<double>& high);

}  // namespace kt::bench
