#include "client/bundle_command.hpp"

#include <openssl/evp.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "client/gpu_models.hpp"
#include "client/shapes_file.hpp"
#include "client/text_format.hpp"

namespace kt {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> bundle_models(const CliContext& ctx,
                                       const std::vector<std::string>& asked) {
  std::vector<std::string> models;
  for (const std::string& device : asked) models.push_back(resolve_gpu_model(ctx, device));
  if (models.empty()) models = host_gpu_models(ctx);
  if (models.empty()) models = store_gpu_models(ctx);  // a daemon without a GPU: its store's
  if (models.empty())
    throw std::invalid_argument(
        "the daemon has no GPU and its store has no results: nothing to export");
  return models;
}

nlohmann::json tolerance_of(const nlohmann::json& families, const std::string& family,
                            const std::string& dtype) {
  for (const nlohmann::json& f : families.value("families", nlohmann::json::array()))
    if (f.value("name", "") == family) return field(field(f, "tolerance"), dtype);
  return nullptr;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

void write_file(const fs::path& path, const char* data, std::size_t size) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out.write(data, static_cast<std::streamsize>(size)) || !out.flush())
      throw std::runtime_error("cannot write " + temporary.string());
  }
  fs::rename(temporary, path);  // a crash leaves the old file or the new one, never half
}

// A folder to write the bundle into: new, empty, or an earlier bundle (replaced).
void prepare_folder(const fs::path& folder) {
  if (fs::exists(folder)) {
    if (!fs::is_directory(folder))
      throw std::invalid_argument(folder.string() + " is not a folder");
    if (!fs::is_empty(folder) && !fs::exists(folder / "bundle.json"))
      throw std::invalid_argument(folder.string() +
                                  " is a folder that holds something other than a bundle: give a "
                                  "new or empty folder");
    fs::remove_all(folder / "kernels");
  }
  fs::create_directories(folder / "kernels");
}

}  // namespace

std::string sha256_hex(const std::vector<char>& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  static const char* hex = "0123456789abcdef";
  std::string text;
  for (unsigned int i = 0; i < length; ++i) {
    text += hex[digest[i] >> 4];
    text += hex[digest[i] & 15];
  }
  return text;
}

int run_export_bundle(const CliContext& ctx, const BundleArgs& args) {
  const ShapesFile file = read_shapes_file(args.shapes_path);
  const std::vector<std::string> models = bundle_models(ctx, args.devices);
  const nlohmann::json families = ctx.client.families();
  const fs::path folder(args.folder);
  prepare_folder(folder);

  nlohmann::json entries = nlohmann::json::array(), missing = nlohmann::json::array();
  int ours = 0, baseline = 0, without_kernel = 0;
  TextTable table({"PROBLEM", "DEVICE", "IN THE BUNDLE"});
  for (const RecordedProblem& problem : file.problems) {
    for (const std::string& model : models) {
      TunedQuery query;
      query.family = problem.family;
      query.shape = problem.shape;
      query.dtype = problem.dtype;
      query.device = model;
      nlohmann::json answer;
      try {
        answer = ctx.client.best_answer(query);
      } catch (const ClientError& error) {
        if (error.status() != 404) throw;
        missing.push_back(problem_label(problem) + " on " + model + ": " + error.what());
        table.add_row({problem_label(problem), model, "not tuned"});
        continue;
      }
      nlohmann::json shape = nlohmann::json::object();
      for (const auto& [dim, extent] : problem.shape) shape[dim] = extent;
      nlohmann::json entry{{"family", problem.family},
                           {"shape", shape},
                           {"dtype", problem.dtype},
                           {"device", field(answer, "device")},
                           {"arch", field(answer, "arch")},
                           {"provenance",
                            {{"keys", field(answer, "keys")},
                             {"job_id", field(answer, "job_id")},
                             {"tuned_at", field(answer, "tuned_at")},
                             {"final", field(answer, "final")}}},
                           {"tolerance", tolerance_of(families, problem.family, problem.dtype)},
                           {"answer", answer},
                           {"kernel", nullptr},
                           {"kernel_sha256", nullptr}};
      const bool baseline_wins =
          answer.value("baseline_wins", false) || !field(answer, "variant_id").is_number();
      // Our best variant: the answer, or best_own beside the baseline's answer; its cubin goes in
      // either way, so a program may still choose it (the launch is always ours).
      const nlohmann::json& own = baseline_wins ? field(field(answer, "best_own"), "variant_id")
                                                : field(answer, "variant_id");
      entry["route"] = baseline_wins ? "baseline" : "ours";
      std::string row = baseline_wins
                            ? "baseline won: " + answer.value("baseline", std::string("?"))
                            : answer.value("template", std::string());
      if (own.is_number_integer()) {
        const std::int64_t variant = own.get<std::int64_t>();
        std::string lost;  // why our variant's kernel cannot go in
        if (!field(answer, "launch").is_object()) {
          lost = "variant " + std::to_string(variant) +
                 " has no launch description (its family or template is no longer loaded)";
        } else {
          try {
            const std::vector<char> cubin = ctx.client.fetch_kernel(variant);
            const std::string name = "kernels/variant-" + std::to_string(variant) + ".cubin";
            write_file(folder / name, cubin.data(), cubin.size());
            entry["kernel"] = name;
            entry["kernel_sha256"] = sha256_hex(cubin);
            entry["kernel_variant_id"] = variant;
            row += (baseline_wins ? "; ours: variant " : " variant ") + std::to_string(variant);
          } catch (const ClientError& error) {
            if (error.status() != 404) throw;  // no_kernel: its cubin left the compile cache
            lost = "variant " + std::to_string(variant) + " has no kernel (" + error.what() + ")";
          }
        }
        if (!lost.empty() && !baseline_wins) {  // the answer is ours, and it cannot be shipped
          missing.push_back(problem_label(problem) + " on " + model + ": " + lost);
          table.add_row({problem_label(problem), model, lost});
          ++without_kernel;
          continue;
        }
      }
      (baseline_wins ? baseline : ours) += 1;
      table.add_row(
          {problem_label(problem), model, row + (answer.value("stale", false) ? " (stale)" : "")});
      entries.push_back(std::move(entry));
    }
  }
  const nlohmann::json bundle{
      {"format", kBundleFormat},    {"created_at", utc_now()},
      {"server", ctx.client.url()}, {"shapes", fs::path(args.shapes_path).filename().string()},
      {"devices", models},          {"entries", entries},
      {"missing", missing},         {"unsupported", file.unsupported}};
  const std::string text = bundle.dump(1) + "\n";
  write_file(folder / "bundle.json", text.data(), text.size());
  if (ctx.json) {
    ctx.out << bundle.dump(2) << '\n';
  } else {
    table.print(ctx.out);
    ctx.out << "bundle " << folder.string() << ": " << ours << " answered by our kernels, "
            << baseline << " by the baseline, " << missing.size() - without_kernel << " not tuned, "
            << without_kernel << " without a kernel\n";
  }
  return kExitOk;
}

}  // namespace kt
