#include "client/tune_all_command.hpp"

#include <iostream>
#include <optional>
#include <thread>
#include <vector>

#include "client/gpu_models.hpp"
#include "client/interrupt_notice.hpp"
#include "client/progress_bar.hpp"
#include "client/shapes_file.hpp"
#include "client/text_format.hpp"

namespace kt {
namespace {

struct BatchEntry {
  RecordedProblem problem;
  std::string state = "pending";  // pending, tuned (before), submitted, done, failed, cancelled,
                                  // refused
  std::string note;               // why refused or skipped; the job's reason
  std::int64_t job_id = 0;
  nlohmann::json job;  // the last view of its job
};

bool finished(const std::string& status) {
  return status == "done" || status == "failed" || status == "cancelled";
}

TunedQuery query_of(const RecordedProblem& problem, const std::string& model) {
  TunedQuery query;
  query.family = problem.family;
  query.shape = problem.shape;
  query.dtype = problem.dtype;
  query.device = model;
  return query;
}

std::string percent(double share) {
  return format_number(share * 100.0, 1) + "%";
}

// "[####......] 3/8 problems  job 14 gemm M=2048 N=4096 K=4096 bf16 40/64 variants  2m05s"
std::string batch_line(const std::vector<BatchEntry>& entries, double elapsed_s) {
  std::int64_t total = 0, ended = 0;
  const BatchEntry* running = nullptr;
  for (const BatchEntry& e : entries) {
    if (e.state == "tuned" || e.state == "refused") continue;
    ++total;
    if (finished(e.state))
      ++ended;
    else if (!running && e.job.value("status", "") == "running")
      running = &e;
  }
  const int width = 20;
  const int filled = total > 0 ? static_cast<int>(width * ended / total) : width;
  std::string line = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] " +
                     std::to_string(ended) + "/" + std::to_string(total) + " problems";
  if (running) {
    const ProgressSnapshot s = snapshot_from_job(running->job);
    line += "  job " + std::to_string(running->job_id) + " " + problem_label(running->problem);
    if (s.total > 0)
      line += " " + std::to_string(s.finished) + "/" + std::to_string(s.total) + " variants";
  }
  const int seconds = static_cast<int>(elapsed_s);
  line += "  " + std::to_string(seconds / 60) + "m" + (seconds % 60 < 10 ? "0" : "") +
          std::to_string(seconds % 60) + "s";
  return line;
}

std::string answer_text(const CliContext& ctx, const BatchEntry& e, const std::string& model) {
  if (e.state != "done" && e.state != "tuned") return e.note;
  try {
    const nlohmann::json best = ctx.client.best_answer(query_of(e.problem, model));
    const nlohmann::json& verdict = field(best, "verdict");
    const std::string who =
        field(verdict, "answer").is_string()
            ? verdict["answer"].get<std::string>()
            : std::string(best.value("baseline_wins", false) ? "baseline" : "ours");
    std::string text = who + " " + format_us(field(best, "median_us"));
    if (who == "ours" && field(best, "speedup").is_number())
      text += ", " + format_number(best["speedup"], 2) + "x [" +
              format_number(field(best, "speedup_low"), 2) + ", " +
              format_number(field(best, "speedup_high"), 2) + "] vs " +
              best.value("baseline", "baseline");
    else if (who == "baseline")
      text += " (" + best.value("template", best.value("baseline", "")) + ")";
    return text;
  } catch (const ClientError& error) {
    return std::string("no answer: ") + error.what();
  }
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
  const std::string model = resolve_gpu_model(ctx, args.device);
  std::vector<BatchEntry> entries;
  for (const RecordedProblem& problem : file.problems) {
    BatchEntry entry;
    entry.problem = problem;
    if (!args.retune) {
      if (const std::optional<BestConfig> best = ctx.client.find_best(query_of(problem, model))) {
        if (best->raw.value("stale", false)) {
          std::string keys;
          for (const nlohmann::json& key : best->raw.value("stale_keys", nlohmann::json::array()))
            keys += (keys.empty() ? "" : ", ") + key.value("key", std::string("?"));
          entry.note =
              "stale (" + (keys.empty() ? std::string("keys changed") : keys + " changed") + "): ";
        } else {
          entry.state = "tuned";
          entry.job_id = best->job_id;
          entry.note = "tuned before (job " + std::to_string(best->job_id) + ")";
        }
      }
    }
    entries.push_back(std::move(entry));
  }

  if (args.dry_run) {
    TextTable table({"PROBLEM", "SHARE", "CALLS", "PLAN"});
    for (const BatchEntry& e : entries)
      table.add_row(
          {problem_label(e.problem), percent(e.problem.share), std::to_string(e.problem.calls),
           e.state == "tuned" ? e.note
                              : e.note + "tune on " + model + ", budget " +
                                    (args.budget_per_shape ? std::to_string(args.budget_per_shape)
                                                           : std::string("all"))});
    table.print(ctx.out);
    return kExitOk;
  }

  // Submitted in order of share: the daemon's queue runs them in that order.
  for (BatchEntry& e : entries) {
    if (e.state == "tuned") continue;
    JobSpec spec;
    spec.family = e.problem.family;
    spec.shape = e.problem.shape;
    spec.dtype = e.problem.dtype;
    spec.device = args.device;
    spec.budget = args.budget_per_shape;
    spec.search = args.search;
    try {
      e.job = ctx.client.submit_job(spec);
      e.job_id = e.job.at("id").get<std::int64_t>();
      e.state = "submitted";
    } catch (const ClientError& error) {
      if (error.status() == 0) throw;  // the daemon went away: nothing more will go in
      e.state = "refused";
      e.note = std::string("refused: ") + error.what();
    }
  }
  ctx.err << "tune-all: " << entries.size() << " problems on " << model << ": ";
  int submitted = 0, skipped = 0, refused = 0;
  for (const BatchEntry& e : entries) {
    submitted += e.state == "submitted";
    skipped += e.state == "tuned";
    refused += e.state == "refused";
  }
  ctx.err << submitted << " submitted, " << skipped << " tuned before, " << refused << " refused\n";
  if (submitted > 0) {
    std::string ids;
    for (const BatchEntry& e : entries)
      if (e.state == "submitted") ids += (ids.empty() ? "" : " ") + std::to_string(e.job_id);
    ctx.err << "(the jobs run on in the daemon if this command stops; kerntune cancel JOB_ID ends "
               "one)\n";
    set_interrupt_notice("\nkerntune: interrupted; jobs " + ids +
                         " go on in the daemon: `kerntune tune-all " + args.shapes_path +
                         "` again skips those that finish, `kerntune cancel ID` stops one\n");
  }
  struct Restore {
    ~Restore() { clear_interrupt_notice(); }
  } restore;

  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(args.minutes * 60.0));
  auto last_line = started - std::chrono::hours(1);
  std::string last_text;
  while (submitted > 0) {
    bool open = false;
    for (BatchEntry& e : entries) {
      if (e.state != "submitted") continue;
      e.job = ctx.client.job(e.job_id);
      const std::string status = e.job.value("status", "");
      if (finished(status)) {
        e.state = status;
        if (field(e.job, "reason").is_string()) e.note = e.job["reason"].get<std::string>();
        if (status == "cancelled" && e.note.empty()) e.note = "cancelled";
      } else {
        open = true;
      }
    }
    const auto now = std::chrono::steady_clock::now();
    const std::string line =
        batch_line(entries, std::chrono::duration<double>(now - started).count());
    if (ctx.interactive) {
      ctx.err << '\r' << line << "\x1b[K" << std::flush;
    } else if (line.substr(0, 40) != last_text.substr(0, 40) ||
               now - last_line > std::chrono::seconds(10)) {
      ctx.err << line << '\n' << std::flush;
      last_line = now;
    }
    last_text = line;
    if (!open) break;
    if (args.minutes > 0 && now >= deadline) {
      if (ctx.interactive) ctx.err << '\n';
      ctx.err << "tune-all: --minutes " << format_number(args.minutes, 1)
              << " reached: cancelling what is left\n";
      for (BatchEntry& e : entries) {
        if (e.state != "submitted") continue;
        try {
          ctx.client.cancel(e.job_id);
        } catch (const ClientError&) {
          // it ended meanwhile: the next read says how
        }
      }
      for (BatchEntry& e : entries) {
        if (e.state != "submitted") continue;
        e.job = ctx.client.job(e.job_id);
        while (!finished(e.job.value("status", ""))) {
          std::this_thread::sleep_for(args.poll);
          e.job = ctx.client.job(e.job_id);
        }
        e.state = e.job.value("status", "");
        if (e.state == "cancelled") e.note = "cancelled: --minutes reached";
      }
      break;
    }
    std::this_thread::sleep_for(args.poll);
  }
  if (ctx.interactive && submitted > 0) ctx.err << '\n';

  bool all_tuned = true;
  nlohmann::json rows = nlohmann::json::array();
  TextTable table({"PROBLEM", "SHARE", "JOB", "STATE", "ANSWER"});
  for (const BatchEntry& e : entries) {
    all_tuned = all_tuned && (e.state == "done" || e.state == "tuned");
    const std::string answer = answer_text(ctx, e, model);
    table.add_row({problem_label(e.problem), percent(e.problem.share),
                   e.job_id ? std::to_string(e.job_id) : "-", e.state, answer});
    nlohmann::json shape = nlohmann::json::object();
    for (const auto& [dim, extent] : e.problem.shape) shape[dim] = extent;
    rows.push_back({{"family", e.problem.family},
                    {"shape", shape},
                    {"dtype", e.problem.dtype},
                    {"share", e.problem.share},
                    {"job_id", e.job_id ? nlohmann::json(e.job_id) : nullptr},
                    {"state", e.state},
                    {"answer", answer}});
  }
  if (ctx.json)
    ctx.out << nlohmann::json{{"device", model}, {"problems", rows}}.dump(2) << '\n';
  else
    table.print(ctx.out);
  return all_tuned ? kExitOk : kExitJobFailed;
}

}  // namespace kt
