// kerntune: the command-line client of kerntuned.
#include <unistd.h>
#include <algorithm>

#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "client/batch_view.hpp"
#include "client/bundle_command.hpp"
#include "client/cli_context.hpp"
#include "client/cli_hints.hpp"
#include "client/export_command.hpp"
#include "client/family_command.hpp"
#include "client/http_transport.hpp"
#include "client/query_commands.hpp"
#include "client/submit_command.hpp"
#include "client/tune_all_command.hpp"

namespace {

constexpr const char* kShapeHelp =
    "dims, e.g. m=4096,n=4096,k=4096, or extents in the family's dim order: 4096x4096x4096";

void add_tuned_options(CLI::App& command, kt::TunedArgs& args) {
  command.add_option("family", args.family, "kernel family, e.g. gemm")->required();
  command.add_option("--shape", args.shape, kShapeHelp)->required();
  command.add_option("--dtype", args.dtype, "element type, e.g. bf16")->required();
  command.add_option("--device", args.device, "GPU model (or ordinal/UUID); default: any");
}

// A count or a time that may be 0 with a meaning of its own: said in words when it is negative
// (CLI11's NonNegativeNumber prints its range, up to a 300-digit double).
CLI::Validator zero_or_more(const std::string& zero_means) {
  return CLI::Validator(
      [zero_means](std::string& value) -> std::string {
        double number = 0;
        try {
          std::size_t used = 0;
          number = std::stod(value, &used);
          if (used != value.size()) throw std::invalid_argument(value);
        } catch (const std::exception&) {
          return "'" + value + "' is not a number";
        }
        return number < 0 ? "must be 0 or more (0: " + zero_means + "), not " + value : "";
      },
      "0 or more");
}

// CLI11 reports a mistyped command as "A subcommand is required"; the first argument that is
// neither an option nor a command is named instead, with the commands there are.
std::string unknown_command_message(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--server" || arg == "--token-file") {
      ++i;  // its value
      continue;
    }
    if (arg.rfind('-', 0) == 0) continue;
    if (std::find(commands.begin(), commands.end(), arg) != commands.end()) return "";
    std::string known;
    for (const std::string& name : commands) known += (known.empty() ? "" : ", ") + name;
    return "unknown command '" + arg + "'; commands: " + known;
  }
  return "";
}

}  // namespace

// A job's options, for `submit` and for `plan` (which asks the daemon what the job would be).
void add_job_options(CLI::App& command, kt::SubmitArgs& args) {
  command.add_option("family", args.family, "kernel family, e.g. gemm")->required();
  command.add_option("--shape", args.shape, kShapeHelp)->required();
  command.add_option("--dtype", args.dtype, "element type, e.g. bf16")->required();
  command
      .add_option("--mode", args.mode,
                  "tune (on a GPU), compile (NVRTC only) or check (--configs checked and timed "
                  "on a GPU; no answer rests on them)")
      ->check(CLI::IsMember({"tune", "compile", "check"}))
      ->capture_default_str();
  command.add_option("--arch", args.arch, "target arch for --mode compile, e.g. sm_100a");
  command.add_option("--device", args.device, "GPU ordinal, UUID or name (tune and check modes)");
  command.add_option("--budget", args.budget, "max variants to run (0: all)")
      ->check(zero_or_more("the whole space"));
  command.add_option("--search", args.search,
                     "exhaustive, random, model, local or predicted (default: predicted with a budget, "
                     "exhaustive without)");
  command
      .add_option("--search-seconds", args.search_seconds,
                  "stop searching after this many seconds (0: no limit)")
      ->check(zero_or_more("no limit"));
  command
      .add_option("--search-patience", args.search_patience,
                  "stop after this many batches without an improvement above 1%")
      ->check(zero_or_more("no limit"));
  command
      .add_option("--pipeline", args.pipeline,
                  "pipelined (compile ahead on every core; default) or serial")
      ->check(CLI::IsMember({"pipelined", "serial"}));
  command.add_option(
      "--configs", args.configs,
      "measure only these configs: a JSON array such as '[{\"BM\":128,...}]', or @FILE");
}

int main(int argc, char** argv) {
  CLI::App app{"kerntune: submit CUDA kernel tuning jobs to kerntuned and read their results"};
  app.require_subcommand(1);
  std::string server = kt::default_server_url();
  bool json = false;
  app.add_option("--server", server, "kerntuned URL (env KERNTUNE_SERVER)")->capture_default_str();
  app.add_flag("--json", json, "print the server's JSON instead of text");
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "file whose first line is the daemon's bearer token (env KERNTUNE_TOKEN, or "
                 "KERNTUNE_TOKEN_FILE)");

  app.add_subcommand("families", "kernel families and their parameter spaces");
  app.add_subcommand("devices", "GPUs of the server's host");

  kt::SubmitArgs submit;
  auto* submit_cmd = app.add_subcommand("submit", "submit a tuning (or compile-only) job");
  add_job_options(*submit_cmd, submit);
  submit_cmd->add_flag("--wait", submit.wait, "follow the job with a progress bar until it ends");
  kt::SubmitArgs plan;
  plan.plan = true;
  add_job_options(*app.add_subcommand("plan",
                                      "what a job would be, before it runs: feasible configs per "
                                      "template, pruned ones by constraint, the budget's share "
                                      "and an estimated time; nothing is queued"),
                  plan);

  kt::TunedArgs best;
  auto* best_cmd = app.add_subcommand("best", "best measured config for a problem");
  add_tuned_options(*best_cmd, best);
  best_cmd->add_flag("--nearest", best.nearest,
                     "untuned shape: answer with the nearest tuned shape's config (flagged)");
  best_cmd->add_flag("--predict", best.predict,
                     "untuned shape: answer with the shape predictor's config, never measured for "
                     "it (flagged PREDICTED)");
  best_cmd->add_flag("--tune-on-miss", best.tune_on_miss,
                     "untuned shape: start a tuning job (or show the one running)");
  best_cmd->add_flag("--retune-stale", best.retune_stale,
                     "stale result (driver, NVRTC or family changed): start a job re-tuning it");
  kt::TunedArgs pareto;
  add_tuned_options(*app.add_subcommand("pareto", "Pareto front (time, error, footprint)"), pareto);

  kt::HistoryArgs history;
  auto* history_cmd = app.add_subcommand("history", "past jobs, newest first");
  history_cmd->add_option("--family", history.family, "only this family");
  history_cmd->add_option("--status", history.status, "queued, running, done, failed, cancelled");
  history_cmd->add_option("--limit", history.limit, "at most this many jobs")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();

  std::int64_t show_id = 0, cancel_id = 0, kernel_id = 0, wait_id = 0;
  bool show_all = false;
  std::string kernel_path;
  auto* show_cmd = app.add_subcommand("show", "a job and every variant it tried");
  show_cmd->add_option("job_id", show_id, "job id")->required();
  show_cmd->add_flag("--all", show_all,
                     "also list unsupported templates and examples of pruned configurations");
  app.add_subcommand("wait",
                     "follow a job with a progress bar until it ends (exit code 2 unless done)")
      ->add_option("job_id", wait_id, "job id")
      ->required();
  app.add_subcommand("cancel", "cancel a queued or running job")
      ->add_option("job_id", cancel_id, "job id")
      ->required();
  std::int64_t export_id = 0;
  std::string export_path;
  kt::BundleArgs bundle;
  auto* export_cmd = app.add_subcommand(
      "export",
      "a job's variants as a recorded space for kt-replay (JOB_ID -o FILE), or the tuned kernels "
      "of a shapes file as a bundle a program loads without a daemon (--bundle DIR --shapes FILE)");
  export_cmd->add_option("job_id", export_id, "job id (a whole-space job: budget 0)");
  export_cmd->add_option("-o,--output", export_path, "file to write (\"-\": stdout)");
  export_cmd->add_option("--bundle", bundle.folder,
                         "folder to write the bundle into (new, empty or a bundle)");
  export_cmd->add_option(
      "--shapes", bundle.shapes_path,
      "shapes file (kerntune.torch.record's output) whose problems go in the bundle");
  export_cmd->add_option(
      "--device", bundle.devices,
      "GPU model to export answers for (repeatable; default: the daemon's GPUs)");

  kt::TuneAllArgs tune_all;
  auto* tune_all_cmd = app.add_subcommand(
      "tune-all",
      "tune every problem of a shapes file (kerntune.torch.record's output), largest time share "
      "first, skipping those tuned and current on the GPU");
  tune_all_cmd->add_option("shapes", tune_all.shapes_path, "shapes file (JSON lines)")->required();
  tune_all_cmd
      ->add_option("--budget-per-shape", tune_all.budget_per_shape,
                   "variants to measure per problem (0: its whole space)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1000000}))
      ->capture_default_str();
  tune_all_cmd
      ->add_option("--minutes", tune_all.minutes,
                   "cancel what is still running after this long (0: no limit)")
      ->check(CLI::Range(0.0, 100000.0));
  tune_all_cmd->add_option("--device", tune_all.device,
                           "GPU ordinal, UUID or name (default: the first)");
  tune_all_cmd->add_option("--search", tune_all.search,
                           "exhaustive, random, model, local or predicted");
  tune_all_cmd->add_flag("--retune", tune_all.retune,
                         "also tune problems already tuned and current");
  tune_all_cmd->add_flag("--dry-run", tune_all.dry_run, "list what would be tuned; submit nothing");
  kt::BatchArgs batch;
  auto* batch_cmd = app.add_subcommand(
      "batch", "the newest batches of tune-all, or one batch (ID) problem by problem");
  batch_cmd->add_option("batch_id", batch.id, "batch id (default: list the newest)");
  batch_cmd->add_flag("--cancel", batch.cancel, "cancel the batch's unfinished jobs");
  auto* family_cmd = app.add_subcommand("family", "register a kernel family over the API");
  family_cmd->require_subcommand(1);
  std::string family_dir;
  family_cmd
      ->add_subcommand("add",
                       "register the family in DIR (manifest.json and its .cuh/.cu/.h sources) "
                       "with a daemon started with --allow-user-families; waits for its compile")
      ->add_option("dir", family_dir, "the family's folder")
      ->required();

  auto* kernel_cmd = app.add_subcommand("kernel", "download a variant's compiled cubin");
  kernel_cmd->add_option("variant_id", kernel_id, "variant id")->required();
  kernel_cmd->add_option("-o,--output", kernel_path, "file to write (default variant-ID.cubin)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (const std::string unknown = unknown_command_message(app, argc, argv); !unknown.empty()) {
      std::cerr << unknown << "\nRun with --help for more information.\n";
      return kt::kExitError;
    }
    // CLI11 prints the message (or the help); its own codes (105, 106, ...) are not the ones the
    // README documents: any argument mistake is 1.
    return app.exit(error) == 0 ? kt::kExitOk : kt::kExitError;
  }

  try {
    // The Client's transport takes its token from the environment; --token-file wins over it.
    // (Handed over this way so that Client's constructor keeps its signature.)
    if (!token_file.empty())
      setenv("KERNTUNE_TOKEN", kt::read_access_token_file(token_file).c_str(), 1);
    const kt::Client client(server);
    const kt::CliContext ctx{client, std::cout, std::cerr, json, isatty(STDERR_FILENO) == 1};
    const std::string name = app.get_subcommands().front()->get_name();
    if (name == "families") return kt::run_families(ctx);
    if (name == "devices") return kt::run_devices(ctx);
    if (name == "submit") return kt::run_submit(ctx, submit);
    if (name == "plan") return kt::run_submit(ctx, plan);
    if (name == "best") return kt::run_best(ctx, best);
    if (name == "pareto") return kt::run_pareto(ctx, pareto);
    if (name == "history") return kt::run_history(ctx, history);
    if (name == "show") return kt::run_show(ctx, show_id, show_all);
    if (name == "cancel") return kt::run_cancel(ctx, cancel_id);
    if (name == "wait") return kt::run_wait(ctx, wait_id, submit.poll);
    if (name == "export") {
      if (!bundle.folder.empty() || !bundle.shapes_path.empty()) {
        if (bundle.folder.empty() || bundle.shapes_path.empty() || export_id != 0 ||
            !export_path.empty()) {
          std::cerr << "kerntune export: a bundle takes --bundle DIR and --shapes FILE, and no job "
                       "id or -o\n";
          return kt::kExitError;
        }
        return kt::run_export_bundle(ctx, bundle);
      }
      if (export_id == 0 || export_path.empty()) {
        std::cerr << "kerntune export: give JOB_ID -o FILE (a recorded space), or --bundle DIR "
                     "--shapes FILE\n";
        return kt::kExitError;
      }
      return kt::run_export(ctx, export_id, export_path);
    }
    if (name == "tune-all") return kt::run_tune_all(ctx, tune_all);
    if (name == "batch") return kt::run_batch(ctx, batch);
    if (name == "family") return kt::run_family_add(ctx, family_dir);
    if (name == "kernel")
      return kt::run_kernel(
          ctx, kernel_id,
          kernel_path.empty() ? "variant-" + std::to_string(kernel_id) + ".cubin" : kernel_path);
    std::cerr << "kerntune: unknown command " << name << '\n';
    return kt::kExitError;
  } catch (const kt::ClientError& error) {
    std::cerr << "kerntune: " << kt::with_cli_hints(error.what());
    if (error.status() != 0)
      std::cerr << " (HTTP " << error.status() << ", " << error.code() << ")";
    std::cerr << '\n';
    const bool local_mistake = error.code() == "bad_url" || error.code() == "bad_token";
    return error.status() == 0 && !local_mistake ? kt::kExitUnreachable : kt::kExitError;
  } catch (const std::exception& error) {
    std::cerr << "kerntune: " << error.what() << '\n';
    return kt::kExitError;
  }
}
