#include "client/submit_command.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "client/interrupt_notice.hpp"
#include "client/progress_bar.hpp"
#include "client/shape_arg.hpp"
#include "client/text_format.hpp"

namespace kt {
namespace {

bool is_finished(const std::string& status) {
  return status == "done" || status == "failed" || status == "cancelled";
}

std::string target_of(const nlohmann::json& job) {
  if (job.value("mode", "") == "compile") return job.value("arch", "") + " (compile only)";
  const nlohmann::json& name = field(job, "device_name");
  const std::string device = name.is_string() ? name.get<std::string>() : std::string("?");
  return device + " (" + job.value("arch", "") + ")" +
         (job.value("mode", "") == "check" ? ", check only: no answer" : "");
}

void print_summary(const CliContext& ctx, const nlohmann::json& job, double waited_s) {
  std::ostream& out = ctx.out;
  // The job's own time, not how long this client waited for it (a `wait` on a job that finished
  // long ago waits no time at all); the wait where the job has no time of its own yet.
  const nlohmann::json& wall = field(field(job, "stats"), "wall_seconds");
  const double took = wall.is_number() ? wall.get<double>() : waited_s;
  // Configs counted as they went: those through the gates, and the pruned apart (most of a
  // large space, never compiled).
  const ProgressSnapshot counts = snapshot_from_job(job);
  out << "job " << field(job, "id") << " " << job.value("status", "") << " after "
      << format_number(took, 1) << " s: " << status_counts(job, true) << " (" << counts.total
      << " config" << (counts.total == 1 ? "" : "s") << " through the gates";
  if (counts.pruned > 0) out << "; " << counts.pruned << " pruned or for another arch";
  out << ")\n";
  if (field(job, "reason").is_string())
    out << "reason: " << field(job, "reason").get<std::string>() << '\n';
  const nlohmann::json& best = field(job, "best");
  if (best.is_object()) {
    out << "best: variant " << field(best, "id") << " " << best.value("template", "") << " "
        << format_config(field(best, "config")) << "  " << format_us(field(best, "median_us"))
        << "  " << format_number(field(best, "tflops"), 1) << " TFLOP/s";
    if (const std::string final = final_speedup_text(field(best, "final")); !final.empty())
      out << "\nfinal: " << format_us(field(field(best, "final"), "median_us")) << ", " << final;
    else if (field(best, "speedup").is_number())
      out << "  " << format_number(field(best, "speedup"), 2) << "x vs reference ("
          << format_us(field(job, "reference_us")) << ")";
    out << '\n';
  }
}

}  // namespace

nlohmann::json family_entry(const CliContext& ctx, const std::string& family) {
  const nlohmann::json families = ctx.client.families();
  for (const auto& entry : families.value("families", nlohmann::json::array()))
    if (entry.value("name", "") == family) return entry;
  return nullptr;  // unknown family: the server's answer to the request lists the known ones
}

nlohmann::json configs_arg(const std::string& text) {
  std::string json_text = text;
  if (!text.empty() && text.front() == '@') {
    std::ifstream in(text.substr(1));
    if (!in) throw std::invalid_argument("--configs: cannot read " + text.substr(1));
    std::stringstream content;
    content << in.rdbuf();
    json_text = content.str();
  }
  try {
    return nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& error) {
    throw std::invalid_argument(std::string("--configs is not JSON: ") + error.what());
  }
}

std::string status_counts(const nlohmann::json& job, bool gated_only) {
  std::string text;
  const nlohmann::json& by_status = field(field(job, "progress"), "by_status");
  if (!by_status.is_object()) return "-";
  for (const auto& [status, count] : by_status.items()) {
    if (gated_only && (status == "pruned" || status == "unsupported_arch")) continue;
    text += (text.empty() ? "" : ", ") + count.dump() + " " + status;
  }
  return text.empty() ? "none yet" : text;
}

namespace {

// Follows the job's event stream (GET /v1/jobs/{id}/events), keeping `job`'s status, progress and
// best up to date and the display with them, until the stream's "end" event. False when the
// stream could not be followed to its end (a daemon without it, the cap on streams, a broken
// connection): the caller polls instead.
bool follow_events(const CliContext& ctx, nlohmann::json& job, ProgressDisplay& display) {
  const std::int64_t id = job.at("id").get<std::int64_t>();
  bool ended = false;
  try {
    ctx.client.follow_job(id, [&](const std::string& name, const nlohmann::json& data) {
      if (name == "end") {
        ended = true;
        return false;
      }
      if (name == "status") {
        job["status"] = data.value("status", job.value("status", ""));
        job["reason"] = data.contains("reason") ? data["reason"] : nlohmann::json(nullptr);
      } else if (name == "progress") {
        job["progress"] = data;
      } else if (name == "best") {
        job["best"] = data;
      }
      const ProgressSnapshot snapshot = snapshot_from_job(job);
      if (!is_finished(snapshot.status)) display.update(snapshot);
      return true;
    });
  } catch (const ClientError& error) {
    ctx.err << "kerntune: live progress unavailable (" << error.what() << "); polling instead\n";
    return false;
  }
  return ended;
}

}  // namespace

void notice_interrupt_of(std::int64_t job_id) {
  const std::string id = std::to_string(job_id);
  set_interrupt_notice("\nkerntune: interrupted; job " + id +
                       " goes on in the daemon: `kerntune wait " + id +
                       "` follows it again, `kerntune cancel " + id + "` stops it\n");
}

nlohmann::json wait_for_job(const CliContext& ctx, std::int64_t job_id,
                            std::chrono::milliseconds poll) {
  notice_interrupt_of(job_id);
  struct Restore {
    ~Restore() { clear_interrupt_notice(); }
  } restore;
  ProgressDisplay display(ctx.err, ctx.interactive);
  nlohmann::json job = ctx.client.job(job_id);
  if (!is_finished(job.value("status", ""))) follow_events(ctx, job, display);
  // After the stream's end, one read of the whole job (final comparison included) for the
  // summary; without a stream, polling.
  for (;;) {
    job = ctx.client.job(job_id);
    const ProgressSnapshot snapshot = snapshot_from_job(job);
    if (is_finished(snapshot.status)) {
      display.finish(snapshot);
      return job;
    }
    display.update(snapshot);
    std::this_thread::sleep_for(poll);
  }
}

int report_finished_job(const CliContext& ctx, const nlohmann::json& job, double waited_s) {
  if (ctx.json)
    ctx.out << job.dump(2) << '\n';
  else
    print_summary(ctx, job, waited_s);
  return job.value("status", "") == "done" ? kExitOk : kExitJobFailed;
}

int run_wait(const CliContext& ctx, std::int64_t job_id, std::chrono::milliseconds poll) {
  const auto started = std::chrono::steady_clock::now();
  const nlohmann::json last = wait_for_job(ctx, job_id, poll);
  return report_finished_job(
      ctx, last, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

namespace {

// `kerntune plan`: the daemon's preview of the job, per template.
int print_plan(const CliContext& ctx, const nlohmann::json& preview) {
  if (ctx.json) {
    ctx.out << preview.dump(2) << '\n';
    return kExitOk;
  }
  ctx.out << preview.value("family", "") << " " << preview.value("dtype", "") << " "
          << format_shape(field(preview, "shape")) << " on " << target_of(preview) << '\n';
  TextTable table({"TEMPLATE", "FEASIBLE", "PRUNED", ""});
  for (const nlohmann::json& t : field(preview, "templates"))
    table.add_row({t.value("name", ""), std::to_string(t.value("feasible", std::int64_t{0})),
                   std::to_string(t.value("pruned", std::int64_t{0})),
                   t.value("other_arch", false) ? "for another arch" : ""});
  table.print(ctx.out);
  const std::int64_t feasible = preview.value("feasible", std::int64_t{0});
  const std::int64_t to_run = preview.value("to_run", std::int64_t{0});
  ctx.out << feasible << " feasible config" << (feasible == 1 ? "" : "s") << ", "
          << preview.value("pruned", std::int64_t{0}) << " pruned; the job runs " << to_run;
  if (feasible > 0 && to_run < feasible)
    ctx.out << " (" << format_number(100.0 * static_cast<double>(to_run) / feasible, 1)
            << "% of them, its budget)";
  ctx.out << '\n';
  const nlohmann::json& seconds = field(preview, "estimated_seconds");
  if (seconds.is_number())
    ctx.out << "estimated: " << format_number(seconds, 0)
            << " s at this daemon's rates so far (an upper bound: compiles and measurements "
               "overlap)\n";
  else
    ctx.out << "no estimate: this daemon has not compiled or measured anything yet\n";
  nlohmann::json groups = field(preview, "pruned_groups");
  if (groups.is_array() && !groups.empty()) {
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return a.value("count", std::int64_t{0}) > b.value("count", std::int64_t{0});
    });
    ctx.out << "pruned by (the largest counts):\n";
    int shown = 0;
    for (const nlohmann::json& g : groups) {
      if (++shown > 5) break;
      ctx.out << "  " << g.value("count", std::int64_t{0}) << " " << g.value("template", "") << ": "
              << g.value("reason", "") << '\n';
    }
    if (groups.size() > 5)
      ctx.out << "  ... (" << groups.size() - 5 << " more; --json lists all)\n";
  }
  return kExitOk;
}

}  // namespace

int run_submit(const CliContext& ctx, const SubmitArgs& args) {
  JobSpec spec;
  spec.family = args.family;
  spec.shape = shape_for_family(args.shape, family_entry(ctx, args.family));
  spec.dtype = args.dtype;
  spec.mode = args.mode;
  spec.arch = args.arch;
  spec.device = args.device;
  spec.budget = args.budget;
  spec.search = args.search;
  spec.search_seconds = args.search_seconds;
  spec.search_patience = args.search_patience;
  spec.pipeline = args.pipeline;
  if (!args.configs.empty()) spec.configs = configs_arg(args.configs);
  if (args.plan) return print_plan(ctx, ctx.client.submit_job(spec, true));
  const auto started = std::chrono::steady_clock::now();
  const nlohmann::json job = ctx.client.submit_job(spec);
  const std::int64_t id = job.at("id").get<std::int64_t>();

  if (!args.wait) {
    if (ctx.json) {
      ctx.out << job.dump(2) << '\n';
    } else {
      ctx.out << "job " << id << " " << job.value("status", "") << ": " << job.value("family", "")
              << " " << job.value("dtype", "") << " " << format_shape(field(job, "shape")) << " on "
              << target_of(job) << '\n'
              << "follow it with: kerntune show " << id << '\n';
    }
    return kExitOk;
  }

  notice_interrupt_of(id);  // before the first word about the job: a Ctrl-C from then on says it
  if (!ctx.json) {
    const nlohmann::json& search = field(field(job, "search"), "name");
    ctx.err << "job " << id << ": " << job.value("family", "") << " " << job.value("dtype", "")
            << " " << format_shape(field(job, "shape")) << " on " << target_of(job)
            << (search.is_string() ? ", search " + search.get<std::string>() : std::string())
            << '\n';
  }
  const nlohmann::json last = wait_for_job(ctx, id, args.poll);
  return report_finished_job(
      ctx, last, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace kt
