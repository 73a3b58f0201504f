#include "client/tune_all_command.hpp"

#include <filesystem>
#include <iostream>
#include <thread>

#include "client/batch_view.hpp"
#include "client/gpu_models.hpp"
#include "client/interrupt_notice.hpp"
#include "client/shapes_file.hpp"
#include "client/text_format.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

nlohmann::json batch_request(const ShapesFile& file, const TuneAllArgs& args) {
  nlohmann::json problems = nlohmann::json::array();
  for (const RecordedProblem& problem : file.problems) {
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& [dim, extent] : problem.shape) shape[dim] = extent;
    problems.push_back({{"family", problem.family},
                        {"shape", shape},
                        {"dtype", problem.dtype},
                        {"share", std::min(std::max(problem.share, 0.0), 1.0)},
                        {"calls", problem.calls}});
  }
  nlohmann::json body = {{"problems", problems},
                         {"budget_per_shape", args.budget_per_shape},
                         {"label", std::filesystem::path(args.shapes_path).filename().string()},
                         {"retune", args.retune},
                         {"dry_run", args.dry_run}};
  if (!args.device.empty()) body["device"] = args.device;
  if (!args.search.empty()) body["search"] = args.search;
  // The daemon holds the deadline too: it cancels what is left if this command is gone by then.
  if (args.minutes > 0) body["minutes"] = args.minutes;
  return body;
}

std::int64_t plans(const nlohmann::json& batch, const std::string& plan) {
  std::int64_t n = 0;
  for (const nlohmann::json& problem : batch["problems"]) n += problem.value("plan", "") == plan;
  return n;
}

void print_plan(const CliContext& ctx, const nlohmann::json& batch, const TuneAllArgs& args) {
  const std::string model = field(batch, "device_model").is_string()
                                ? batch["device_model"].get<std::string>()
                                : std::string("the first GPU");
  TextTable table({"PROBLEM", "SHARE", "CALLS", "PLAN"});
  for (const nlohmann::json& problem : batch["problems"]) {
    const std::string plan = problem.value("plan", "");
    const std::string note =
        field(problem, "note").is_string() ? problem["note"].get<std::string>() : "";
    std::string text;
    if (plan == "submitted")
      text = (note.empty() ? "" : note + ": ") + "tune on " + model + ", budget " +
             (args.budget_per_shape ? std::to_string(args.budget_per_shape) : std::string("all"));
    else if (plan == "refused")
      text = "refused: " + note;
    else
      text = note;
    table.add_row({batch_problem_label(problem),
                   format_number(problem.value("share", 0.0) * 100.0, 1) + "%",
                   std::to_string(problem.value("calls", std::int64_t{0})), text});
  }
  table.print(ctx.out);
}

}  // namespace

int run_tune_all(const CliContext& ctx, const TuneAllArgs& args) {
  const ShapesFile file = read_shapes_file(args.shapes_path);
  if (!file.unsupported.empty()) {
    ctx.err << file.unsupported.size()
            << " recorded line(s) no family takes (they run as torch's own ops):\n";
    for (const std::string& line : file.unsupported) ctx.err << "  " << line << '\n';
  }
  if (file.problems.empty()) {
    ctx.err << "kerntune: " << args.shapes_path << " holds no problem a family takes\n";
    return file.unsupported.empty() ? kExitError : kExitOk;
  }
  // A --device no GPU and no stored result matches is refused here, with the models there are.
  TuneAllArgs asked = args;
  if (!args.device.empty()) {
    const std::string model = resolve_gpu_model(ctx, args.device);
    if (args.device.find_first_not_of("0123456789") != std::string::npos &&
        args.device.rfind("GPU-", 0) != 0)
      asked.device = model;  // a name: the whole model's, as the store keys results
  }

  // The daemon plans the batch: what is tuned and current is skipped, what is being tuned is
  // waited on, the rest queued largest share first (POST /v1/batches).
  nlohmann::json batch =
      ctx.client.call(http::verb::post, "/v1/batches", batch_request(file, asked).dump());
  const std::string model =
      field(batch, "device_model").is_string() ? batch["device_model"].get<std::string>() : "";
  if (args.dry_run) {
    print_plan(ctx, batch, args);
    return kExitOk;
  }
  const std::int64_t id = batch.at("id").get<std::int64_t>();
  const std::int64_t submitted = plans(batch, "submitted"), joined = plans(batch, "joined");
  ctx.err << "tune-all: batch " << id << ", " << batch["problems"].size() << " problems on "
          << (model.empty() ? std::string("any GPU") : model) << ": " << submitted
          << " submitted, ";
  if (joined > 0) ctx.err << joined << " already being tuned, ";
  ctx.err << plans(batch, "tuned") << " tuned before, " << plans(batch, "refused") << " refused\n";
  const bool waits = batch.value("status", "") == "running";
  if (waits) {
    ctx.err << "(the batch runs on in the daemon if this command stops; kerntune batch " << id
            << " shows it, kerntune batch " << id << " --cancel ends it)\n";
    set_interrupt_notice("\nkerntune: interrupted; batch " + std::to_string(id) +
                         " goes on in the daemon: `kerntune batch " + std::to_string(id) +
                         "` shows it, `kerntune batch " + std::to_string(id) +
                         " --cancel` stops it\n");
  }
  struct Restore {
    ~Restore() { clear_interrupt_notice(); }
  } restore;

  const std::string path = "/v1/batches/" + std::to_string(id);
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(args.minutes * 60.0));
  auto last_line = started - std::chrono::hours(1);
  std::string last_text;
  bool cancelled = false;
  while (batch.value("status", "") == "running") {
    std::this_thread::sleep_for(args.poll);
    batch = ctx.client.call(http::verb::get, path);
    const auto now = std::chrono::steady_clock::now();
    const std::string line =
        batch_progress_line(batch, std::chrono::duration<double>(now - started).count());
    if (ctx.interactive) {
      ctx.err << '\r' << line << "\x1b[K" << std::flush;
    } else if (line.substr(0, 40) != last_text.substr(0, 40) ||
               now - last_line > std::chrono::seconds(10)) {
      ctx.err << line << '\n' << std::flush;
      last_line = now;
    }
    last_text = line;
    if (!cancelled && args.minutes > 0 && now >= deadline &&
        batch.value("status", "") == "running") {
      if (ctx.interactive) ctx.err << '\n';
      ctx.err << "tune-all: --minutes " << format_number(args.minutes, 1)
              << " reached: cancelling what is left\n";
      try {
        batch = ctx.client.call(http::verb::delete_, path);
      } catch (const ClientError& error) {
        if (error.code() != "batch_finished") throw;  // else it ended meanwhile
      }
      cancelled = true;
    }
  }
  if (ctx.interactive && waits) ctx.err << '\n';

  if (ctx.json)
    ctx.out << batch_summary(batch).dump(2) << '\n';
  else
    print_batch_table(ctx.out, batch);
  return batch.value("status", "") == "done" ? kExitOk : kExitJobFailed;
}

}  // namespace kt
