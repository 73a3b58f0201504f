#include "server/job_handlers.hpp"

#include <set>

#include "engine/final_figures.hpp"
#include "engine/job_preview.hpp"
#include "engine/job_stats.hpp"
#include "engine/variant_launch.hpp"
#include "engine/warm_start.hpp"
#include "server/job_request.hpp"
#include "server/json_views.hpp"
#include "server/paging.hpp"
#include "server/request_parsing.hpp"
#include "server/result_keys_view.hpp"

namespace kt {
namespace {

JobRecord require_job(AppContext& context, const ApiRequest& request) {
  const std::int64_t id = parse_id(request.path_params.at("id"), "job");
  auto job = context.store.job(id);
  if (!job) throw ApiError(HttpStatus::not_found, "unknown_job", "no job " + std::to_string(id));
  return *job;
}

VariantRecord require_variant(AppContext& context, const ApiRequest& request) {
  const std::int64_t id = parse_id(request.path_params.at("id"), "variant");
  auto variant = context.store.variant(id);
  if (!variant)
    throw ApiError(HttpStatus::not_found, "unknown_variant", "no variant " + std::to_string(id));
  return *variant;
}

std::optional<nlohmann::json> launch_of(AppContext& context, const JobRecord& job,
                                        const VariantRecord& variant, std::string* why) {
  return stored_variant_launch(context.families, context.scheduler.devices(), job, variant, why);
}

}  // namespace

nlohmann::json job_view(AppContext& context, const JobRecord& job) {
  const JobProgress progress = context.store.progress(job.id);
  // The job's best: the winner of its final comparison once there is one, else the fastest
  // first-pass median so far.
  std::optional<VariantRecord> best;
  if (job.final_comparison) best = context.store.variant(job.final_comparison->winner_variant_id);
  if (!best) best = context.store.fastest_variant(job.id);
  nlohmann::json view = job_to_json(job, progress, best, true);
  if (best && view["best"].is_object())
    view["best"]["final"] = final_to_json(final_figures(job, best->id));
  view["pruned"] = pruned_groups_to_json(context.store.pruned_groups(job.id));
  // What speedups are measured against; null reference_us and speedups when it is external.
  if (const Family* family = context.families.find(job.family))
    view["baseline"] = baseline_summary_json(baseline_summary_of(*family));
  // [variants measured, best so far (us)] after every measured variant, for convergence plots.
  nlohmann::json convergence = nlohmann::json::array();
  for (const ConvergencePoint& p : context.store.convergence(job.id))
    convergence.push_back({p.measured, p.best_us});
  view["convergence"] = std::move(convergence);
  JobStatsInput stats;
  stats.wall_seconds = job.wall_seconds;
  stats.gpu_busy_seconds = job.gpu_busy_seconds;
  stats.gpus = job.gpus;
  stats.progress = progress;
  stats.compile_ms = context.store.compile_times_ms(job.id);
  view["stats"] = to_json(compute_job_stats(stats));
  add_staleness(view, job, context);
  view["warm_start"] = nullptr;
  if (!job.warm_start_json.empty()) {
    try {
      view["warm_start"] = to_json(warm_start_from_text(job.warm_start_json));
    } catch (const std::runtime_error&) {
      // shown as null: the runner ignores it too
    }
  }
  return view;
}

TuneOnRequest start_tuning(AppContext& context, const ProblemQuery& problem,
                           const std::string& device_model) {
  try {
    return kt::tune_on_request(problem, device_model, context.store, context.scheduler,
                               submission_host(*problem.family, context));
  } catch (const SubmissionError& error) {
    throw api_error_of(error);
  }
}

namespace {

nlohmann::json optional_seconds(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// POST /v1/jobs?dry_run=1: what the job would be, nothing stored (engine/job_preview.hpp).
ApiResponse preview_response(const JobSubmission& submission, AppContext& context) {
  const NewJob& job = submission.job;
  const Family& family = require_family(context.families, job.family);
  const JobPreview preview = preview_job(submission, family, context.scheduler.metric_families(),
                                         context.scheduler.compile_threads());
  nlohmann::json templates = nlohmann::json::array();
  for (const TemplatePreview& t : preview.templates)
    templates.push_back({{"name", t.name},
                         {"feasible", t.feasible},
                         {"pruned", t.pruned},
                         {"other_arch", t.other_arch}});
  return json_response(HttpStatus::ok,
                       {{"dry_run", true},
                        {"family", job.family},
                        {"shape", to_json(job.shape)},
                        {"dtype", job.dtype},
                        {"mode", std::string(to_string(job.mode))},
                        {"arch", job.arch},
                        {"device_name", job.device_name.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(job.device_name)},
                        {"budget", job.budget},
                        {"templates", templates},
                        {"feasible", preview.feasible},
                        {"pruned", preview.pruned_total},
                        {"to_run", preview.to_run},
                        {"pruned_groups", pruned_groups_to_json(preview.pruned)},
                        {"rates",
                         {{"compile_seconds_each", optional_seconds(preview.compile_seconds_each)},
                          {"measure_seconds_each", optional_seconds(preview.measure_seconds_each)},
                          {"compile_threads", preview.compile_threads}}},
                        {"estimated_seconds", optional_seconds(preview.estimated_seconds)}});
}

}  // namespace

ApiResponse create_job(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {"dry_run"});
  JobSubmission submission = plan_job_request(request.http.body(), context);
  if (request.flag_param("dry_run")) return preview_response(submission, context);
  const JobRecord stored = submit_job(std::move(submission), context.store, context.scheduler);
  ApiResponse response = json_response(HttpStatus::accepted, job_view(context, stored));
  response.headers.emplace_back("Location", "/v1/jobs/" + std::to_string(stored.id));
  return response;
}

ApiResponse get_job(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  return json_response(HttpStatus::ok, job_view(context, require_job(context, request)));
}

ApiResponse get_job_events(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const std::int64_t id = parse_id(request.path_params.at("id"), "job");
  auto snapshot = read_job_snapshot(context.store, id);
  if (!snapshot)
    throw ApiError(HttpStatus::not_found, "unknown_job", "no job " + std::to_string(id));
  ApiResponse response;
  response.content_type = "text/event-stream";
  response.event_stream = std::make_shared<const JobSnapshot>(std::move(*snapshot));
  return response;
}

ApiResponse list_variants(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {"status", "log", "exclude_pruned", "limit", "cursor"});
  const JobRecord job = require_job(context, request);
  const bool with_log = request.flag_param("log");
  VariantPageQuery query;
  query.gated_only = request.flag_param("exclude_pruned");
  query.limit = page_limit(request);
  query.after_id = page_cursor(request);
  std::set<VariantStatus> only;
  if (const auto statuses = request.query_param("status")) {
    std::size_t pos = 0;
    while (pos <= statuses->size()) {
      std::size_t end = statuses->find(',', pos);
      if (end == std::string::npos) end = statuses->size();
      const std::string name = statuses->substr(pos, end - pos);
      const auto status = variant_status_from_string(name);
      if (!status)
        throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                       "unknown variant status " + quote_client_text(name));
      if (*status == VariantStatus::pruned)
        throw ApiError(HttpStatus::bad_request, "invalid_parameter",
                       "pruned configurations are counted, not listed: see \"pruned\" in GET "
                       "/v1/jobs/" +
                           std::to_string(job.id) + " (counts per constraint, with examples)");
      only.insert(*status);
      pos = end + 1;
    }
  }
  query.statuses.assign(only.begin(), only.end());
  // The filters run in SQL, so every page is full; the totals come from the per-status counts
  // the store keeps, not from reading the rows. Pruned configurations have no rows: skipped.
  auto kept = [&](VariantStatus status) {
    if (status == VariantStatus::pruned) return false;
    const bool ungated = status == VariantStatus::unsupported_arch;
    return !(query.gated_only && ungated) && (only.empty() || only.count(status));
  };
  std::int64_t total = 0;
  std::int64_t skipped = 0;
  for (const auto& [name, count] : context.store.progress(job.id).by_status) {
    const auto status = variant_status_from_string(name);
    (status && kept(*status) ? total : skipped) += count;
  }
  const VariantPage page = context.store.variant_page(job.id, query);
  nlohmann::json variants = nlohmann::json::array();
  for (const VariantRecord& variant : page.variants)
    variants.push_back(variant_to_json(variant, with_log));
  return json_response(HttpStatus::ok, {{"job_id", job.id},
                                        {"status", std::string(to_string(job.status))},
                                        {"count", variants.size()},
                                        {"total", total},
                                        {"skipped", skipped},
                                        {"limit", query.limit},
                                        {"next", next_cursor_json(page.next_after_id)},
                                        {"variants", variants}});
}

namespace {

std::string csv_cell(const nlohmann::json& value) {
  if (value.is_null()) return "";
  std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

ApiResponse list_variants_csv(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const JobRecord job = require_job(context, request);
  // Every variant that reached a gate, in id order, read a page at a time.
  std::vector<nlohmann::json> rows;
  VariantPageQuery query;
  query.gated_only = true;
  query.limit = 1000;
  for (;;) {
    const VariantPage page = context.store.variant_page(job.id, query);
    for (const VariantRecord& variant : page.variants) rows.push_back(variant_to_json(variant));
    if (!page.next_after_id) break;
    query.after_id = *page.next_after_id;
  }
  std::set<std::string> parameters;
  for (const nlohmann::json& row : rows)
    for (const auto& [name, value] : row["config"].items()) parameters.insert(name);
  // The Python client's to_csv columns, then the compile's, then one per parameter (sorted).
  const std::vector<std::string> fields{
      "id",      "job_id",        "template",     "status",    "median_us",   "tflops",
      "speedup", "max_abs_error", "rel_l2_error", "registers", "spill_bytes", "smem_bytes",
      "threads", "compile_ms",    "failed_gate",  "reason"};
  std::string csv;
  for (const std::string& name : fields) csv += (csv.empty() ? "" : ",") + name;
  for (const std::string& name : parameters) csv += "," + csv_cell(name);
  csv += '\n';
  for (const nlohmann::json& row : rows) {
    const nlohmann::json& error = row["error"];
    std::string line;
    for (const std::string& name : fields) {
      nlohmann::json value = nullptr;
      if (name == "max_abs_error")
        value = error.is_object() ? error.value("max_abs", nlohmann::json(nullptr)) : nullptr;
      else if (name == "rel_l2_error")
        value = error.is_object() ? error.value("rel_l2", nlohmann::json(nullptr)) : nullptr;
      else if (row.contains(name))
        value = row[name];
      line += (name == fields.front() ? "" : ",") + csv_cell(value);
    }
    for (const std::string& name : parameters)
      line += "," + csv_cell(row["config"].contains(name) ? row["config"][name] : nullptr);
    csv += line + '\n';
  }
  ApiResponse response;
  response.content_type = "text/csv; charset=utf-8";
  response.body = std::move(csv);
  response.headers.emplace_back(
      "Content-Disposition",
      "attachment; filename=\"job-" + std::to_string(job.id) + "-variants.csv\"");
  return response;
}

ApiResponse cancel_job(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const JobRecord job = require_job(context, request);
  if (is_finished(job.status) || !context.scheduler.cancel(job.id))
    throw ApiError(HttpStatus::conflict, "job_finished",
                   "job " + std::to_string(job.id) + " already finished (" +
                       std::string(to_string(job.status)) + ")");
  const auto updated = context.store.job(job.id);
  return json_response(HttpStatus::ok, job_view(context, updated.value_or(job)));
}

ApiResponse get_variant(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {"log"});
  const VariantRecord variant = require_variant(context, request);
  return json_response(HttpStatus::ok, variant_to_json(variant, request.flag_param("log")));
}

ApiResponse get_kernel(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const VariantRecord variant = require_variant(context, request);
  const std::string id = std::to_string(variant.id);
  if (variant.kernel_key.empty())
    throw ApiError(HttpStatus::not_found, "no_kernel",
                   "variant " + id + " has no compiled kernel (status " +
                       std::string(to_string(variant.status)) + ")");
  const auto blob = context.store.find_kernel(variant.kernel_key);
  if (!blob || blob->cubin.empty())
    throw ApiError(HttpStatus::not_found, "no_kernel",
                   "the kernel of variant " + id + " is not in the compile cache");
  ApiResponse response;
  response.content_type = "application/octet-stream";
  response.body.assign(blob->cubin.begin(), blob->cubin.end());
  response.headers.emplace_back("X-Kernel-Name", blob->kernel);
  response.headers.emplace_back("X-Kernel-Arch", blob->arch);
  // The launch for the job's shape; the parameters are in the JSON at X-Kernel-Launch.
  response.headers.emplace_back("X-Kernel-Launch", "/v1/variants/" + id + "/launch");
  std::string why;
  if (const auto job = context.store.job(variant.job_id))
    if (const auto launch = launch_of(context, *job, variant, &why)) {
      const auto dims = [](const nlohmann::json& xyz) {
        return std::to_string(xyz[0].get<std::uint32_t>()) + "," +
               std::to_string(xyz[1].get<std::uint32_t>()) + "," +
               std::to_string(xyz[2].get<std::uint32_t>());
      };
      response.headers.emplace_back("X-Kernel-Grid", dims((*launch)["grid"]));
      response.headers.emplace_back("X-Kernel-Block", dims((*launch)["block"]));
      response.headers.emplace_back("X-Kernel-Cluster", dims((*launch)["cluster"]));
      response.headers.emplace_back("X-Kernel-Dynamic-Smem",
                                    std::to_string((*launch)["dynamic_smem_bytes"].get<int>()));
    }
  response.headers.emplace_back("Content-Disposition", "attachment; filename=\"variant-" + id +
                                                           "-" + blob->arch + ".cubin\"");
  return response;
}

ApiResponse get_launch(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const VariantRecord variant = require_variant(context, request);
  const std::string id = std::to_string(variant.id);
  if (variant.kernel_key.empty())
    throw ApiError(HttpStatus::not_found, "no_kernel",
                   "variant " + id + " has no compiled kernel (status " +
                       std::string(to_string(variant.status)) + ")");
  const auto job = context.store.job(variant.job_id);
  if (!job) throw ApiError(HttpStatus::not_found, "unknown_job", "variant " + id + " has no job");
  std::string why;
  const auto launch = launch_of(context, *job, variant, &why);
  if (!launch)
    throw ApiError(HttpStatus::not_found, "no_launch",
                   "the launch of variant " + id + " cannot be evaluated: " + why);
  return json_response(HttpStatus::ok, *launch);
}

}  // namespace kt
