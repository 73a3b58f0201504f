#include "bench/attention_report.hpp"

#include <stdexcept>

#include "bench/gemm_report.hpp"  // config_text
#include "bench/report_fields.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

constexpr const char* kShapeForm = "BxHxSxD[c]";

std::string shape_cell(const AttentionShape& s) {
  return dims_label({s.b, s.h, s.s, s.d}, "×");
}

std::optional<double> json_number(const nlohmann::json& j, const char* field) {
  if (!j.is_object() || !j.contains(field) || !j.at(field).is_number()) return std::nullopt;
  return j.at(field).get<double>();
}

std::string json_text(const nlohmann::json& j, const char* field) {
  return j.is_object() && j.contains(field) && j.at(field).is_string()
             ? j.at(field).get<std::string>()
             : "";
}

std::string sdpa_cell(const AttentionRow& row) {
  if (!row.sdpa_us) return "—";
  return format_us(row.sdpa_us) + (row.sdpa_backend.empty() ? "" : " (" + row.sdpa_backend + ")");
}

std::string timing_cell(const AttentionRow& row) {
  if (row.timing == "graph") return "graph of " + std::to_string(row.graph_launches) + " launches";
  return row.timing.empty() ? "—" : row.timing;
}

}  // namespace

std::string attention_shape_label(const AttentionShape& s) {
  return dims_label({s.b, s.h, s.s, s.d});
}

std::string attention_shape_key(const AttentionShape& s) {
  return attention_shape_label(s) + (s.causal ? "c" : "");
}

AttentionShape parse_attention_shape(const std::string& text) {
  AttentionShape shape;
  std::string dims = text;
  std::string budget;
  if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
    dims = text.substr(0, colon);
    budget = text.substr(colon);
  }
  if (!dims.empty() && dims.back() == 'c') {
    shape.causal = true;
    dims.pop_back();
  }
  try {
    const auto values =
        parse_dims_label(dims + budget, 4, "attention shape", kShapeForm, shape.budget);
    shape.b = values[0];
    shape.h = values[1];
    shape.s = values[2];
    shape.d = values[3];
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("bad attention shape '" + text + "': expected " + kShapeForm +
                                " or " + kShapeForm + ":BUDGET with positive integers (c: causal)");
  }
  return shape;
}

std::vector<AttentionShape> default_attention_shapes() {
  std::vector<AttentionShape> shapes = {{1, 1, 128, 64}, {1, 8, 512, 64}, {2, 8, 128, 64}};
  for (std::int64_t s : {32, 64, 256, 512}) shapes.push_back({1, 1, s, 64});
  shapes.push_back({4, 16, 4096, 128});
  shapes.push_back({2, 16, 8192, 128});
  shapes.push_back({4, 16, 4096, 128, true});
  shapes.push_back({4, 16, 4096, 64});
  return shapes;
}

double attention_tflops(const AttentionShape& s, double us) {
  const double flops = 4.0 * static_cast<double>(s.b) * static_cast<double>(s.h) *
                       static_cast<double>(s.s) * static_cast<double>(s.s) *
                       static_cast<double>(s.d) * (s.causal ? 0.5 : 1.0);
  return flops / (us * 1e-6) / 1e12;
}

double attention_target_ratio(const AttentionShape& s) {
  if (s.s >= 4096 && (s.causal || s.d == 64)) return 0.95;
  return 1.0;
}

std::string attention_target_cell(const AttentionRow& row) {
  const double target = attention_target_ratio(row.shape);
  return "≥" + format_fixed(target, 2) +
         "×: " + ratio_verdict(target, row.ratio, row.ratio_low, row.ratio_high);
}

void apply_sdpa_results(AttentionReport& report, const nlohmann::json& sdpa_output) {
  if (!sdpa_output.is_object())
    throw std::invalid_argument("the SDPA script's output is not a JSON object");
  if (report.device.empty()) report.device = json_text(sdpa_output, "device");
  if (report.driver.empty()) report.driver = json_text(sdpa_output, "driver");
  if (report.torch.empty()) report.torch = json_text(sdpa_output, "torch");
  const nlohmann::json shapes = sdpa_output.value("shapes", nlohmann::json::array());
  for (AttentionRow& row : report.rows) {
    const std::string key = attention_shape_key(row.shape);
    const nlohmann::json* found = nullptr;
    if (shapes.is_array())
      for (const nlohmann::json& s : shapes)
        if (json_text(s, "key") == key && json_text(s, "dtype") == row.dtype) found = &s;
    auto add_note = [&row](const std::string& note) {
      row.note += (row.note.empty() ? "" : "; ") + note;
    };
    if (found == nullptr) {
      if (row.job_us) add_note("not in the SDPA script's output");
      continue;
    }
    const nlohmann::json& s = *found;
    const nlohmann::json sdpa = s.value("sdpa", nlohmann::json::object());
    row.sdpa_flash_us = json_number(sdpa.value("flash", nlohmann::json()), "median_us");
    row.sdpa_cudnn_us = json_number(sdpa.value("cudnn", nlohmann::json()), "median_us");
    row.sdpa_default_us = json_number(sdpa.value("default", nlohmann::json()), "median_us");
    row.sdpa_us = json_number(s, "sdpa_us");
    row.sdpa_backend = json_text(s, "sdpa_backend");
    row.timing = json_text(s, "timing");
    row.graph_launches = static_cast<std::int64_t>(json_number(s, "graph_launches").value_or(0));
    row.max_abs_error = json_number(s, "max_abs_error");
    const nlohmann::json best = s.value("best", nlohmann::json());
    if (best.is_object() && best.contains("config") && best.at("config").is_object())
      row.config = best.at("config");
    row.ours_us = json_number(s, "ours_us");
    row.ratio = json_number(s, "ratio");
    row.ratio_low = json_number(s, "ratio_low");
    row.ratio_high = json_number(s, "ratio_high");
    if (!row.ratio_low || !row.ratio_high) row.ratio_low = row.ratio_high = std::nullopt;
    const std::string error = json_text(s, "error");
    if (!error.empty()) add_note("SDPA script: " + error);
  }
}

nlohmann::json attention_report_to_json(const AttentionReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const AttentionRow& row : report.rows) {
    const std::optional<double> tflops =
        row.ours_us && *row.ours_us > 0
            ? std::optional<double>(attention_tflops(row.shape, *row.ours_us))
            : std::nullopt;
    nlohmann::json r = {
        {"shape", attention_shape_label(row.shape)},
        {"causal", row.shape.causal},
        {"dtype", row.dtype},
        {"config", row.config},
        {"ours_us", number_or_null(row.ours_us)},
        {"sdpa_us", number_or_null(row.sdpa_us)},
        {"sdpa_backend",
         row.sdpa_backend.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.sdpa_backend)},
        {"ratio", number_or_null(row.ratio)},
        {"ratio_low", number_or_null(row.ratio_low)},
        {"ratio_high", number_or_null(row.ratio_high)},
        {"tflops", number_or_null(tflops)},
        {"variants_measured", row.variants_measured},
        {"tuning_seconds", row.tuning_seconds},
        {"sdpa_flash_us", number_or_null(row.sdpa_flash_us)},
        {"sdpa_cudnn_us", number_or_null(row.sdpa_cudnn_us)},
        {"sdpa_default_us", number_or_null(row.sdpa_default_us)},
        {"timing", row.timing.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.timing)},
        {"graph_launches", row.graph_launches},
        {"max_abs_error", number_or_null(row.max_abs_error)},
        {"job_us", number_or_null(row.job_us)},
        {"job_id", row.job_id}};
    if (!row.note.empty()) r["note"] = row.note;
    rows.push_back(std::move(r));
  }
  return {{"device", report.device},
          {"driver", report.driver},
          {"date", report.date},
          {"torch", report.torch},
          {"rows", rows}};
}

AttentionReport attention_report_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("an attention report is a JSON object");
  AttentionReport report;
  report.device = read_text(j, "device");
  report.driver = read_text(j, "driver");
  report.date = read_text(j, "date");
  report.torch = read_text(j, "torch");
  const nlohmann::json rows = j.value("rows", nlohmann::json::array());
  if (!rows.is_array()) throw std::invalid_argument("field 'rows' is not an array");
  for (const nlohmann::json& r : rows) {
    if (!r.is_object()) throw std::invalid_argument("a row is not a JSON object");
    AttentionRow row;
    row.shape = parse_attention_shape(read_text(r, "shape"));
    if (r.contains("causal") && !r.at("causal").is_boolean())
      throw std::invalid_argument("field 'causal' is not a boolean");
    row.shape.causal = r.value("causal", false);
    row.dtype = r.contains("dtype") ? read_text(r, "dtype") : "bf16";
    row.config = r.value("config", nlohmann::json());
    row.ours_us = read_number(r, "ours_us");
    row.sdpa_us = read_number(r, "sdpa_us");
    row.sdpa_backend = read_text(r, "sdpa_backend");
    row.ratio = read_number(r, "ratio");
    read_interval(r, row.ratio_low, row.ratio_high);
    row.sdpa_flash_us = read_number(r, "sdpa_flash_us");
    row.sdpa_cudnn_us = read_number(r, "sdpa_cudnn_us");
    row.sdpa_default_us = read_number(r, "sdpa_default_us");
    row.timing = read_text(r, "timing");
    row.graph_launches = static_cast<std::int64_t>(read_number(r, "graph_launches").value_or(0));
    row.max_abs_error = read_number(r, "max_abs_error");
    row.job_us = read_number(r, "job_us");
    row.variants_measured =
        static_cast<std::int64_t>(read_number(r, "variants_measured").value_or(0));
    row.tuning_seconds = read_number(r, "tuning_seconds").value_or(0);
    row.job_id = static_cast<std::int64_t>(read_number(r, "job_id").value_or(0));
    row.note = read_text(r, "note");
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string render_attention_table(const AttentionReport& report, const std::string& raw_output) {
  std::string out = "### Attention forward against PyTorch SDPA on " +
                    (report.device.empty() ? "?" : report.device) + " (driver " +
                    (report.driver.empty() ? "?" : report.driver) + ", torch " +
                    (report.torch.empty() ? "?" : report.torch) + "), " + report.date + "\n\n";
  out +=
      "O = softmax(Q·Kᵀ/√D [causal mask])·V, Q, K, V, O in [B, H, S, D] (`attention_fwd`). Each "
      "shape is tuned by a kerntune job; then `bench/sdpa_baseline.py` loads the job's "
      "final-comparison candidates (their cubins, launched as the worker launches them) and "
      "times them interleaved with `torch.nn.functional.scaled_dot_product_attention` in one "
      "process on the same GPU: each round runs every side once, L2 flushed by a read of a "
      "buffer twice its size before each trial, CUDA events, medians; launch-bound shapes are "
      "timed as CUDA graphs of N launches on both sides. SDPA runs with the flash backend "
      "forced, with cuDNN forced, and with PyTorch's default choice; the baseline is the "
      "fastest of them (named in the column). Before timing, each candidate's output is "
      "checked against SDPA's on the same inputs (per element, twice the family's tolerance: "
      "both are within it of the exact result). ratio = SDPA / ours with a bootstrap 95% "
      "interval over the rounds; a target is met only when the interval's low end is above it. "
      "\"job median\": our winner's median in the tuning job's own final comparison (worker "
      "protocol), for reference. TFLOP/s = 4·B·H·S²·D (half of it causal) / our time.\n\n";
  out +=
      "| B×H×S×D | causal | dtype | best config | ours | SDPA (backend) | ratio (95% interval) | "
      "TFLOP/s | timing | target | job median | variants measured | tuning wall time |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  std::string notes;
  for (const AttentionRow& row : report.rows) {
    out += "| " + shape_cell(row.shape) + " | " + (row.shape.causal ? "yes" : "no") + " | " +
           row.dtype + " | " + config_text(row.config) + " | " + format_us(row.ours_us) + " | " +
           sdpa_cell(row) + " | " + ratio_interval_cell(row.ratio, row.ratio_low, row.ratio_high) +
           " | " +
           (row.ours_us && *row.ours_us > 0
                ? format_fixed(attention_tflops(row.shape, *row.ours_us), 1)
                : "—") +
           " | " + timing_cell(row) + " | " + attention_target_cell(row) + " | " +
           format_us(row.job_us) + " | " + std::to_string(row.variants_measured) + " | " +
           format_fixed(row.tuning_seconds, 0) + " s |\n";
    if (!row.note.empty())
      notes += "- " + shape_cell(row.shape) + (row.shape.causal ? " causal" : "") + " " +
               row.dtype + ": " + row.note + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  if (!raw_output.empty()) out += "\nRaw output: [" + raw_output + "](" + raw_output + ").\n";
  return out;
}

}  // namespace kt::bench
