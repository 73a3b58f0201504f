#include "client/query_commands.hpp"

#include <fstream>

#include "client/progress_bar.hpp"
#include "client/shape_arg.hpp"
#include "client/submit_command.hpp"
#include "client/text_format.hpp"

namespace kt {
namespace {

std::string text_of(const nlohmann::json& j, const std::string& name,
                    const std::string& fallback = "-") {
  const nlohmann::json& value = field(j, name);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return fallback;
  return value.dump();
}

std::string joined(const nlohmann::json& items, const std::string& separator) {
  std::string text;
  if (!items.is_array()) return text;
  for (const auto& item : items)
    text += (text.empty() ? "" : separator) +
            (item.is_string() ? item.get<std::string>() : item.dump());
  return text;
}

TunedQuery tuned_query(const CliContext& ctx, const TunedArgs& args) {
  TunedQuery query;
  query.family = args.family;
  query.dtype = args.dtype;
  query.device = args.device;
  query.nearest = args.nearest;
  query.tune_on_miss = args.tune_on_miss;
  query.predict = args.predict;
  query.retune_stale = args.retune_stale;
  // NAME=VALUE goes as written (the server matches dim names case-insensitively); extents alone
  // need the family's dims in order.
  query.shape = is_positional_shape(args.shape)
                    ? shape_for_family(args.shape, family_entry(ctx, args.family))
                    : parse_shape_arg(args.shape);
  return query;
}

std::string reference_label(const nlohmann::json& best) {
  const std::string kind = text_of(best, "reference", "");
  return kind.rfind("cublas", 0) == 0 ? "cuBLAS" : (kind.empty() ? "reference" : kind);
}

std::string error_text(const nlohmann::json& variant) {
  const nlohmann::json& error = field(variant, "error");
  if (!error.is_object()) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2e",
                field(error, "rel_l2").is_number() ? field(error, "rel_l2").get<double>() : 0.0);
  return buffer;
}

std::string gate_and_reason(const nlohmann::json& variant) {
  const std::string gate = text_of(variant, "failed_gate", "");
  const std::string reason = text_of(variant, "reason", "");
  if (gate.empty()) return shorten(reason.empty() ? "-" : reason, 48);
  return shorten(gate + (reason.empty() ? "" : ": " + reason), 48);
}

std::string device_of(const nlohmann::json& job) {
  if (text_of(job, "mode") == "compile") return text_of(job, "arch") + " (compile)";
  return text_of(job, "device_name") + " (" + text_of(job, "arch") + ")" +
         (text_of(job, "mode") == "check" ? " check" : "");
}

// "cuBLAS" for any cuBLAS / cublasLt kind, else the kind as named.
std::string library_label(const std::string& kind) {
  return kind.rfind("cublas", 0) == 0 ? "cuBLAS" : kind;
}

// A job's final comparison in a cell: its winner's ratio over the baseline and who is the
// answer, "1.02x ours" or "0.87x cuBLAS"; "-" before (or without) one.
std::string versus_baseline(const nlohmann::json& job) {
  const nlohmann::json& comparison = field(job, "comparison");
  const nlohmann::json& baseline_wins = field(comparison, "baseline_wins");
  const nlohmann::json& final = field(comparison, "final");
  if (!baseline_wins.is_boolean() || !final.is_object()) return "-";
  const nlohmann::json& ids = field(final, "variant_ids");
  const nlohmann::json& speedups = field(final, "speedups");
  const nlohmann::json& winner = field(final, "winner_variant_id");
  if (!ids.is_array() || !speedups.is_array()) return "-";
  for (std::size_t i = 0; i < ids.size() && i < speedups.size(); ++i) {
    if (ids[i] != winner) continue;
    const std::string who =
        baseline_wins.get<bool>()
            ? library_label(text_of(field(final, "baseline"), "kind", "baseline"))
            : "ours";
    return format_number(field(speedups[i], "value"), 2) + "x " + who;
  }
  return "-";
}

// "cublasLt 130100, algorithm 3 of the heuristic's 8" from the baseline's own description.
std::string baseline_call_text(const nlohmann::json& call) {
  std::string text = text_of(call, "library", text_of(call, "kind", "?"));
  if (field(call, "algorithm_index").is_number_integer())
    text += ", algorithm " + field(call, "algorithm_index").dump() +
            (field(call, "heuristic_algorithms").is_number_integer()
                 ? " of the heuristic's " + field(call, "heuristic_algorithms").dump()
                 : std::string());
  return text;
}

// The headline when the baseline is the answer, by what decided it.
std::string baseline_headline(const std::string& library, const nlohmann::json& verdict,
                              const nlohmann::json& own) {
  const std::string basis = text_of(verdict, "basis", "");
  const nlohmann::json& final = field(own, "final");
  if (basis == "no_variant")
    return library +
           " is the answer for this shape: no kerntune variant was measured (none survived the "
           "constraints, or every one failed).";
  if (basis == "final_comparison" && field(final, "speedup_high").is_number() &&
      field(final, "speedup_high").get<double>() >= 1.0)
    return library +
           " is as fast for this shape (our best is within the noise of it): call the library.";
  if (basis == "first_pass")
    return library +
           " is faster for this shape (first-pass figures, no final comparison): call "
           "the library.";
  return library + " is faster for this shape: call the library.";
}

// kerntune best when the family's baseline wins: the library call first, then our best beside it.
void print_baseline_answer(const CliContext& ctx, const BestConfig& best) {
  const nlohmann::json& raw = best.raw;
  const std::string library = library_label(best.template_name);
  const nlohmann::json& own = field(raw, "best_own");
  const nlohmann::json& verdict = field(raw, "verdict");
  ctx.out << "  " << baseline_headline(library, verdict, own) << '\n';
  ctx.out << "  " << library << ":"
          << std::string(library.size() < 10 ? 10 - library.size() : 1, ' ')
          << baseline_call_text(field(raw, "baseline_call")) << ", "
          << format_us(field(raw, "median_us")) << " (median)\n";
  if (own.is_object()) {
    std::string figures = format_us(field(own, "median_us"));
    if (const std::string final = final_speedup_text(field(own, "final")); !final.empty())
      figures += ", " + final;
    ctx.out << "  our best:  " << text_of(own, "template") << " "
            << format_config(field(own, "config")) << ": " << figures << '\n';
  } else {
    ctx.out << "  our best:  none measured\n";
  }
  ctx.out << "  why:       " << text_of(verdict, "reason") << '\n';
  ctx.out << "  from:      job " << best.job_id;
  if (own.is_object()) ctx.out << ", our variant " << text_of(own, "variant_id");
  ctx.out << '\n';
}

}  // namespace

int run_families(const CliContext& ctx) {
  const nlohmann::json reply = ctx.client.families();
  if (ctx.json) {
    ctx.out << reply.dump(2) << '\n';
    return kExitOk;
  }
  for (const auto& family : field(reply, "families")) {
    ctx.out << text_of(family, "name") << ": " << text_of(family, "description", "") << '\n';
    std::string dims;
    for (const auto& dim : field(family, "dims"))
      dims += (dims.empty() ? "" : ", ") + text_of(dim, "name") + " [" + text_of(dim, "min") +
              ".." + text_of(dim, "max") + "]";
    ctx.out << "  dims:      " << dims << '\n';
    ctx.out << "  dtypes:    " << joined(field(family, "dtypes"), ", ") << '\n';
    ctx.out << "  reference: " << text_of(family, "reference") << '\n';
    for (const auto& tmpl : field(family, "templates")) {
      ctx.out << "  template " << text_of(tmpl, "name") << " (archs "
              << joined(field(tmpl, "archs"), ", ") << "): " << text_of(tmpl, "space_size")
              << " configs before constraints\n";
      for (const auto& axis : field(tmpl, "axes")) {
        ctx.out << "    " << text_of(axis, "name") << ": " << joined(field(axis, "values"), " ");
        if (!field(axis, "archs").empty())
          ctx.out << "  (only " << joined(field(axis, "archs"), ", ") << ")";
        ctx.out << '\n';
      }
    }
  }
  for (const auto& error : field(reply, "errors"))
    ctx.out << "not loaded: " << error.get<std::string>() << '\n';
  return kExitOk;
}

int run_devices(const CliContext& ctx) {
  const nlohmann::json reply = ctx.client.devices();
  if (ctx.json) {
    ctx.out << reply.dump(2) << '\n';
    return kExitOk;
  }
  const nlohmann::json& devices = field(reply, "devices");
  if (devices.empty()) {
    ctx.out << "no GPU on the server's host: " << text_of(reply, "error", "none found") << '\n'
            << "compile-only jobs still work: kerntune submit ... --mode compile --arch sm_90a\n";
    return kExitOk;
  }
  TextTable table({"#", "name", "arch", "SMs", "memory", "driver", "uuid"});
  for (const auto& device : devices) {
    const double gib = field(device, "memory_bytes").is_number()
                           ? field(device, "memory_bytes").get<double>() / (1 << 30)
                           : 0.0;
    table.add_row({text_of(device, "ordinal"), text_of(device, "name"), text_of(device, "arch"),
                   text_of(device, "sm_count"), format_number(gib, 1) + " GiB",
                   text_of(device, "driver_version"), text_of(device, "uuid")});
  }
  table.print(ctx.out);
  return kExitOk;
}

namespace {

// Where an answer came from when it is not a fresh result of the asked shape: the nearest tuned
// shape (nearest=1) and the keys that changed since it was tuned.
void print_answer_origin(const CliContext& ctx, const nlohmann::json& raw) {
  const nlohmann::json& nearest = field(raw, "nearest");
  if (field(raw, "exact") == false && nearest.is_object())
    ctx.out << "  NOT TUNED for " << format_shape(field(nearest, "asked_shape"))
            << ": this is the nearest tuned shape's answer, "
            << format_shape(field(nearest, "shape")) << " (distance "
            << format_number(field(nearest, "distance"), 3) << ", sum of |log ratio| over dims)\n";
  if (field(raw, "stale") == true) {
    std::string changed;
    for (const auto& key : field(raw, "stale_keys"))
      changed += (changed.empty() ? "" : ", ") + text_of(key, "key") + " " +
                 text_of(key, "stored") + " -> " + text_of(key, "current");
    ctx.out << "  STALE:     tuned before a change (" << changed
            << "); --retune-stale starts a job re-tuning it\n";
  }
}

void print_best(const CliContext& ctx, const BestConfig& best) {
  const nlohmann::json& raw = best.raw;
  ctx.out << best.family << " " << best.dtype << " " << format_shape(field(raw, "shape")) << " on "
          << text_of(raw, "device") << " (" << best.arch << ")\n";
  print_answer_origin(ctx, raw);
  if (best.baseline_wins) {
    print_baseline_answer(ctx, best);
    return;
  }
  ctx.out << "  template:  " << best.template_name << '\n';
  ctx.out << "  config:    " << format_config(field(raw, "config")) << '\n';
  ctx.out << "  time:      " << format_us(best.median_us) << " (median)\n";
  ctx.out << "  TFLOP/s:   " << format_number(best.tflops, 1) << '\n';
  ctx.out << "  GB/s:      " << format_number(best.gbps, 1) << '\n';
  if (const std::string final = final_speedup_text(field(raw, "final")); !final.empty())
    ctx.out << "  speedup:   " << final << " (final interleaved comparison, 95% interval)\n";
  else if (best.speedup_vs_reference)
    ctx.out << "  speedup:   " << format_number(*best.speedup_vs_reference, 2) << "x vs "
            << reference_label(raw) << " ("
            << format_us(best.reference_us ? nlohmann::json(*best.reference_us) : nlohmann::json())
            << "), first pass only\n";
  if (const nlohmann::json& failed = field(raw, "baseline_failed"); failed.is_string())
    ctx.out << "  baseline:  failed, not compared (" << failed.get<std::string>() << ")\n";
  ctx.out << "  from:      job " << best.job_id << ", variant " << best.variant_id << '\n';
}

}  // namespace

// A predicted answer (predict=1 on a miss): the config the shape predictor ranks first, never
// measured for this shape.
void print_predicted(const CliContext& ctx, const nlohmann::json& p) {
  const nlohmann::json& model = field(p, "model");
  const nlohmann::json& interval = field(p, "expected_interval_us");
  ctx.out << "PREDICTED for " << text_of(p, "family") << " " << text_of(p, "dtype") << " "
          << format_shape(field(p, "shape")) << " (never measured for this shape)\n"
          << "  template:  " << text_of(p, "template") << "\n"
          << "  config:    " << format_config(field(p, "config")) << "\n"
          << "  expected:  " << format_us(field(p, "expected_us"));
  if (interval.is_array() && interval.size() == 2)
    ctx.out << " (" << format_us(interval[0]) << " to " << format_us(interval[1])
            << ", the model's 5-95% error on shapes it was not fitted on)";
  ctx.out << "\n  model:     fitted on " << text_of(model, "variants") << " measured variants of "
          << text_of(model, "shapes") << " shapes at " << text_of(model, "fitted_at") << ", "
          << text_of(model, "candidates_ranked") << " feasible configs ranked\n"
          << "  checked:   "
          << (field(p, "validated_elsewhere") == true
                  ? "this config passed the reference check on another shape"
                  : "this config was never run: tune the shape before relying on it")
          << "\n";
  const nlohmann::json& check = field(p, "check");
  if (!check.is_object()) return;
  const std::string status = text_of(check, "status");
  const bool on_gpu = text_of(check, "kind") == "gpu";
  const std::string job_kind = on_gpu ? "check job" : "compile job";
  ctx.out << (on_gpu ? "  on GPU:    " : "  compiles:  ");
  if (status == "compiled")
    ctx.out << "yes, for this shape (job " << text_of(check, "job_id") << ": "
            << text_of(check, "registers") << " registers, " << text_of(check, "spill_bytes")
            << " spill bytes, " << text_of(check, "smem_bytes") << " B shared memory)";
  else if (status == "checked")
    ctx.out << "right for this shape on " << text_of(check, "device_model") << ", "
            << format_us(field(check, "measured_us")) << " in one check (job "
            << text_of(check, "job_id") << ": " << text_of(check, "registers") << " registers, "
            << text_of(check, "spill_bytes") << " spill bytes); not a tuned figure";
  else if ((status == "queued" || status == "running") && field(check, "job_id").is_null())
    ctx.out << "being checked (its " << job_kind << " is being queued)";
  else if (status == "queued" || status == "running")
    ctx.out << "being checked (" << job_kind << " " << text_of(check, "job_id") << ", " << status
            << ")";
  else if (status == "failed")
    ctx.out << "NO: " << text_of(check, "reason")
            << (field(check, "job_id").is_null() ? "" : " (job " + text_of(check, "job_id") + ")");
  else
    ctx.out << "not checked: " << text_of(check, "reason");
  ctx.out << "\n";
}

bool is_predicted(const nlohmann::json& answer) {
  return answer.is_object() && field(answer, "source") == "predicted";
}

int run_best(const CliContext& ctx, const TunedArgs& args) {
  const nlohmann::json reply = ctx.client.best_answer(tuned_query(ctx, args));
  if (ctx.json) {
    ctx.out << reply.dump(2) << '\n';
    return kExitOk;
  }
  // 202: a job tunes the shape (tune_on_miss, retune_stale); the answer meanwhile, if any.
  if (reply.contains("link") && reply.contains("job")) {
    const nlohmann::json& job = field(reply, "job");
    if (is_predicted(field(reply, "answer")))
      print_predicted(ctx, field(reply, "answer"));
    else if (field(reply, "answer").is_object())
      print_best(ctx, best_config_from_json(field(reply, "answer")));
    else
      ctx.out << "nothing tuned for " << args.family << " " << args.dtype << " "
              << format_shape(field(job, "shape")) << " yet\n";
    ctx.out << "  tuning:    job " << text_of(job, "id") << " "
            << (field(reply, "new_job") == true ? "submitted" : "already " + text_of(job, "status"))
            << " (" << text_of(reply, "link") << "); kerntune show " << text_of(job, "id")
            << " follows it\n";
    return kExitOk;
  }
  if (is_predicted(reply))
    print_predicted(ctx, reply);
  else
    print_best(ctx, best_config_from_json(reply));
  return kExitOk;
}

int run_pareto(const CliContext& ctx, const TunedArgs& args) {
  const nlohmann::json reply = ctx.client.pareto(tuned_query(ctx, args));
  if (ctx.json) {
    ctx.out << reply.dump(2) << '\n';
    return kExitOk;
  }
  const nlohmann::json& front = field(reply, "front");
  const std::string what = args.family + " " + args.dtype + " " +
                           format_shape(field(reply, "shape")) + " on " +
                           text_of(reply, "device", "any device");
  if (front.empty()) {
    ctx.err << "nothing tuned for " << what << '\n';
    return kExitError;
  }
  ctx.out << "Pareto front (time, error, on-chip footprint) for " << what << ":\n";
  TextTable table(
      {"variant", "job", "template", "config", "time", "TFLOP/s", "error", "regs", "smem"});
  for (const auto& v : front)
    table.add_row({text_of(v, "id"), text_of(v, "job_id"), text_of(v, "template"),
                   format_config(field(v, "config")), format_us(field(v, "median_us")),
                   format_number(field(v, "tflops"), 1), error_text(v), text_of(v, "registers"),
                   text_of(v, "smem_bytes")});
  table.print(ctx.out);
  return kExitOk;
}

int run_history(const CliContext& ctx, const HistoryArgs& args) {
  HistoryQuery query;
  query.family = args.family;
  query.status = args.status;
  query.limit = args.limit;
  const nlohmann::json reply = ctx.client.history(query);
  if (ctx.json) {
    ctx.out << reply.dump(2) << '\n';
    return kExitOk;
  }
  const nlohmann::json& jobs = field(reply, "jobs");
  if (jobs.empty()) {
    ctx.out << "no jobs yet\n";
    return kExitOk;
  }
  TextTable table({"job", "status", "family", "dtype", "shape", "mode", "target", "run", "ok",
                   "failed", "vs baseline", "created"});
  int compared = 0, ours_won = 0;
  for (const auto& job : jobs) {
    const ProgressSnapshot progress = snapshot_from_job(job);
    const nlohmann::json& baseline_wins = field(field(job, "comparison"), "baseline_wins");
    if (baseline_wins.is_boolean()) {
      ++compared;
      ours_won += baseline_wins.get<bool>() ? 0 : 1;
    }
    table.add_row({text_of(job, "id"), text_of(job, "status"), text_of(job, "family"),
                   text_of(job, "dtype"), format_shape(field(job, "shape")), text_of(job, "mode"),
                   device_of(job),
                   std::to_string(progress.finished) + "/" + std::to_string(progress.total),
                   std::to_string(progress.succeeded), std::to_string(progress.failed),
                   versus_baseline(job), text_of(job, "created_at")});
  }
  table.print(ctx.out);
  if (compared > 0)
    ctx.out << "\nour kernels beat the baseline (final comparison, interval above 1) in "
            << ours_won << " of " << compared << " compared jobs listed; in the other "
            << compared - ours_won << " the baseline is the answer\n";
  return kExitOk;
}

// Pruned configurations are counted per constraint by the daemon: one line per group, and with
// --all its stored examples.
void print_pruned(const CliContext& ctx, const nlohmann::json& groups, bool all) {
  if (!groups.is_array() || groups.empty()) return;
  long long total = 0;
  for (const auto& group : groups)
    if (field(group, "count").is_number()) total += field(group, "count").get<long long>();
  ctx.out << "\npruned before compiling: " << total << " configurations\n";
  for (const auto& group : groups) {
    ctx.out << "  " << text_of(group, "count") << "  " << text_of(group, "template") << "  "
            << text_of(group, "reason") << '\n';
    if (!all) continue;
    for (const auto& example : field(group, "examples"))
      ctx.out << "      e.g. " << format_config(example) << '\n';
  }
  if (!all) ctx.out << "(--all shows examples of each)\n";
}

int run_show(const CliContext& ctx, std::int64_t job_id, bool all) {
  const nlohmann::json job = ctx.client.job(job_id);
  const nlohmann::json variants = ctx.client.variants(job_id, false, !all);
  if (ctx.json) {
    ctx.out << nlohmann::json{{"job", job}, {"variants", field(variants, "variants")}}.dump(2)
            << '\n';
    return kExitOk;
  }
  ctx.out << "job " << text_of(job, "id") << ": " << text_of(job, "status");
  if (field(job, "reason").is_string()) ctx.out << " (" << text_of(job, "reason") << ")";
  ctx.out << '\n'
          << "  problem:   " << text_of(job, "family") << " " << text_of(job, "dtype") << " "
          << format_shape(field(job, "shape")) << '\n'
          << "  target:    " << device_of(job) << '\n'
          << "  budget:    "
          << (field(job, "budget") == 0 ? std::string("all variants") : text_of(job, "budget"))
          << '\n'
          << "  variants:  " << text_of(field(job, "progress"), "finished") << "/"
          << text_of(field(job, "progress"), "total") << " finished: " << status_counts(job)
          << '\n';
  if (field(job, "reference_us").is_number())
    ctx.out << "  reference: " << format_us(field(job, "reference_us")) << '\n';
  // Issue 15: which tuned shapes seeded the search, and whether the results are stale.
  if (const nlohmann::json& warm = field(job, "warm_start"); warm.is_object()) {
    std::string from;
    for (const auto& source : field(warm, "from"))
      from += (from.empty() ? "" : "; ") + format_shape(field(source, "shape")) + " (distance " +
              format_number(field(source, "distance"), 3) + ", job " + text_of(source, "job_id") +
              ")";
    ctx.out << "  warm start: " << field(warm, "seeds").size() << " configs from " << from << '\n';
  }
  print_answer_origin(ctx, job);
  const nlohmann::json& best = field(job, "best");
  if (best.is_object())
    ctx.out << "  best:      variant " << text_of(best, "id") << ", "
            << format_us(field(best, "median_us")) << ", "
            << format_number(field(best, "tflops"), 1) << " TFLOP/s"
            << (field(best, "speedup").is_number()
                    ? ", " + format_number(field(best, "speedup"), 2) + "x vs reference"
                    : std::string())
            << '\n';
  if (const std::string final = final_speedup_text(field(best, "final")); !final.empty())
    ctx.out << "  final:     " << format_us(field(field(best, "final"), "median_us")) << ", "
            << final << '\n';
  ctx.out << "  created:   " << text_of(job, "created_at")
          << "  finished: " << text_of(job, "finished_at") << "\n\n";

  TextTable table({"variant", "template", "config", "status", "gate/reason", "time", "error",
                   "regs", "spill", "smem"});
  for (const auto& v : field(variants, "variants"))
    table.add_row({text_of(v, "id"), text_of(v, "template"), format_config(field(v, "config")),
                   text_of(v, "status"), gate_and_reason(v), format_us(field(v, "median_us")),
                   error_text(v), text_of(v, "registers"), text_of(v, "spill_bytes"),
                   text_of(v, "smem_bytes")});
  table.print(ctx.out);
  print_pruned(ctx, field(job, "pruned"), all);
  return kExitOk;
}

int run_cancel(const CliContext& ctx, std::int64_t job_id) {
  const nlohmann::json job = ctx.client.cancel(job_id);
  if (ctx.json) {
    ctx.out << job.dump(2) << '\n';
    return kExitOk;
  }
  ctx.out << "job " << job_id << ": cancellation requested (now " << text_of(job, "status")
          << ")\n";
  return kExitOk;
}

int run_kernel(const CliContext& ctx, std::int64_t variant_id, const std::string& path) {
  const std::vector<char> cubin = ctx.client.fetch_kernel(variant_id);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
  file.close();
  if (!file) {
    ctx.err << "kerntune: cannot write " << path << '\n';
    return kExitError;
  }
  ctx.out << "wrote " << cubin.size() << " bytes (cubin of variant " << variant_id << ") to "
          << path << '\n';
  return kExitOk;
}

}  // namespace kt
