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

TunedQuery tuned_query(const TunedArgs& args) {
  TunedQuery query;
  query.family = args.family;
  query.dtype = args.dtype;
  query.device = args.device;
  query.shape = parse_shape_arg(args.shape);  // the server matches dim names case-insensitively
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
  return text_of(job, "device_name") + " (" + text_of(job, "arch") + ")";
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

int run_best(const CliContext& ctx, const TunedArgs& args) {
  const BestConfig best = ctx.client.best(tuned_query(args));
  if (ctx.json) {
    ctx.out << best.raw.dump(2) << '\n';
    return kExitOk;
  }
  const nlohmann::json& raw = best.raw;
  ctx.out << best.family << " " << best.dtype << " " << format_shape(field(raw, "shape")) << " on "
          << text_of(raw, "device") << " (" << best.arch << ")\n";
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
  ctx.out << "  from:      job " << best.job_id << ", variant " << best.variant_id << '\n';
  return kExitOk;
}

int run_pareto(const CliContext& ctx, const TunedArgs& args) {
  const nlohmann::json reply = ctx.client.pareto(tuned_query(args));
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
                   "failed", "created"});
  for (const auto& job : jobs) {
    const ProgressSnapshot progress = snapshot_from_job(job);
    table.add_row({text_of(job, "id"), text_of(job, "status"), text_of(job, "family"),
                   text_of(job, "dtype"), format_shape(field(job, "shape")), text_of(job, "mode"),
                   device_of(job),
                   std::to_string(progress.finished) + "/" + std::to_string(progress.total),
                   std::to_string(progress.succeeded), std::to_string(progress.failed),
                   text_of(job, "created_at")});
  }
  table.print(ctx.out);
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
