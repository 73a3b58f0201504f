#include "bench/gemm_report.hpp"

#include <cstdio>
#include <stdexcept>

#include "bench/bench_math.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

constexpr int kBf16Bytes = 2;

int element_bytes(const std::string& dtype) {
  return dtype == "fp32" || dtype == "f32" ? 4 : kBf16Bytes;  // bf16 / fp16
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

std::string target_text(const GemmShape& shape, const GemmFigures& figures) {
  const auto target = issue4_target(shape);
  if (!target) return "—";
  std::string text = "≥" + format_fixed(target->min_ratio, 1) + "×";
  if (target->min_bw_fraction) text += ", ≥" + format_percent(*target->min_bw_fraction) + " BW";
  if (!figures.ratio) return text + ": no result";
  bool met = *figures.ratio >= target->min_ratio;
  if (target->min_bw_fraction)
    met = met && figures.bw_fraction && *figures.bw_fraction >= *target->min_bw_fraction;
  return text + (met ? ": met" : ": missed");
}

std::string shape_cell(const GemmShape& shape) {
  return std::to_string(shape.m) + "×" + std::to_string(shape.n) + "×" + std::to_string(shape.k);
}

}  // namespace

std::optional<GemmTarget> issue4_target(const GemmShape& shape) {
  if (shape.m == shape.n && shape.n == shape.k && shape.m >= 4096) return GemmTarget{1.0, {}};
  if (shape.m <= 128) return GemmTarget{1.3, 0.75};
  return std::nullopt;
}

GemmFigures gemm_figures(const GemmRow& row, std::optional<double> copy_gbps) {
  GemmFigures figures;
  if (!row.ours_us || !(*row.ours_us > 0)) return figures;
  const double ours = *row.ours_us;
  if (row.cublas_us && *row.cublas_us > 0) figures.ratio = speed_ratio(*row.cublas_us, ours);
  figures.tflops = gemm_tflops(row.shape.m, row.shape.n, row.shape.k, ours);
  if (copy_gbps && *copy_gbps > 0)
    figures.bw_fraction = bandwidth_fraction(
        gemm_min_bytes(row.shape.m, row.shape.n, row.shape.k, element_bytes(row.dtype)), ours,
        *copy_gbps);
  return figures;
}

nlohmann::json gemm_report_to_json(const GemmReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const GemmRow& row : report.rows) {
    const GemmFigures figures = gemm_figures(row, report.copy_gbps);
    nlohmann::json j = {{"shape", shape_label(row.shape)},
                        {"dtype", row.dtype},
                        {"config", row.config},
                        {"ours_us", number_or_null(row.ours_us)},
                        {"cublas_us", number_or_null(row.cublas_us)},
                        {"ratio", number_or_null(figures.ratio)},
                        {"tflops", number_or_null(figures.tflops)},
                        {"bw_fraction", number_or_null(figures.bw_fraction)},
                        {"variants_measured", row.variants_measured},
                        {"tuning_seconds", row.tuning_seconds}};
    if (!row.note.empty()) j["note"] = row.note;
    rows.push_back(std::move(j));
  }
  return {{"device", report.device},
          {"driver", report.driver},
          {"date", report.date},
          {"copy_gbps", number_or_null(report.copy_gbps)},
          {"rows", rows}};
}

GemmReport gemm_report_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("the GEMM report is not a JSON object");
  GemmReport report;
  report.device = read_text(j, "device");
  report.driver = read_text(j, "driver");
  report.date = read_text(j, "date");
  report.copy_gbps = read_number(j, "copy_gbps");
  if (!j.contains("rows") || !j.at("rows").is_array())
    throw std::invalid_argument("field 'rows' is missing or not an array");
  for (const nlohmann::json& r : j.at("rows")) {
    if (!r.is_object()) throw std::invalid_argument("a row is not a JSON object");
    GemmRow row;
    row.shape = parse_shape_label(read_text(r, "shape"));
    row.dtype = read_text(r, "dtype");
    row.config = r.value("config", nlohmann::json());
    if (!row.config.is_null() && !row.config.is_object())
      throw std::invalid_argument("field 'config' is not an object");
    row.ours_us = read_number(r, "ours_us");
    row.cublas_us = read_number(r, "cublas_us");
    row.variants_measured =
        static_cast<std::int64_t>(read_number(r, "variants_measured").value_or(0));
    row.tuning_seconds = read_number(r, "tuning_seconds").value_or(0);
    row.note = read_text(r, "note");
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string config_text(const nlohmann::json& config) {
  if (!config.is_object() || config.empty()) return "—";
  std::string text;
  if (config.contains("template") && config.at("template").is_string())
    text = "`" + config.at("template").get<std::string>() + "`";
  for (const auto& [axis, value] : config.items()) {
    if (axis == "template") continue;
    text += (text.empty() ? "" : " ") + axis + "=" +
            (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

std::string render_gemm_table(const GemmReport& report, const std::string& raw_output) {
  std::string out = "### " + std::string(report.rows.empty() ? "" : report.rows.front().dtype) +
                    " GEMM against cuBLAS on " + (report.device.empty() ? "?" : report.device) +
                    " (driver " + (report.driver.empty() ? "?" : report.driver) + "), " +
                    report.date + "\n\n";
  out += "Measured copy bandwidth (cuMemcpyDtoDAsync, bytes read + written): " +
         (report.copy_gbps ? format_fixed(*report.copy_gbps, 0) + " GB/s" : "not measured") +
         ". Ours and cuBLAS are timed in the same tuning job on the same GPU; ratio = cuBLAS / "
         "ours; \"of copy BW\" = (M·K + N·K + M·N) elements / our time / copy bandwidth.\n\n";
  out +=
      "| M×N×K | best config | ours | cuBLAS | ratio | TFLOP/s | of copy BW | target | variants "
      "measured | tuning wall time |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  std::string notes;
  for (const GemmRow& row : report.rows) {
    const GemmFigures f = gemm_figures(row, report.copy_gbps);
    out += "| " + shape_cell(row.shape) + " | " + config_text(row.config) + " | " +
           format_us(row.ours_us) + " | " + format_us(row.cublas_us) + " | " +
           (f.ratio ? format_fixed(*f.ratio, 2) + "×" : "—") + " | " +
           (f.tflops ? format_fixed(*f.tflops, 1) : "—") + " | " +
           (f.bw_fraction ? format_percent(*f.bw_fraction) : "—") + " | " +
           target_text(row.shape, f) + " | " + std::to_string(row.variants_measured) + " | " +
           format_fixed(row.tuning_seconds, 0) + " s |\n";
    if (!row.note.empty()) notes += "- " + shape_cell(row.shape) + ": " + row.note + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  if (!raw_output.empty()) out += "\nRaw output: [" + raw_output + "](" + raw_output + ").\n";
  return out;
}

}  // namespace kt::bench
