#include "bench/gemm_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "bench/bench_math.hpp"
#include "bench/gemm_shape_sets.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {
namespace {

constexpr int kBf16Bytes = 2;
constexpr double kMiB = 1024.0 * 1024.0;

// What a report from before the interleaved final comparison measured as "cublas_us".
const char* const kLegacyBaselineKind = "cublas_gemm_ex";

int element_bytes(const std::string& dtype) {
  return dtype == "fp32" || dtype == "f32" ? 4 : kBf16Bytes;  // bf16 / fp16
}

bool is_fp8(const std::string& dtype) {
  return dtype == "e4m3" || dtype == "e5m2";
}

// The bytes a GEMM must move at least: fp8 operands (1 byte) and a bf16 C, or all in the dtype.
double min_bytes(const GemmShape& shape, const std::string& dtype) {
  if (is_fp8(dtype))
    return gemm_min_bytes(shape.m, shape.n, shape.k, 1) +
           static_cast<double>(shape.m) * static_cast<double>(shape.n);
  return gemm_min_bytes(shape.m, shape.n, shape.k, element_bytes(dtype));
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

nlohmann::json read_object_or_null(const nlohmann::json& j, const char* field) {
  nlohmann::json value = j.value(field, nlohmann::json());
  if (!value.is_null() && !value.is_object())
    throw std::invalid_argument(std::string("field '") + field + "' is not an object");
  return value;
}

// An interval is both ends or none.
void read_interval(const nlohmann::json& j, std::optional<double>& low,
                   std::optional<double>& high) {
  low = read_number(j, "ratio_low");
  high = read_number(j, "ratio_high");
  if (low.has_value() != high.has_value())
    throw std::invalid_argument("fields 'ratio_low' and 'ratio_high' must both be set or null");
}

std::int64_t integer_field(const nlohmann::json& j, const char* field, std::int64_t fallback) {
  return j.contains(field) && j.at(field).is_number_integer() ? j.at(field).get<std::int64_t>()
                                                              : fallback;
}

std::string number_text(const nlohmann::json& j, const char* field) {
  return j.contains(field) && j.at(field).is_number() ? j.at(field).dump() : "?";
}

std::string mib_text(double bytes) {
  const double mib = bytes / kMiB;
  return format_fixed(mib, mib == static_cast<double>(static_cast<std::int64_t>(mib)) ? 0 : 1);
}

bool has_interval(const GemmFigures& figures) {
  return figures.ratio && figures.ratio_low && figures.ratio_high;
}

const std::string kModelsSetName = kModelsSet;

double geometric_mean(const std::vector<double>& values) {
  double log_sum = 0;
  for (double value : values) log_sum += std::log(value);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

bool is_cublas_kind(const nlohmann::json& baseline) {
  return baseline.is_object() && baseline.contains("kind") && baseline.at("kind").is_string() &&
         baseline.at("kind").get<std::string>().rfind("cublas", 0) == 0;
}

// Our template, or the baseline's name when it answers: "cublas" for a cuBLAS kind.
nlohmann::json answer_template(const GemmRow& row, GemmAnswer answer) {
  if (answer == GemmAnswer::ours && row.config.is_object() && row.config.contains("template"))
    return row.config.at("template");
  if (answer != GemmAnswer::baseline) return nullptr;
  if (is_cublas_kind(row.baseline)) return "cublas";
  return nlohmann::json(row.baseline.is_object()
                            ? row.baseline.value("kind", std::string("baseline"))
                            : std::string("baseline"));
}

// The answer cell: "ours" or "cuBLAS" (the baseline's kind when it is not cuBLAS); "—" unknown.
std::string answer_cell(const GemmRow& row, GemmAnswer answer) {
  if (answer == GemmAnswer::ours) return "ours";
  if (answer == GemmAnswer::unknown) return "—";
  if (is_cublas_kind(row.baseline)) return "cuBLAS";
  return row.baseline.is_object() ? row.baseline.value("kind", std::string("baseline"))
                                  : std::string("baseline");
}

nlohmann::json geomean_json(const std::optional<RatioGeomean>& g) {
  if (!g) return nullptr;
  return {{"value", g->value}, {"low", g->low}, {"high", g->high}, {"rows", g->rows}};
}

std::string geomean_text(const RatioGeomean& g) {
  return format_fixed(g.value, 3) + "× [" + format_fixed(g.low, 3) + ", " +
         format_fixed(g.high, 3) + "] over " + std::to_string(g.rows) + " rows";
}

// The lines under the table: who answers how often, and the figures over the model set.
std::string summary_text(const GemmSummary& s) {
  std::string text =
      "Answer (the daemon's rule, `GET /v1/best`: ours only when the ratio's "
      "interval is above 1, else the baseline): our kernels in " +
      std::to_string(s.ours) + " of " + std::to_string(s.rows) + " rows, the " + "baseline in " +
      std::to_string(s.baseline);
  if (s.unknown > 0) text += ", no result in " + std::to_string(s.unknown);
  text += ".\n";
  if (s.model_rows == 0) return text;
  text += "\nModel shapes (" + std::to_string(s.model_rows) + " rows): our kernels win " +
          std::to_string(s.model_ours) + ", the baseline " + std::to_string(s.model_baseline) +
          (s.model_unknown > 0 ? ", no result " + std::to_string(s.model_unknown) : "") +
          "; our best variant's ratio is below 1.0× in " + std::to_string(s.model_ours_below_one) +
          " (the baseline answers those). Geometric mean of the ratio (low and high: every row at "
          "its interval's end at once): our best variants " +
          (s.models_ours ? geomean_text(*s.models_ours) : std::string("— (no interval)")) +
          "; the answer (ours where it wins, 1.00× where the baseline does) " +
          (s.models_answer ? geomean_text(*s.models_answer) + "; target ≥" +
                                 format_fixed(kModelsGeomeanTarget, 2) +
                                 "×: " + models_target_status(*s.models_answer)
                           : std::string("—")) +
          ".\n";
  return text;
}

std::string shape_cell(const GemmShape& shape) {
  return std::to_string(shape.m) + "×" + std::to_string(shape.n) + "×" + std::to_string(shape.k);
}

std::string spread_cell(const GemmFigures& figures) {
  if (!figures.spread) return "—";
  const RatioSpread& s = *figures.spread;
  return format_percent(s.spread) + " (" + format_fixed(s.min, 2) + "–" + format_fixed(s.max, 2) +
         "×, " + std::to_string(s.runs) + " runs)";
}

// The name every described baseline of the report shares, or "" when they differ or none is.
std::string shared_baseline_name(const GemmReport& report) {
  std::string shared;
  for (const GemmRow& row : report.rows) {
    if (!row.baseline.is_object()) continue;
    const std::string name = baseline_name(row.baseline);
    if (!shared.empty() && name != shared) return "";
    shared = name;
  }
  return shared;
}

// One sentence on what the baseline is, from the first row that describes it.
std::string baseline_sentence(const GemmReport& report) {
  const auto described = std::find_if(report.rows.begin(), report.rows.end(),
                                      [](const GemmRow& r) { return r.baseline.is_object(); });
  if (described == report.rows.end()) return "The baseline is not described in this report.";
  const nlohmann::json& b = described->baseline;
  const std::string kind = b.value("kind", std::string());
  if (kind == "cublaslt_gemm")
    return "Baseline: " + b.value("library", std::string("cublasLt")) + " with a " +
           (b.contains("workspace_limit_bytes") && b.at("workspace_limit_bytes").is_number()
                ? mib_text(b.at("workspace_limit_bytes").get<double>())
                : std::string("?")) +
           " MiB workspace, the fastest of its heuristic's top " +
           number_text(b, "heuristic_algorithms") +
           " algorithms for the shape, chosen by timing each on this GPU (\"baseline "
           "algorithm\": its index in the heuristic's list, 0 = first choice, and its cublasLt "
           "config).";
  if (kind == kLegacyBaselineKind)
    return "Baseline: cuBLAS `cublasGemmEx` with its default heuristic and no workspace, timed "
           "once at the start of each tuning job (a report from before the final comparison).";
  return "Baseline: " + baseline_name(b) + ".";
}

std::string figures_sentence(const GemmReport& report, bool any_spread) {
  std::size_t with_interval = 0, with_ratio = 0;
  for (const GemmRow& row : report.rows) {
    const GemmFigures f = gemm_figures(row, report.copy_gbps);
    with_ratio += f.ratio ? 1 : 0;
    with_interval += has_interval(f) ? 1 : 0;
  }
  std::string text;
  if (with_interval > 0)
    text +=
        " Ours and the baseline come from the job's final comparison: the top first-pass "
        "variants and the baseline re-measured interleaved in one freshly started worker "
        "process, in the same job on the same GPU; ratio = baseline / ours with a bootstrap 95% "
        "interval [low, high]. A target is met only when the interval's low end is above it.";
  if (with_interval < with_ratio)
    text += with_interval > 0
                ? " Rows marked \"(no interval)\" are first-pass medians (ours and the baseline "
                  "timed apart in the same job), so no target is called met on them."
                : " Ours and the baseline are first-pass medians timed apart in the same tuning "
                  "job on the same GPU; ratio = baseline / ours, with no interval, so no target "
                  "is called met.";
  if (any_spread)
    text +=
        " Each shape's final comparison was run again in separate jobs (pinned to the first "
        "run's candidates, each compared in a freshly started worker process); the row shows the "
        "first run and \"run-to-run spread\" = (max − min) / median of the ratio over all runs.";
  return text;
}

}  // namespace

std::optional<GemmTarget> shape_target(const GemmShape& shape, const std::string& device) {
  if (shape.set == kModelsSetName) return std::nullopt;
  if (shape.set == kFp8Set) {
    // fp8: no row below the library; decode rows 1.1x and, on an H200, 80% of copy bandwidth.
    if (shape.m > 128) return GemmTarget{1.0, {}};
    if (device.find("H200") == std::string::npos) return GemmTarget{1.1, {}};
    return GemmTarget{1.1, 0.8};
  }
  if (shape.m == shape.n && shape.n == shape.k && shape.m >= 4096) return GemmTarget{1.03, {}};
  const bool decode = shape.n == 4096 && shape.k == 7168;
  if (!decode || device.find("H200") == std::string::npos) return std::nullopt;
  if (shape.m <= 64) return GemmTarget{1.2, 0.85};
  if (shape.m == 128) return GemmTarget{1.0, {}};
  return std::nullopt;
}

std::optional<RatioSpread> ratio_spread(const std::vector<GemmRepeat>& repeats) {
  std::vector<double> ratios;
  for (const GemmRepeat& repeat : repeats)
    if (repeat.ratio && *repeat.ratio > 0) ratios.push_back(*repeat.ratio);
  if (ratios.size() < 2) return std::nullopt;
  const Spread s = run_to_run_spread(ratios);  // the arithmetic is the same for ratios
  return RatioSpread{s.runs, s.min_us, s.max_us, s.median_us, s.spread};
}

GemmFigures gemm_figures(const GemmRow& row, std::optional<double> copy_gbps) {
  GemmFigures figures;
  figures.spread = ratio_spread(row.repeats);
  if (!row.ours_us || !(*row.ours_us > 0)) return figures;
  const double ours = *row.ours_us;
  if (row.ratio && row.ratio_low && row.ratio_high) {
    figures.ratio = row.ratio;
    figures.ratio_low = row.ratio_low;
    figures.ratio_high = row.ratio_high;
  } else if (row.baseline_us && *row.baseline_us > 0) {
    figures.ratio = speed_ratio(*row.baseline_us, ours);
  }
  figures.tflops = gemm_tflops(row.shape.m, row.shape.n, row.shape.k, ours);
  if (copy_gbps && *copy_gbps > 0)
    figures.bw_fraction = bandwidth_fraction(min_bytes(row.shape, row.dtype), ours, *copy_gbps);
  return figures;
}

GemmAnswer gemm_answer(const GemmRow& row, const GemmFigures& figures) {
  const bool has_ours = row.ours_us && *row.ours_us > 0;
  const bool has_baseline = row.baseline_us && *row.baseline_us > 0;
  if (!has_ours) return has_baseline ? GemmAnswer::baseline : GemmAnswer::unknown;
  if (has_interval(figures))
    return *figures.ratio_low > 1.0 ? GemmAnswer::ours : GemmAnswer::baseline;
  if (figures.ratio) return *figures.ratio > 1.0 ? GemmAnswer::ours : GemmAnswer::baseline;
  return GemmAnswer::ours;  // no baseline time: nothing to compare with
}

std::string gemm_answer_name(GemmAnswer answer) {
  switch (answer) {
    case GemmAnswer::ours:
      return "ours";
    case GemmAnswer::baseline:
      return "baseline";
    case GemmAnswer::unknown:
      break;
  }
  return "";
}

GemmSummary gemm_summary(const GemmReport& report) {
  GemmSummary summary;
  std::vector<double> ours_value, ours_low, ours_high;
  std::vector<double> answer_value, answer_low, answer_high;
  for (const GemmRow& row : report.rows) {
    const GemmFigures f = gemm_figures(row, report.copy_gbps);
    const GemmAnswer answer = gemm_answer(row, f);
    ++summary.rows;
    summary.ours += answer == GemmAnswer::ours ? 1 : 0;
    summary.baseline += answer == GemmAnswer::baseline ? 1 : 0;
    summary.unknown += answer == GemmAnswer::unknown ? 1 : 0;
    if (row.shape.set != kModelsSetName) continue;
    ++summary.model_rows;
    summary.model_ours += answer == GemmAnswer::ours ? 1 : 0;
    summary.model_baseline += answer == GemmAnswer::baseline ? 1 : 0;
    summary.model_unknown += answer == GemmAnswer::unknown ? 1 : 0;
    if (f.ratio && *f.ratio < 1.0) ++summary.model_ours_below_one;
    if (has_interval(f)) {
      ours_value.push_back(*f.ratio);
      ours_low.push_back(*f.ratio_low);
      ours_high.push_back(*f.ratio_high);
    }
    if (answer == GemmAnswer::baseline) {
      answer_value.push_back(1.0);
      answer_low.push_back(1.0);
      answer_high.push_back(1.0);
    } else if (answer == GemmAnswer::ours && f.ratio) {
      answer_value.push_back(*f.ratio);
      answer_low.push_back(f.ratio_low.value_or(*f.ratio));
      answer_high.push_back(f.ratio_high.value_or(*f.ratio));
    }
  }
  auto geomean = [](const std::vector<double>& v, const std::vector<double>& low,
                    const std::vector<double>& high) -> std::optional<RatioGeomean> {
    if (v.empty()) return std::nullopt;
    return RatioGeomean{geometric_mean(v), geometric_mean(low), geometric_mean(high),
                        static_cast<int>(v.size())};
  };
  summary.models_ours = geomean(ours_value, ours_low, ours_high);
  summary.models_answer = geomean(answer_value, answer_low, answer_high);
  return summary;
}

std::string models_target_status(const RatioGeomean& answer) {
  if (answer.low > kModelsGeomeanTarget) return "met";
  if (answer.high < kModelsGeomeanTarget) return "missed";
  return "not shown (interval spans target)";
}

std::string target_cell(const GemmShape& shape, const GemmFigures& figures,
                        const std::string& device) {
  const auto target = shape_target(shape, device);
  if (!target) return "—";
  // 1.2 and 1.0 with one decimal, 1.03 with two.
  const bool tenths = std::abs(target->min_ratio * 10 - std::round(target->min_ratio * 10)) < 1e-9;
  std::string text = "≥" + format_fixed(target->min_ratio, tenths ? 1 : 2) + "×";
  if (target->min_bw_fraction) text += ", ≥" + format_percent(*target->min_bw_fraction) + " BW";
  if (!figures.ratio) return text + ": no result";
  const bool bandwidth_met =
      !target->min_bw_fraction ||
      (figures.bw_fraction && *figures.bw_fraction >= *target->min_bw_fraction);
  if (!has_interval(figures)) {
    // A point ratio can show a miss but not a win: noise alone can put it over the target.
    if (!bandwidth_met || *figures.ratio < target->min_ratio) return text + ": missed";
    return text + ": not shown (no interval)";
  }
  if (!bandwidth_met || *figures.ratio_high < target->min_ratio) return text + ": missed";
  if (*figures.ratio_low > target->min_ratio) return text + ": met";
  return text + ": not shown (interval spans target)";
}

std::string baseline_name(const nlohmann::json& baseline) {
  if (!baseline.is_object() || !baseline.contains("kind") || !baseline.at("kind").is_string())
    return "baseline (not described)";
  const std::string kind = baseline.at("kind").get<std::string>();
  if (kind == "cublaslt_gemm") {
    std::string name = "cublasLt best of " + number_text(baseline, "heuristic_algorithms");
    if (baseline.contains("workspace_limit_bytes") &&
        baseline.at("workspace_limit_bytes").is_number())
      name += " (" + mib_text(baseline.at("workspace_limit_bytes").get<double>()) + " MiB ws)";
    return name;
  }
  if (kind == kLegacyBaselineKind) return "cuBLAS cublasGemmEx (default heuristic, no workspace)";
  return kind;
}

std::string baseline_algorithm_text(const nlohmann::json& baseline) {
  if (!baseline.is_object() || !baseline.contains("algorithm_index") ||
      !baseline.contains("algorithm") || !baseline.at("algorithm").is_object())
    return "—";
  const nlohmann::json& algorithm = baseline.at("algorithm");
  return "algo " + number_text(baseline, "algorithm_index") + " of " +
         number_text(baseline, "heuristic_algorithms") + " (id " + number_text(algorithm, "id") +
         ", tile " + number_text(algorithm, "tile") + ", stages " +
         number_text(algorithm, "stages") + ", split-K " + number_text(algorithm, "split_k") + ")";
}

nlohmann::json gemm_report_to_json(const GemmReport& report) {
  nlohmann::json rows = nlohmann::json::array();
  for (const GemmRow& row : report.rows) {
    const GemmFigures figures = gemm_figures(row, report.copy_gbps);
    nlohmann::json repeats = nlohmann::json::array();
    for (const GemmRepeat& repeat : row.repeats) {
      nlohmann::json r = {{"job_id", repeat.job_id},
                          {"ours_us", number_or_null(repeat.ours_us)},
                          {"baseline_us", number_or_null(repeat.baseline_us)},
                          {"ratio", number_or_null(repeat.ratio)},
                          {"ratio_low", number_or_null(repeat.ratio_low)},
                          {"ratio_high", number_or_null(repeat.ratio_high)},
                          {"config", repeat.config}};
      if (!repeat.note.empty()) r["note"] = repeat.note;
      repeats.push_back(std::move(r));
    }
    nlohmann::json j = {{"shape", shape_label(row.shape)},
                        {"dtype", row.dtype},
                        {"config", row.config},
                        {"ours_us", number_or_null(row.ours_us)},
                        {"baseline_us", number_or_null(row.baseline_us)},
                        {"ratio", number_or_null(figures.ratio)},
                        {"ratio_low", number_or_null(figures.ratio_low)},
                        {"ratio_high", number_or_null(figures.ratio_high)},
                        {"baseline", row.baseline},
                        {"first_pass_us", number_or_null(row.first_pass_us)},
                        {"tflops", number_or_null(figures.tflops)},
                        {"bw_fraction", number_or_null(figures.bw_fraction)},
                        {"variants_measured", row.variants_measured},
                        {"tuning_seconds", row.tuning_seconds},
                        {"repeats", std::move(repeats)},
                        {"ratio_spread", figures.spread ? nlohmann::json(figures.spread->spread)
                                                        : nlohmann::json(nullptr)}};
    const GemmAnswer answer = gemm_answer(row, figures);
    j["answer"] = answer == GemmAnswer::unknown ? nlohmann::json(nullptr)
                                                : nlohmann::json(gemm_answer_name(answer));
    j["answer_template"] = answer_template(row, answer);
    if (!row.shape.set.empty()) j["set"] = row.shape.set;
    if (!row.note.empty()) j["note"] = row.note;
    rows.push_back(std::move(j));
  }
  const GemmSummary summary = gemm_summary(report);
  nlohmann::json summary_json = {{"rows", summary.rows},
                                 {"ours", summary.ours},
                                 {"baseline", summary.baseline},
                                 {"no_result", summary.unknown}};
  if (summary.model_rows > 0)
    summary_json["models"] = {
        {"rows", summary.model_rows},
        {"ours", summary.model_ours},
        {"baseline", summary.model_baseline},
        {"no_result", summary.model_unknown},
        {"ours_below_one", summary.model_ours_below_one},
        {"geomean_ours", geomean_json(summary.models_ours)},
        {"geomean_answer", geomean_json(summary.models_answer)},
        {"target", kModelsGeomeanTarget},
        {"target_status", summary.models_answer
                              ? nlohmann::json(models_target_status(*summary.models_answer))
                              : nlohmann::json(nullptr)}};
  nlohmann::json out = {{"device", report.device},
                        {"driver", report.driver},
                        {"date", report.date},
                        {"copy_gbps", number_or_null(report.copy_gbps)},
                        {"rows", rows},
                        {"summary", summary_json}};
  if (!report.scaling.empty()) out["scaling"] = report.scaling;
  return out;
}

GemmReport gemm_report_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("the GEMM report is not a JSON object");
  GemmReport report;
  report.device = read_text(j, "device");
  report.driver = read_text(j, "driver");
  report.date = read_text(j, "date");
  if (j.contains("scaling")) report.scaling = read_text(j, "scaling");
  report.copy_gbps = read_number(j, "copy_gbps");
  if (!j.contains("rows") || !j.at("rows").is_array())
    throw std::invalid_argument("field 'rows' is missing or not an array");
  for (const nlohmann::json& r : j.at("rows")) {
    if (!r.is_object()) throw std::invalid_argument("a row is not a JSON object");
    GemmRow row;
    row.shape = parse_shape_label(read_text(r, "shape"));
    row.shape.set = read_text(r, "set");
    row.dtype = read_text(r, "dtype");
    row.config = read_object_or_null(r, "config");
    row.ours_us = read_number(r, "ours_us");
    row.baseline = read_object_or_null(r, "baseline");
    row.first_pass_us = read_number(r, "first_pass_us");
    if (r.contains("baseline_us")) {
      row.baseline_us = read_number(r, "baseline_us");
    } else if (r.contains("cublas_us")) {
      // Before the interleaved final comparison: one cublasGemmEx median and our first-pass median,
      // no interval.
      row.baseline_us = read_number(r, "cublas_us");
      if (row.baseline.is_null())
        row.baseline = {{"kind", kLegacyBaselineKind},
                        {"note",
                         "cublasGemmEx with its default heuristic and no workspace, timed "
                         "once at the start of the job (read from a report written "
                         "before the interleaved final comparison)"}};
      if (!row.first_pass_us) row.first_pass_us = row.ours_us;
    }
    read_interval(r, row.ratio_low, row.ratio_high);
    if (row.ratio_low) row.ratio = read_number(r, "ratio");  // else derived from the medians
    row.variants_measured =
        static_cast<std::int64_t>(read_number(r, "variants_measured").value_or(0));
    row.tuning_seconds = read_number(r, "tuning_seconds").value_or(0);
    row.note = read_text(r, "note");
    const nlohmann::json repeats = r.value("repeats", nlohmann::json::array());
    if (!repeats.is_array()) throw std::invalid_argument("field 'repeats' is not an array");
    for (const nlohmann::json& p : repeats) {
      if (!p.is_object()) throw std::invalid_argument("a repeat is not a JSON object");
      GemmRepeat repeat;
      repeat.job_id = integer_field(p, "job_id", 0);
      repeat.ours_us = read_number(p, "ours_us");
      repeat.baseline_us = read_number(p, "baseline_us");
      repeat.ratio = read_number(p, "ratio");
      read_interval(p, repeat.ratio_low, repeat.ratio_high);
      repeat.config = read_object_or_null(p, "config");
      repeat.note = read_text(p, "note");
      row.repeats.push_back(std::move(repeat));
    }
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

std::string ratio_cell(const GemmFigures& figures) {
  if (!figures.ratio) return "—";
  const std::string ratio = format_fixed(*figures.ratio, 2) + "×";
  if (!has_interval(figures)) return ratio + " (no interval)";
  return ratio + " [" + format_fixed(*figures.ratio_low, 2) + ", " +
         format_fixed(*figures.ratio_high, 2) + "]";
}

std::string render_gemm_table(const GemmReport& report, const std::string& raw_output) {
  const std::string shared_name = shared_baseline_name(report);
  const bool any_spread = std::any_of(report.rows.begin(), report.rows.end(),
                                      [](const GemmRow& row) { return row.repeats.size() > 1; });
  const std::string dtype = report.rows.empty() ? "" : report.rows.front().dtype;
  const std::string scales = report.scaling == "block"    ? " (1x128 and 128x128 block scales)"
                             : report.scaling == "tensor" ? " (per-tensor scales)"
                                                          : "";
  std::string out = "### " + dtype + " GEMM" + scales + " against " +
                    (shared_name.empty() ? "the baseline" : shared_name) + " on " +
                    (report.device.empty() ? "?" : report.device) + " (driver " +
                    (report.driver.empty() ? "?" : report.driver) + "), " + report.date + "\n\n";
  out += baseline_sentence(report) + figures_sentence(report, any_spread) + "\n\n";
  out +=
      "Measured copy bandwidth (cuMemcpyDtoDAsync, bytes read + written): " +
      (report.copy_gbps ? format_fixed(*report.copy_gbps, 0) + " GB/s" : "not measured") +
      (is_fp8(dtype) ? "; \"of copy BW\" = (M·K + N·K) fp8 bytes + 2·M·N bf16 bytes / our time / "
                       "copy bandwidth.\n\n"
                     : "; \"of copy BW\" = (M·K + N·K + M·N) elements / our time / copy "
                       "bandwidth.\n\n");
  out += "| M×N×K | our best config | ours | " + (shared_name.empty() ? "baseline" : shared_name) +
         " | ratio (95% interval) | answer | " + (any_spread ? "run-to-run spread | " : "") +
         "baseline algorithm | TFLOP/s | of copy BW | target | variants measured | tuning wall "
         "time |\n";
  out += "| --- | --- | --- | --- | --- | --- | " + std::string(any_spread ? "--- | " : "") +
         "--- | --- | --- | --- | --- | --- |\n";
  std::string notes;
  for (const GemmRow& row : report.rows) {
    const GemmFigures f = gemm_figures(row, report.copy_gbps);
    out += "| " + shape_cell(row.shape) + " | " + config_text(row.config) + " | " +
           format_us(row.ours_us) + " | " + format_us(row.baseline_us) + " | " + ratio_cell(f) +
           " | " + answer_cell(row, gemm_answer(row, f)) + " | " +
           (any_spread ? spread_cell(f) + " | " : "") + baseline_algorithm_text(row.baseline) +
           " | " + (f.tflops ? format_fixed(*f.tflops, 1) : "—") + " | " +
           (f.bw_fraction ? format_percent(*f.bw_fraction) : "—") + " | " +
           target_cell(row.shape, f, report.device) + " | " +
           std::to_string(row.variants_measured) + " | " + format_fixed(row.tuning_seconds, 0) +
           " s |\n";
    if (!row.note.empty()) notes += "- " + shape_cell(row.shape) + ": " + row.note + "\n";
    // The first run is the row itself; later runs say what differed or went wrong.
    for (std::size_t i = 1; i < row.repeats.size(); ++i) {
      const GemmRepeat& repeat = row.repeats[i];
      const std::string which =
          shape_cell(row.shape) + ", run " + std::to_string(i + 1) +
          (repeat.job_id > 0 ? " (job " + std::to_string(repeat.job_id) + ")" : std::string());
      if (!repeat.note.empty()) notes += "- " + which + ": " + repeat.note + "\n";
      if (repeat.config.is_object() && row.config.is_object() && repeat.config != row.config)
        notes += "- " + which + ": won with " + config_text(repeat.config) + "\n";
    }
  }
  out += "\n" + summary_text(gemm_summary(report));
  if (!notes.empty()) out += "\n" + notes;
  if (!raw_output.empty()) out += "\nRaw output: [" + raw_output + "](" + raw_output + ").\n";
  return out;
}

}  // namespace kt::bench
