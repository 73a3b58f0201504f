#include "client/batch_view.hpp"

#include "client/client_error.hpp"
#include "client/text_format.hpp"

namespace kt {
namespace {

std::int64_t count(const nlohmann::json& j, const char* name) {
  const nlohmann::json& value = field(j, name);
  return value.is_number_integer() ? value.get<std::int64_t>() : 0;
}

std::string percent(const nlohmann::json& share) {
  return format_number(share.is_number() ? share.get<double>() * 100.0 : 0.0, 1) + "%";
}

std::string elapsed_text(double seconds) {
  const int s = static_cast<int>(seconds);
  return std::to_string(s / 60) + "m" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60) + "s";
}

}  // namespace

std::string batch_problem_label(const nlohmann::json& problem) {
  return problem.value("family", "?") + " " + format_shape(field(problem, "shape")) + " " +
         problem.value("dtype", "?");
}

std::string batch_problem_state(const nlohmann::json& problem) {
  const std::string plan = problem.value("plan", "");
  if (plan == "tuned" || plan == "refused") return plan;
  const nlohmann::json& job = field(problem, "job");
  return job.is_object() ? job.value("status", "?") : "?";
}

std::string batch_problem_answer(const nlohmann::json& problem) {
  const nlohmann::json& answer = field(problem, "answer");
  if (answer.is_object() && field(answer, "answer").is_string()) {
    const std::string who = answer["answer"].get<std::string>();
    std::string text = who + " " + format_us(field(answer, "median_us"));
    if (who == "ours" && field(answer, "speedup").is_number())
      text += ", " + format_number(answer["speedup"], 2) + "x [" +
              format_number(field(answer, "speedup_low"), 2) + ", " +
              format_number(field(answer, "speedup_high"), 2) + "] vs " +
              (field(answer, "baseline").is_string() ? answer["baseline"].get<std::string>()
                                                     : std::string("baseline"));
    else if (who == "baseline" && field(answer, "template").is_string())
      text += " (" + answer["template"].get<std::string>() + ")";
    return text;
  }
  const std::string plan = problem.value("plan", "");
  const nlohmann::json& note = field(problem, "note");
  if (plan == "refused")
    return "refused: " + (note.is_string() ? note.get<std::string>() : std::string("?"));
  const nlohmann::json& job = field(problem, "job");
  if (job.is_object() && field(job, "reason").is_string()) return job["reason"].get<std::string>();
  if (job.is_object() && job.value("status", "") == "done") return "no answer";
  return note.is_string() ? note.get<std::string>() : "";
}

std::string batch_progress_line(const nlohmann::json& batch, double elapsed_s) {
  const nlohmann::json& counts = field(batch, "counts");
  const std::int64_t jobs =
      count(counts, "problems") - count(counts, "tuned_before") - count(counts, "refused");
  const std::int64_t ended =
      count(counts, "done") + count(counts, "failed") + count(counts, "cancelled");
  const int width = 20;
  const int filled = jobs > 0 ? static_cast<int>(width * ended / jobs) : width;
  std::string line = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " +
                     std::to_string(ended) + "/" + std::to_string(jobs) + " problems";
  for (const nlohmann::json& problem :
       field(batch, "problems").is_array() ? batch["problems"] : nlohmann::json::array()) {
    const nlohmann::json& job = field(problem, "job");
    if (!job.is_object() || job.value("status", "") != "running") continue;
    line += "  job " + std::to_string(job.value("id", std::int64_t{0})) + " " +
            batch_problem_label(problem);
    const nlohmann::json& progress = field(job, "progress");
    const nlohmann::json& by_status = field(progress, "by_status");
    const std::int64_t apart = count(by_status, "pruned") + count(by_status, "unsupported_arch");
    const std::int64_t total = count(progress, "total") - apart;
    if (total > 0)
      line += " " + std::to_string(count(progress, "finished") - apart) + "/" +
              std::to_string(total) + " variants";
    break;
  }
  return line + "  " + elapsed_text(elapsed_s);
}

void print_batch_table(std::ostream& out, const nlohmann::json& batch) {
  TextTable table({"PROBLEM", "SHARE", "JOB", "STATE", "ANSWER"});
  for (const nlohmann::json& problem :
       field(batch, "problems").is_array() ? batch["problems"] : nlohmann::json::array()) {
    const nlohmann::json& job_id = field(problem, "job_id");
    table.add_row({batch_problem_label(problem), percent(field(problem, "share")),
                   job_id.is_number() ? std::to_string(job_id.get<std::int64_t>()) : "-",
                   batch_problem_state(problem), batch_problem_answer(problem)});
  }
  table.print(out);
}

nlohmann::json batch_summary(const nlohmann::json& batch) {
  nlohmann::json problems = nlohmann::json::array();
  for (const nlohmann::json& problem :
       field(batch, "problems").is_array() ? batch["problems"] : nlohmann::json::array())
    problems.push_back({{"family", field(problem, "family")},
                        {"shape", field(problem, "shape")},
                        {"dtype", field(problem, "dtype")},
                        {"share", field(problem, "share")},
                        {"plan", field(problem, "plan")},
                        {"job_id", field(problem, "job_id")},
                        {"state", batch_problem_state(problem)},
                        {"answer", batch_problem_answer(problem)}});
  return {{"batch", field(batch, "id")},
          {"device", field(batch, "device_model")},
          {"status", field(batch, "status")},
          {"problems", problems}};
}

int run_batch(const CliContext& ctx, const BatchArgs& args) {
  if (args.id == 0) {
    if (args.cancel) {
      ctx.err << "kerntune batch: --cancel needs a batch id\n";
      return kExitError;
    }
    const nlohmann::json page = ctx.client.call(boost::beast::http::verb::get, "/v1/batches");
    if (ctx.json) {
      ctx.out << page.dump(2) << '\n';
      return kExitOk;
    }
    TextTable table({"BATCH", "CREATED", "LABEL", "DEVICE", "STATUS", "ANSWERED", "REFUSED"});
    for (const nlohmann::json& batch : field(page, "batches")) {
      const nlohmann::json& counts = field(batch, "counts");
      table.add_row(
          {std::to_string(batch.value("id", std::int64_t{0})),
           field(batch, "created_at").is_string() ? batch["created_at"].get<std::string>() : "-",
           field(batch, "label").is_string() ? batch["label"].get<std::string>() : "-",
           field(batch, "device_model").is_string() ? batch["device_model"].get<std::string>()
                                                    : "-",
           batch.value("status", "?"),
           std::to_string(count(counts, "answered")) + "/" +
               std::to_string(count(counts, "problems")),
           std::to_string(count(counts, "refused"))});
    }
    table.print(ctx.out);
    return kExitOk;
  }
  const std::string path = "/v1/batches/" + std::to_string(args.id);
  const nlohmann::json batch = ctx.client.call(
      args.cancel ? boost::beast::http::verb::delete_ : boost::beast::http::verb::get, path);
  if (ctx.json) {
    ctx.out << batch.dump(2) << '\n';
  } else {
    const nlohmann::json& model = field(batch, "device_model");
    ctx.err << "batch " << args.id << " on "
            << (model.is_string() ? model.get<std::string>() : std::string("any GPU")) << ": "
            << batch.value("status", "?") << (args.cancel ? " (cancel requested)" : "") << '\n';
    print_batch_table(ctx.out, batch);
  }
  const std::string status = batch.value("status", "");
  return status == "done" || status == "running" ? kExitOk : kExitJobFailed;
}

}  // namespace kt
