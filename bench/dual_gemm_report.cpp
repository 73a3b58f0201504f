#include "bench/dual_gemm_report.hpp"

#include <stdexcept>

#include "bench/bench_math.hpp"
#include "bench/gemm_report.hpp"  // config_text
#include "bench/report_fields.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

constexpr const char* kShapeForm = "GxMxNxK";

int element_bytes(const std::string& dtype) {
  return dtype == "fp32" || dtype == "f32" ? 4 : 2;
}

std::string shape_cell(const DualGemmShape& s) {
  return dims_label({s.g, s.m, s.n, s.k}, "×");
}

}  // namespace

std::string dual_shape_label(const DualGemmShape& s) {
  return dims_label({s.g, s.m, s.n, s.k});
}

DualGemmShape parse_dual_shape_label(const std::string& text) {
  DualGemmShape shape;
  const auto dims = parse_dims_label(text, 4, "dual GEMM shape", kShapeForm, shape.budget);
  shape.g = dims[0];
  shape.m = dims[1];
  shape.n = dims[2];
  shape.k = dims[3];
  return shape;
}

std::vector<DualGemmShape> default_dual_gemm_shapes() {
  std::vector<DualGemmShape> shapes;
  for (std::int64_t m : {64, 128, 256}) shapes.push_back({8, m, 4096, 7168});
  shapes.push_back({8, 128, 7168, 2048});
  for (std::int64_t m : {192, 320}) shapes.push_back({2, m, 3072, 4096});
  for (std::int64_t m : {128, 384}) shapes.push_back({2, m, 4096, 1536});
  return shapes;
}

double dual_gemm_min_bytes(const DualGemmShape& s, int bytes) {
  const double g = static_cast<double>(s.g);
  return g * (static_cast<double>(s.m) * s.k + 2.0 * s.n * s.k + static_cast<double>(s.m) * s.n) *
         bytes;
}

double dual_gemm_tflops(const DualGemmShape& s, double us) {
  return 2.0 * gemm_tflops(s.m, s.n, s.k, us) * static_cast<double>(s.g);
}

DualGemmFigures dual_gemm_figures(const DualGemmRow& row, std::optional<double> copy_gbps) {
  DualGemmFigures f;
  if (!row.ours_us || !(*row.ours_us > 0)) return f;
  const double ours = *row.ours_us;
  if (row.ratio && row.ratio_low && row.ratio_high) {
    f.ratio = row.ratio;
    f.ratio_low = row.ratio_low;
    f.ratio_high = row.ratio_high;
  } else if (row.unfused_us && *row.unfused_us > 0) {
    f.ratio = speed_ratio(*row.unfused_us, ours);
  }
  f.tflops = dual_gemm_tflops(row.shape, ours);
  if (copy_gbps && *copy_gbps > 0)
    f.bw_fraction = bandwidth_fraction(dual_gemm_min_bytes(row.shape, element_bytes(row.dtype)),
                                       ours, *copy_gbps);
  return f;
}

std::optional<DualGemmTarget> dual_gemm_target(const DualGemmShape& s) {
  if (s.g == 8 && s.m == 256 && s.n == 4096 && s.k == 7168) return DualGemmTarget{1.25, {}};
  if (s.m == 64) return DualGemmTarget{{}, 0.90};
  return std::nullopt;
}

std::string dual_target_cell(const DualGemmShape& shape, const DualGemmFigures& f) {
  const auto target = dual_gemm_target(shape);
  if (!target) return "—";
  if (target->min_ratio)
    return "≥" + format_fixed(*target->min_ratio, 2) +
           "×: " + ratio_verdict(*target->min_ratio, f.ratio, f.ratio_low, f.ratio_high);
  const std::string text = "≥" + format_percent(*target->min_bw_fraction) + " BW: ";
  if (!f.bw_fraction) return text + "no result";
  return text + (*f.bw_fraction >= *target->min_bw_fraction ? "met" : "missed");
}

nlohmann::json dual_gemm_report_to_json(const DualGemmReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const DualGemmRow& row : report.rows) {
    const DualGemmFigures f = dual_gemm_figures(row, report.copy_gbps);
    nlohmann::json r = {{"shape", dual_shape_label(row.shape)},
                        {"dtype", row.dtype},
                        {"config", row.config},
                        {"ours_us", number_or_null(row.ours_us)},
                        {"unfused_us", number_or_null(row.unfused_us)},
                        {"ratio", number_or_null(f.ratio)},
                        {"ratio_low", number_or_null(f.ratio_low)},
                        {"ratio_high", number_or_null(f.ratio_high)},
                        {"tflops", number_or_null(f.tflops)},
                        {"bw_fraction", number_or_null(f.bw_fraction)},
                        {"variants_measured", row.variants_measured},
                        {"tuning_seconds", row.tuning_seconds},
                        {"first_pass_us", number_or_null(row.first_pass_us)},
                        {"baseline", row.baseline},
                        {"job_id", row.job_id}};
    if (!row.note.empty()) r["note"] = row.note;
    rows.push_back(std::move(r));
  }
  return {{"device", report.device},
          {"driver", report.driver},
          {"date", report.date},
          {"copy_gbps", number_or_null(report.copy_gbps)},
          {"rows", rows}};
}

DualGemmReport dual_gemm_report_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a dual GEMM report is a JSON object");
  DualGemmReport report;
  report.device = read_text(j, "device");
  report.driver = read_text(j, "driver");
  report.date = read_text(j, "date");
  report.copy_gbps = read_number(j, "copy_gbps");
  const nlohmann::json rows = j.value("rows", nlohmann::json::array());
  if (!rows.is_array()) throw std::invalid_argument("field 'rows' is not an array");
  for (const nlohmann::json& r : rows) {
    if (!r.is_object()) throw std::invalid_argument("a row is not a JSON object");
    DualGemmRow row;
    row.shape = parse_dual_shape_label(read_text(r, "shape"));
    row.dtype = r.contains("dtype") ? read_text(r, "dtype") : "bf16";
    row.config = r.value("config", nlohmann::json());
    row.ours_us = read_number(r, "ours_us");
    row.unfused_us = read_number(r, "unfused_us");
    read_interval(r, row.ratio_low, row.ratio_high);
    if (row.ratio_low) row.ratio = read_number(r, "ratio");  // else derived from the medians
    row.first_pass_us = read_number(r, "first_pass_us");
    row.baseline = r.value("baseline", nlohmann::json());
    row.variants_measured =
        static_cast<std::int64_t>(read_number(r, "variants_measured").value_or(0));
    row.tuning_seconds = read_number(r, "tuning_seconds").value_or(0);
    row.job_id = static_cast<std::int64_t>(read_number(r, "job_id").value_or(0));
    row.note = read_text(r, "note");
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string render_dual_gemm_table(const DualGemmReport& report, const std::string& raw_output) {
  std::string out = "### " + std::string(report.rows.empty() ? "" : report.rows.front().dtype) +
                    " grouped dual GEMM with SiLU against the unfused path on " +
                    (report.device.empty() ? "?" : report.device) + " (driver " +
                    (report.driver.empty() ? "?" : report.driver) + "), " + report.date + "\n\n";
  out +=
      "C_g = silu(A_g·B1_gᵀ) ⊙ (A_g·B2_gᵀ) for each of G groups, one launch (`dual_gemm_silu`). "
      "Unfused baseline: per group two cuBLASLt GEMMs (16-bit outputs) and the element-wise "
      "SiLU-multiply kernel, what a user runs without kerntune. Ours and the unfused path come "
      "from the job's final comparison: the top first-pass variants and the baseline re-measured "
      "interleaved in one freshly started worker process, in the same job on the same GPU; "
      "ratio = unfused / ours with a bootstrap 95% interval [low, high]. A ratio target is met "
      "only when the interval's low end is above it.\n\n";
  out += "Measured copy bandwidth (cuMemcpyDtoDAsync, bytes read + written): " +
         (report.copy_gbps ? format_fixed(*report.copy_gbps, 0) + " GB/s" : "not measured") +
         "; \"of copy BW\" = the bandwidth floor (A, B1, B2 read once, C written once: "
         "G·(M·K + 2·N·K + M·N) elements) / our time / copy bandwidth. TFLOP/s = 4·G·M·N·K / "
         "our time.\n\n";
  out +=
      "| G×M×N×K | best config | ours | unfused | ratio (95% interval) | TFLOP/s | of copy BW | "
      "target | variants measured | tuning wall time |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  std::string notes;
  for (const DualGemmRow& row : report.rows) {
    const DualGemmFigures f = dual_gemm_figures(row, report.copy_gbps);
    out += "| " + shape_cell(row.shape) + " | " + config_text(row.config) + " | " +
           format_us(row.ours_us) + " | " + format_us(row.unfused_us) + " | " +
           ratio_interval_cell(f.ratio, f.ratio_low, f.ratio_high) + " | " +
           (f.tflops ? format_fixed(*f.tflops, 1) : "—") + " | " +
           (f.bw_fraction ? format_percent(*f.bw_fraction) : "—") + " | " +
           dual_target_cell(row.shape, f) + " | " + std::to_string(row.variants_measured) + " | " +
           format_fixed(row.tuning_seconds, 0) + " s |\n";
    if (!row.note.empty()) notes += "- " + shape_cell(row.shape) + ": " + row.note + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  if (!raw_output.empty()) out += "\nRaw output: [" + raw_output + "](" + raw_output + ").\n";
  return out;
}

}  // namespace kt::bench
