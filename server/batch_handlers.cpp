#include "server/batch_handlers.hpp"

#include <algorithm>
#include <set>

#include "engine/batch_submission.hpp"
#include "engine/job_target.hpp"
#include "engine/problem_query.hpp"
#include "server/best_answer.hpp"
#include "server/job_request.hpp"
#include "server/json_views.hpp"
#include "server/paging.hpp"
#include "server/request_parsing.hpp"

namespace kt {
namespace {

const std::set<std::string> kBatchFields{"problems", "device", "budget_per_shape", "search",
                                         "retune",   "label",  "dry_run",          "minutes"};
const std::set<std::string> kProblemFields{"family", "shape", "dtype", "share", "calls"};

ApiError invalid(const std::string& message) {
  return ApiError(HttpStatus::bad_request, "invalid_field", message);
}

std::string text_field(const nlohmann::json& body, const std::string& name, std::size_t limit) {
  if (!body.contains(name) || body.at(name).is_null()) return "";
  const nlohmann::json& value = body.at(name);
  if (!value.is_string())
    throw invalid("field '" + name + "' must be a string, got " + describe_client_value(value));
  std::string text = value.get<std::string>();
  if (text.size() > limit)
    throw invalid("field '" + name + "' is too long (" + std::to_string(text.size()) +
                  " bytes; at most " + std::to_string(limit) + ")");
  return text;
}

std::int64_t budget_field(const nlohmann::json& body) {
  if (!body.contains("budget_per_shape") || body.at("budget_per_shape").is_null())
    return kDefaultBatchBudget;
  const nlohmann::json& value = body.at("budget_per_shape");
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0)
    throw ApiError(
        HttpStatus::unprocessable_entity, "invalid_budget",
        "budget_per_shape must be an integer >= 0 (0: every variant of the space), got " +
            describe_client_value(value));
  return value.get<std::int64_t>();
}

// What the client sent of one problem, checked for its JSON types (400 otherwise: the batch is
// malformed); whether the problem can be tuned is the job checks' to say.
BatchProblemRecord problem_record(const nlohmann::json& problem, std::size_t index) {
  const std::string where = "problems[" + std::to_string(index) + "]";
  if (!problem.is_object())
    throw invalid(where + " must be an object {family, shape, dtype}, got " +
                  describe_client_value(problem));
  for (const auto& [name, value] : problem.items())
    if (!kProblemFields.count(name))
      throw ApiError(HttpStatus::bad_request, "unknown_field",
                     where + ": unknown field " + quote_client_text(name) +
                         "; expected family, shape, dtype, share, calls");
  BatchProblemRecord record;
  for (const char* name : {"family", "dtype"}) {
    if (!problem.contains(name) || !problem.at(name).is_string())
      throw invalid(where + "." + name + " must be a string");
    if (problem.at(name).get<std::string>().size() > kMaxNameChars)
      throw invalid(where + "." + name + " is too long");
  }
  record.family = problem.at("family").get<std::string>();
  record.dtype = problem.at("dtype").get<std::string>();
  if (!problem.contains("shape") || !problem.at("shape").is_object())
    throw invalid(where + ".shape must be an object of dims, e.g. {\"M\": 4096}");
  for (const auto& [dim, extent] : problem.at("shape").items()) {
    if (dim.size() > kMaxNameChars) throw invalid(where + ".shape has a dim name that is too long");
    if (!extent.is_number_integer())
      throw invalid(where + ".shape." + quote_client_text(dim) + " must be an integer, got " +
                    describe_client_value(extent));
    record.shape[dim] = extent.get<std::int64_t>();
  }
  if (problem.contains("share") && !problem.at("share").is_null()) {
    const nlohmann::json& share = problem.at("share");
    if (!share.is_number() || share.get<double>() < 0 || share.get<double>() > 1)
      throw invalid(where + ".share must be a number in [0, 1], got " +
                    describe_client_value(share));
    record.share = share.get<double>();
  }
  if (problem.contains("calls") && !problem.at("calls").is_null()) {
    const nlohmann::json& calls = problem.at("calls");
    if (!calls.is_number_integer() || calls.get<std::int64_t>() < 0)
      throw invalid(where + ".calls must be an integer >= 0, got " + describe_client_value(calls));
    record.calls = calls.get<std::int64_t>();
  }
  return record;
}

// The GPU model the batch's problems are tuned for: the selector's among this host's GPUs, the
// GPUs the store has seen and the models it has results for (a store filled on another host);
// without a selector the first GPU's; "" (any model) on a host without one.
std::string batch_device_model(AppContext& context, const std::string& selector) {
  if (selector.empty()) return context.devices.empty() ? "" : context.devices.front().name;
  if (const DeviceInfo* local = select_device(context.devices, selector)) return local->name;
  const std::string known = device_model_of(context.store, selector);
  if (known != selector) return known;
  for (const TunedProblem& tuned : context.store.tuned_problems("", "", 1000))
    if (tuned.device_name.find(selector) != std::string::npos) return tuned.device_name;
  return selector;
}

AnswerSources answer_sources(const AppContext& context) {
  return {context.families, context.devices, context.scheduler.devices()};
}

BatchRecord require_batch(AppContext& context, const ApiRequest& request) {
  const std::int64_t id = parse_id(request.path_params.at("id"), "batch");
  auto batch = context.store.batch(id);
  if (!batch)
    throw ApiError(HttpStatus::not_found, "unknown_batch", "no batch " + std::to_string(id));
  return *batch;
}

std::vector<std::optional<JobRecord>> jobs_of(AppContext& context, const BatchRecord& batch) {
  std::vector<std::optional<JobRecord>> jobs;
  for (const BatchProblemRecord& problem : batch.problems)
    jobs.push_back(problem.job_id && problem.plan != BatchPlan::refused
                       ? context.store.job(*problem.job_id)
                       : std::nullopt);
  return jobs;
}

// The answer a problem has now, in the few fields a batch shows (GET /v1/best has the rest).
nlohmann::json answer_summary(AppContext& context, const BatchRecord& batch,
                              const BatchProblemRecord& problem) {
  ProblemQuery query;
  query.family = context.families.find(problem.family);
  if (query.family == nullptr) return nullptr;
  query.dtype = problem.dtype;
  query.shape = problem.shape;
  query.shape_key = canonical_key(problem.shape);
  query.device_name = batch.device_model;
  const auto answer = best_answer(context.store, query, false, answer_sources(context));
  if (!answer) return nullptr;
  const nlohmann::json best = best_answer_json(*answer);
  nlohmann::json summary = nlohmann::json::object();
  summary["answer"] = best["verdict"].value("answer", nlohmann::json(nullptr));
  for (const char* name : {"median_us", "speedup", "speedup_low", "speedup_high", "baseline",
                           "template", "variant_id", "job_id", "stale"})
    summary[name] = best.contains(name) ? best[name] : nlohmann::json(nullptr);
  return summary;
}

nlohmann::json job_summary(const JobRecord& job, const JobProgress& progress) {
  return {{"id", job.id},
          {"status", std::string(to_string(job.status))},
          {"mode", std::string(to_string(job.mode))},
          {"reason", job.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.reason)},
          {"budget", job.budget},
          {"started_at",
           job.started_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.started_at)},
          {"finished_at",
           job.finished_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.finished_at)},
          {"progress", progress_to_json(progress)}};
}

// Variants through the gates (pruned and other-arch ones apart), summed over the batch's jobs.
void add_variant_counts(nlohmann::json& variants, const JobProgress& progress) {
  const auto count = [&](const char* status) {
    const auto it = progress.by_status.find(status);
    return it == progress.by_status.end() ? std::int64_t{0} : it->second;
  };
  const std::int64_t apart = count("pruned") + count("unsupported_arch");
  variants["total"] = variants["total"].get<std::int64_t>() + progress.total - apart;
  variants["finished"] = variants["finished"].get<std::int64_t>() + progress.finished - apart;
  variants["measured"] = variants["measured"].get<std::int64_t>() + count("measured");
}

nlohmann::json batch_view(AppContext& context, const BatchRecord& batch, bool with_problems,
                          bool stored = true) {
  const std::vector<std::optional<JobRecord>> jobs = jobs_of(context, batch);
  const BatchState state = batch_state(batch, jobs);
  nlohmann::json view = {
      {"id", stored ? nlohmann::json(batch.id) : nlohmann::json(nullptr)},
      {"label", batch.label.empty() ? nlohmann::json(nullptr) : nlohmann::json(batch.label)},
      {"status", stored ? state.status : std::string("planned")},
      {"cancel_requested", batch.cancel_requested},
      {"created_at",
       batch.created_at.empty() ? nlohmann::json(nullptr) : nlohmann::json(batch.created_at)},
      {"device", batch.device.empty() ? nlohmann::json(nullptr) : nlohmann::json(batch.device)},
      {"device_model",
       batch.device_model.empty() ? nlohmann::json(nullptr) : nlohmann::json(batch.device_model)},
      {"budget_per_shape", batch.budget_per_shape},
      {"search", batch.search.empty() ? nlohmann::json(nullptr) : nlohmann::json(batch.search)},
      {"retune", batch.retune},
      {"minutes", batch.minutes ? nlohmann::json(*batch.minutes) : nlohmann::json(nullptr)},
      {"deadline_ms",
       batch.deadline_ms ? nlohmann::json(*batch.deadline_ms) : nlohmann::json(nullptr)},
      {"counts",
       {{"problems", state.problems},
        {"answered", state.answered},
        {"tuned_before", state.tuned_before},
        {"refused", state.refused},
        {"queued", state.queued},
        {"running", state.running},
        {"done", state.done},
        {"failed", state.failed},
        {"cancelled", state.cancelled}}}};
  nlohmann::json variants = {{"total", 0}, {"finished", 0}, {"measured", 0}};
  nlohmann::json problems = nlohmann::json::array();
  for (std::size_t i = 0; i < batch.problems.size(); ++i) {
    const BatchProblemRecord& problem = batch.problems[i];
    nlohmann::json job = nullptr;
    if (jobs[i]) {
      const JobProgress progress = context.store.progress(jobs[i]->id);
      add_variant_counts(variants, progress);
      job = job_summary(*jobs[i], progress);
    }
    if (!with_problems) continue;
    nlohmann::json entry = {
        {"position", problem.position},
        {"family", problem.family},
        {"shape", to_json(problem.shape)},
        {"dtype", problem.dtype},
        {"share", problem.share},
        {"calls", problem.calls},
        {"plan", std::string(to_string(problem.plan))},
        {"job_id", problem.job_id ? nlohmann::json(*problem.job_id) : nlohmann::json(nullptr)},
        {"note", problem.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(problem.note)},
        {"error", problem.plan == BatchPlan::refused
                      ? nlohmann::json{{"code", problem.error_code}, {"message", problem.note}}
                      : nlohmann::json(nullptr)},
        {"job", job}};
    const bool answered =
        problem.plan == BatchPlan::tuned || (jobs[i] && jobs[i]->status == JobStatus::done);
    entry["answer"] = answered ? answer_summary(context, batch, problem) : nlohmann::json(nullptr);
    problems.push_back(std::move(entry));
  }
  view["variants"] = std::move(variants);
  if (with_problems) view["problems"] = std::move(problems);
  return view;
}

}  // namespace

ApiResponse create_batch(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const std::string& body_text = request.http.body();
  if (body_text.size() > context.max_body_bytes)
    throw ApiError(HttpStatus::payload_too_large, "body_too_large",
                   "request body of " + std::to_string(body_text.size()) +
                       " bytes exceeds the limit of " + std::to_string(context.max_body_bytes));
  const nlohmann::json body = parse_json_body(body_text);
  if (!body.is_object()) throw invalid("request body must be a JSON object");
  for (const auto& [name, value] : body.items())
    if (!kBatchFields.count(name))
      throw ApiError(HttpStatus::bad_request, "unknown_field",
                     "unknown field " + quote_client_text(name) +
                         "; expected problems, device, budget_per_shape, search, retune, label, "
                         "minutes, dry_run");
  if (!body.contains("problems") || !body.at("problems").is_array() || body.at("problems").empty())
    throw invalid("field 'problems' must be a non-empty array of {family, shape, dtype}");
  const nlohmann::json& sent = body.at("problems");
  if (sent.size() > kMaxBatchProblems)
    throw invalid("a batch holds at most " + std::to_string(kMaxBatchProblems) + " problems, got " +
                  std::to_string(sent.size()));
  NewBatch batch;
  batch.label = text_field(body, "label", 200);
  batch.budget_per_shape = budget_field(body);
  batch.search = text_field(body, "search", kMaxNameChars);
  batch.retune = optional_flag(body, "retune", false);
  const bool dry_run = optional_flag(body, "dry_run", false);
  if (body.contains("minutes") && !body.at("minutes").is_null()) {
    const nlohmann::json& minutes = body.at("minutes");
    if (!minutes.is_number() || !(minutes.get<double>() > 0) || minutes.get<double>() > 1e6)
      throw ApiError(HttpStatus::unprocessable_entity, "invalid_minutes",
                     "minutes must be a number of minutes above 0 (and at most 10^6), got " +
                         describe_client_value(minutes));
    batch.minutes = minutes.get<double>();
  }
  nlohmann::json device = body.contains("device") ? body.at("device") : nlohmann::json(nullptr);
  if (!device.is_null() && !device.is_string() && !device.is_number_unsigned())
    throw invalid("field 'device' must be an ordinal, a UUID or a name, got " +
                  describe_client_value(device));
  batch.device = device.is_null()     ? ""
                 : device.is_string() ? device.get<std::string>()
                                      : std::to_string(device.get<std::uint64_t>());

  // Each problem is parsed as the job it becomes (POST /v1/jobs's checks); the plan decides what
  // it needs (engine/batch_submission.hpp).
  std::vector<BatchCandidate> candidates;
  for (std::size_t i = 0; i < sent.size(); ++i) {
    BatchCandidate candidate;
    candidate.record = problem_record(sent[i], i);
    nlohmann::json job = {{"family", sent[i].at("family")},
                          {"shape", sent[i].at("shape")},
                          {"dtype", sent[i].at("dtype")},
                          {"budget", batch.budget_per_shape},
                          {"device", device}};
    if (!batch.search.empty()) job["search"] = batch.search;
    try {
      candidate.request = parse_job_request(job.dump(), context);
    } catch (const ApiError& error) {
      // A malformed field is the batch's error; an unknown family or a bad shape the problem's.
      if (error.status() == HttpStatus::bad_request)
        throw ApiError(error.status(), error.code(),
                       "problems[" + std::to_string(i) + "]: " + error.what());
      candidate.record.plan = BatchPlan::refused;
      candidate.record.error_code = error.code();
      candidate.record.note = error.what();
    }
    candidates.push_back(std::move(candidate));
  }
  batch.device_model = batch_device_model(context, batch.device);
  candidates = plan_batch(
      std::move(candidates), batch.device_model, batch.retune, context.store,
      {context.families, context.devices, context.device_error, context.scheduler.devices()});
  for (BatchCandidate& candidate : candidates)
    if (candidate.refusal) {
      const ApiError error = api_error_of(*candidate.refusal);
      candidate.record.error_code = error.code();
    }
  const std::size_t refused = std::count_if(
      candidates.begin(), candidates.end(),
      [](const BatchCandidate& candidate) { return candidate.record.plan == BatchPlan::refused; });
  if (refused == candidates.size()) {
    // One reason for all (no GPU, say) keeps its status; mixed ones are the batch's 422.
    HttpStatus status = HttpStatus::unprocessable_entity;
    std::string code = candidates.front().record.error_code;
    for (const BatchCandidate& candidate : candidates)
      if (candidate.record.error_code != code) code.clear();
    if (code == "no_device") status = HttpStatus::service_unavailable;
    std::string reasons;
    for (std::size_t i = 0; i < candidates.size() && i < 3; ++i)
      reasons += (i ? "; " : "") + candidates[i].record.note;
    throw ApiError(status, code.empty() ? "nothing_to_tune" : code,
                   "every problem of the batch was refused: " + reasons +
                       (candidates.size() > 3 ? "; ..." : ""));
  }
  if (dry_run) {
    BatchRecord planned;
    static_cast<NewBatch&>(planned) = batch;
    for (const BatchCandidate& candidate : candidates) planned.problems.push_back(candidate.record);
    return json_response(HttpStatus::ok, batch_view(context, planned, true, false));
  }
  const BatchRecord stored =
      submit_batch(std::move(batch), std::move(candidates), context.store, context.scheduler);
  ApiResponse response = json_response(HttpStatus::created, batch_view(context, stored, true));
  response.headers.emplace_back("Location", "/v1/batches/" + std::to_string(stored.id));
  return response;
}

ApiResponse list_batches(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {"limit", "cursor"});
  const int limit = page_limit(request);
  const BatchPage page = context.store.batch_page(limit, page_cursor(request));
  nlohmann::json batches = nlohmann::json::array();
  for (const BatchRecord& batch : page.batches)
    batches.push_back(batch_view(context, batch, false));
  return json_response(HttpStatus::ok, {{"limit", limit},
                                        {"count", batches.size()},
                                        {"next", next_cursor_json(page.next_before_id)},
                                        {"batches", batches}});
}

ApiResponse get_batch(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  return json_response(HttpStatus::ok, batch_view(context, require_batch(context, request), true));
}

ApiResponse cancel_batch(const ApiRequest& request, AppContext& context) {
  reject_unknown_params(request, {});
  const BatchRecord batch = require_batch(context, request);
  if (kt::cancel_batch(batch, context.store, context.scheduler) == 0)
    throw ApiError(HttpStatus::conflict, "batch_finished",
                   "batch " + std::to_string(batch.id) +
                       " has no job of its own left to cancel (jobs it joined belong to their "
                       "own requests: DELETE /v1/jobs/{id} cancels one)");
  const auto updated = context.store.batch(batch.id);
  return json_response(HttpStatus::ok, batch_view(context, updated.value_or(batch), true));
}

}  // namespace kt
