#include "client/export_command.hpp"

#include <fstream>

#include "client/text_format.hpp"

namespace kt {

nlohmann::json space_from_job(const nlohmann::json& job, const nlohmann::json& variants) {
  nlohmann::json out;
  out["format"] = "kerntune-space/1";  // tuner/search/recorded_space.hpp reads it
  out["family"] = field(job, "family");
  out["shape"] = field(job, "shape");
  out["dtype"] = field(job, "dtype");
  out["device"] = {{"name", field(job, "device_name")},
                   {"uuid", field(job, "device_uuid")},
                   {"arch", field(job, "arch")}};
  out["provenance"] = {{"job", field(job, "id")},
                       {"status", field(job, "status")},
                       {"budget", field(job, "budget")},
                       {"search", field(field(job, "search"), "name")},
                       {"created_at", field(job, "created_at")},
                       {"finished_at", field(job, "finished_at")},
                       {"how", "kerntune export"}};
  nlohmann::json rows = nlohmann::json::array();
  for (const nlohmann::json& v : field(variants, "variants")) {
    const std::string status = field(v, "status").is_string() ? v["status"].get<std::string>() : "";
    if (status == "pruned" || status == "unsupported_arch" || status == "pending" ||
        status == "cancelled")
      continue;  // never reached the compiler, or never finished: not part of the space
    nlohmann::json row{{"template", field(v, "template")},
                       {"config", field(v, "config")},
                       {"status", status},
                       {"median_us", status == "measured" ? field(v, "median_us") : nullptr}};
    for (const char* fact : {"registers", "spill_bytes", "smem_bytes", "threads"})
      if (field(v, fact).is_number_integer()) row[fact] = v[fact];
    rows.push_back(std::move(row));
  }
  out["variants"] = std::move(rows);
  return out;
}

int run_export(const CliContext& ctx, std::int64_t job_id, const std::string& path) {
  const nlohmann::json job = ctx.client.job(job_id);
  const nlohmann::json variants = ctx.client.variants(job_id, false, true);
  const nlohmann::json space = space_from_job(job, variants);
  if (field(job, "status") != "done" || field(job, "budget") != 0)
    ctx.err << "kerntune: warning: job " << job_id << " did not measure its whole space (budget "
            << field(job, "budget").dump() << ", " << field(job, "status").dump()
            << "); a replay against it sees only that subset\n";
  const std::string text = space.dump(0) + "\n";
  if (path == "-") {
    ctx.out << text;
  } else {
    std::ofstream file(path);
    if (!(file << text)) {
      ctx.err << "kerntune: cannot write " << path << '\n';
      return kExitError;
    }
    ctx.err << "job " << job_id << ": " << space["variants"].size() << " variants written to "
            << path << '\n';
  }
  return kExitOk;
}

}  // namespace kt
