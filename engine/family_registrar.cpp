#include "engine/family_registrar.hpp"
#include "engine/family_upload_check.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <set>

#include "tuner/client_values.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/text.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

// Probe shape of the compile before accepting, for dims without a default: a size most
// constraints admit (the compile itself does not depend on the shape).
constexpr std::int64_t kProbeDim = 1024;

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string random_id() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> nibble(0, 15);
  std::string id;
  for (int i = 0; i < 16; ++i) id += "0123456789abcdef"[nibble(device)];
  return id;
}

// A load_family message about the staging folder, as the client knows the upload.
std::string without_folder(std::string message, const std::filesystem::path& dir) {
  for (const std::string& prefix : {dir.string() + "/", dir.string()}) {
    const std::string replacement = prefix.back() == '/' ? "" : "the upload";
    for (std::size_t at = message.find(prefix); at != std::string::npos;
         at = message.find(prefix, at + replacement.size()))
      message.replace(at, prefix.size(), replacement);
  }
  return message;
}

// The variant compiled before accepting: the first of the first template's archs that a GPU of
// this host has (else the first arch kerntune knows limits for), the first dtype, and the first
// configuration the constraints admit at the probe shape (the first one at all if none does).
struct ProbeVariant {
  const TemplateSpec* tmpl = nullptr;
  Config config;
  std::string dtype;
  DeviceLimits limits;
};

// Streams the space, keeping the first admitted config and the first at all: the probe of a
// large space costs no memory, and `stop` (a daemon stopping) ends it within kStopCheckInterval;
// then `stopped` is set and nullopt returned.
std::optional<ProbeVariant> probe_variant(const Family& family,
                                          const std::vector<std::string>& archs,
                                          const StopCheck& stop, std::string& why_not,
                                          bool& stopped) {
  stopped = false;
  if (family.templates.empty() || family.dtypes.empty()) {
    why_not = "the family has no template or no dtype";
    return std::nullopt;
  }
  const TemplateSpec& first = family.templates.front();
  std::optional<DeviceLimits> limits;
  for (const std::string& arch : first.archs)
    if (std::find(archs.begin(), archs.end(), arch) != archs.end()) limits = limits_for_arch(arch);
  for (std::size_t i = 0; !limits && i < first.archs.size(); ++i)
    limits = limits_for_arch(first.archs[i]);
  if (!limits) {
    why_not = "template " + first.name + " names no arch kerntune knows (known: ";
    for (const std::string& arch : known_archs()) why_not += arch + " ";
    why_not.back() = ')';
    return std::nullopt;
  }
  Shape shape;
  for (const DimSpec& dim : family.dims)
    shape[dim.name] = dim.default_value.value_or(std::clamp(kProbeDim, dim.min, dim.max));
  ProbeVariant probe;
  probe.dtype = family.dtypes.front();
  probe.limits = *limits;
  std::optional<VariantPlan> admitted, any;
  const bool whole = for_each_variant(
      family, shape, probe.dtype, *limits,
      [&](const VariantPlan& plan) {
        if (plan.unsupported_arch || admitted) return;
        if (!any) any = plan;
        if (!plan.pruned_by) admitted = plan;
      },
      // Found: the rest of the space is not walked (asked every few hundred configs).
      [&] { return admitted.has_value() || (stop && stop()); });
  if (!whole && !admitted) {
    stopped = true;
    return std::nullopt;
  }
  const std::optional<VariantPlan>& chosen = admitted ? admitted : any;
  if (!chosen) {
    why_not = "no template of the family is written for " + limits->arch;
    return std::nullopt;
  }
  probe.tmpl = chosen->tmpl;
  probe.config = chosen->config;
  return probe;
}

// Every #include directive of a source, wherever it is (in a comment or a branch not taken too):
// its line number, the directive from its '#' to the line's end, and what follows "include".
struct IncludeDirective {
  int line = 0;
  std::string_view directive;
  std::string_view operand;
};

std::vector<IncludeDirective> include_directives(std::string_view text) {
  std::vector<IncludeDirective> found;
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t at = 0;
  for (int line = 1; at < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view rest = text.substr(at, end - at);
    while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
    if (!rest.empty() && rest.front() == '#') {
      const std::string_view directive = rest;
      rest.remove_prefix(1);
      while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
      if (rest.substr(0, 7) == "include") found.push_back({line, directive, rest.substr(7)});
    }
    at = end + 1;
  }
  return found;
}

// The file an include's operand names, "name" or <name>; nullopt for anything else (a macro).
std::optional<std::string> included_name(std::string_view operand) {
  while (!operand.empty() && (operand.front() == ' ' || operand.front() == '\t'))
    operand.remove_prefix(1);
  if (operand.empty() || (operand.front() != '"' && operand.front() != '<')) return std::nullopt;
  const std::size_t stop = operand.find(operand.front() == '"' ? '"' : '>', 1);
  if (stop == std::string_view::npos) return std::string();
  return std::string(operand.substr(1, stop - 1));
}

// The names of the files a source #includes, which costs at most a header copied in vain for a
// directive in a comment.
std::vector<std::string> included_names(const std::string& text) {
  std::vector<std::string> names;
  for (const IncludeDirective& include : include_directives(text))
    if (const auto name = included_name(include.operand); name && !name->empty())
      names.push_back(*name);
  return names;
}

// Why an #include directive of an uploaded source may not stand, or empty. A file names what it
// includes literally, as a file of the upload, of common/ or of the CUDA toolkit: no absolute
// path, no '..', no macro (which could spell either) and no #include_next. The compile process
// cannot open anything outside the CUDA headers anyway (Landlock); this says so at registration,
// with the line, instead of as a compile error.
std::string include_problem(const std::string& text) {
  for (const IncludeDirective& include : include_directives(text)) {
    const auto where = [&] {
      return "line " + std::to_string(include.line) + " (" + quote_client_text(include.directive) +
             ")";
    };
    const std::string_view operand = include.operand;
    const auto name = included_name(operand);
    if (!name) {
      // "#include X" or "#include_next": not "#includes" or another word that starts alike.
      if (operand.empty() || operand.front() == ' ' || operand.front() == '\t' ||
          operand.front() == '_')
        return where() + ": an #include names its file literally, \"name\" or <name>";
      continue;
    }
    const std::filesystem::path path(*name);
    const bool climbs =
        std::any_of(path.begin(), path.end(), [](const auto& part) { return part == ".."; });
    if (path.is_absolute() || climbs || name->find('\\') != std::string::npos)
      return where() +
             ": an #include names a file of the upload, of common/ or of the CUDA "
             "toolkit, without an absolute path or '..'";
  }
  return "";
}

// The version served already: the same hash and the same key order. The hash leaves the order
// out (results do not depend on it), but dims and axes are listed and enumerated in it: an upload
// in another order (one an older client sorted) replaces the served manifest.
bool is_served_version(const Family* served, const Family& family) {
  return served != nullptr && served->source_hash == family.source_hash &&
         served->manifest == family.manifest;
}

std::filesystem::path write_family_files(
    const std::filesystem::path& dir, const std::string& manifest_text,
    const std::vector<std::pair<std::string, std::string>>& sources) {
  std::filesystem::create_directories(dir);
  write_text_file(dir / "manifest.json", manifest_text);
  for (const auto& [name, text] : sources) {
    if (!is_safe_source_name(name))  // checked by submit; a store edited by hand is not
      throw FamilyError("source file name " + quote_client_text(name) + " is not allowed");
    write_text_file(dir / name, text);
  }
  return dir;
}

// An upload written to its staging folder, with the common/ headers it includes and does not
// have a file of that name of its own for.
void stage_upload(const std::filesystem::path& dir, const std::string& manifest_text,
                  const std::vector<std::pair<std::string, std::string>>& sources,
                  const std::filesystem::path& common) {
  write_family_files(dir, manifest_text, sources);
  std::error_code ec;
  if (common.empty() || !std::filesystem::is_directory(common, ec)) return;
  // Copies, not an include path into the daemon's folder: the compile gets them as headers like
  // the upload's own, and the version keeps them. Only those it includes (directly or through
  // one another), so a family that uses none hashes as its upload alone.
  std::set<std::string> present;
  std::vector<std::string> unread;
  for (const auto& [name, text] : sources) {
    present.insert(name);
    unread.push_back(text);
  }
  while (!unread.empty()) {
    const std::string text = std::move(unread.back());
    unread.pop_back();
    for (const std::string& name : included_names(text)) {
      const auto file = common / name;
      const auto extension = file.extension();
      if (present.count(name) || !is_safe_source_name(name) ||
          (extension != ".cuh" && extension != ".h") || !std::filesystem::is_regular_file(file, ec))
        continue;
      present.insert(name);
      unread.push_back(read_text_file(file));
      write_text_file(dir / name, unread.back());
    }
  }
}

}  // namespace

bool is_safe_family_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxFamilyNameChars &&
         !std::isdigit(static_cast<unsigned char>(name.front())) &&
         std::all_of(name.begin(), name.end(), is_word_char);
}

bool is_safe_source_name(std::string_view name) {
  if (name.size() > kMaxFamilyNameChars) return false;
  const std::size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos) return false;
  const std::string_view stem = name.substr(0, dot);
  const std::string_view extension = name.substr(dot);
  return std::all_of(stem.begin(), stem.end(), is_word_char) &&
         (extension == ".cuh" || extension == ".cu" || extension == ".h");
}

FamilyRegistrar::FamilyRegistrar(Store& store, FamilyRegistry& registry, std::filesystem::path root,
                                 std::filesystem::path common, std::vector<std::string> archs,
                                 int nice, CompileProcessOptions compiler)
    : store_(store),
      registry_(registry),
      root_(std::move(root)),
      common_(std::move(common)),
      archs_(std::move(archs)),
      compiler_(std::move(compiler)),
      worker_(std::make_unique<ThreadPool>(1, nice)) {
  std::filesystem::create_directories(root_);
  // Uploads a previous daemon was checking or compiling when it stopped.
  std::error_code ec;
  std::filesystem::remove_all(root_ / ".staging", ec);
}

FamilyRegistrar::~FamilyRegistrar() {
  // The queued registrations and a probe under way end at once, left compiling in the store for
  // the next daemon (resume()); a compile under way is finished. Joined while the members they
  // use still live.
  stopping_ = true;
  worker_.reset();
}

void FamilyRegistrar::left_for_restart(const FamilyRegistration& registration) {
  spdlog::info("family registration {} ({}): the daemon is stopping; it compiles at the next start",
               registration.id, registration.family);
}

std::filesystem::path FamilyRegistrar::write_family(
    const std::filesystem::path& dir, const std::string& manifest_text,
    const std::vector<std::pair<std::string, std::string>>& sources) {
  return write_family_files(dir, manifest_text, sources);
}

void FamilyRegistrar::stage(const std::filesystem::path& dir, const std::string& manifest_text,
                            const std::vector<std::pair<std::string, std::string>>& sources) {
  stage_upload(dir, manifest_text, sources, common_);
}

std::size_t FamilyRegistrar::reload() {
  std::size_t loaded = 0;
  for (const RegisteredFamilyRecord& stored : store_.registered_families()) {
    try {
      if (!is_safe_family_name(stored.name) || stored.source_hash.size() != 64 ||
          !std::all_of(stored.source_hash.begin(), stored.source_hash.end(), is_word_char))
        throw FamilyError("its name or source hash is not a safe folder name");
      const auto dir = root_ / stored.name / stored.source_hash;
      std::filesystem::remove_all(dir);
      write_family(dir, stored.manifest_json, stored.sources);
      Family family = load_family(dir);
      if (family.name != stored.name || family.source_hash != stored.source_hash)
        throw FamilyError("it loads as " + family.name + " " + family.source_hash +
                          " (another kerntune version hashes it differently)");
      registry_.put_registered(std::move(family));
      ++loaded;
    } catch (const std::exception& error) {
      spdlog::error("registered family {} not served: {}", stored.name.substr(0, 80), error.what());
      registry_.add_error("registered family " + stored.name.substr(0, 80) + " (" +
                          stored.source_hash.substr(0, 12) + "): " + error.what());
    }
  }
  return loaded;
}

std::size_t FamilyRegistrar::resume() {
  std::size_t resumed = 0;
  for (FamilyRegistration& registration : store_.claim_family_registrations()) {
    const auto staged = root_ / ".staging" / registration.id;
    try {
      if (!is_safe_family_name(registration.family) || registration.id.empty() ||
          !std::all_of(registration.id.begin(), registration.id.end(), is_word_char))
        throw FamilyError("its id or family name is not a safe folder name");
      stage(staged, registration.manifest_json, registration.sources);
    } catch (const std::exception& error) {
      std::error_code ec;
      std::filesystem::remove_all(staged, ec);
      registration.status = FamilyRegistration::Status::failed;
      registration.message = std::string("resumed after a restart, not compiled: ") + error.what();
      store_.finish_family_registration(registration);
      continue;
    }
    spdlog::info("family registration {} ({}) resumed: compiling again", registration.id,
                 registration.family);
    registration.manifest_json.clear();
    registration.sources.clear();
    worker_->submit([this, registration = std::move(registration), staged] {
      compile_and_register(registration, staged);
    });
    ++resumed;
  }
  return resumed;
}

CheckedUpload check_family_upload(const FamilyUpload& upload, const FamilyRegistry& registry,
                                  const std::filesystem::path& staged,
                                  const std::filesystem::path& common) {
  using Kind = FamilyUploadError::Kind;
  if (!upload.manifest.is_object() || !upload.manifest.contains("name") ||
      !upload.manifest["name"].is_string())
    throw FamilyUploadError(Kind::invalid_manifest, "manifest: 'name' must be a string");
  const std::string name = upload.manifest["name"].get<std::string>();
  if (!is_safe_family_name(name))
    throw FamilyUploadError(Kind::invalid_upload, "family name must be an identifier of at most " +
                                                      std::to_string(kMaxFamilyNameChars) +
                                                      " characters ([A-Za-z_][A-Za-z0-9_]*)");
  if (upload.sources.size() > kMaxFamilySources)
    throw FamilyUploadError(Kind::too_large, std::to_string(upload.sources.size()) +
                                                 " source files; at most " +
                                                 std::to_string(kMaxFamilySources) + " are taken");
  for (const auto& [file, text] : upload.sources) {
    if (!is_safe_source_name(file))
      throw FamilyUploadError(Kind::invalid_upload,
                              "source file names must match [A-Za-z0-9_]+.(cuh|cu|h), at most " +
                                  std::to_string(kMaxFamilyNameChars) + " characters");
    if (text.size() > kMaxFamilySourceBytes)
      throw FamilyUploadError(Kind::too_large,
                              "source " + file + " has " + std::to_string(text.size()) +
                                  " bytes; at most " + std::to_string(kMaxFamilySourceBytes) +
                                  " per file are taken");
    if (const std::string problem = include_problem(text); !problem.empty())
      throw FamilyUploadError(Kind::invalid_upload, "source " + file + " " + problem);
  }
  const Family* served = registry.find(name);
  if (served != nullptr && !served->registered)
    throw FamilyUploadError(Kind::name_taken, "family " + name +
                                                  " is shipped with the daemon; register yours "
                                                  "under another name");

  CheckedUpload checked;
  checked.manifest_text = upload.manifest.dump(2);
  try {
    stage_upload(staged, checked.manifest_text, upload.sources, common);
    checked.family = load_family(staged);
  } catch (const FamilyError& error) {
    std::error_code ec;
    std::filesystem::remove_all(staged, ec);
    throw FamilyUploadError(Kind::invalid_manifest, without_folder(error.what(), staged));
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(staged, ec);
    throw;
  }
  return checked;
}

FamilyRegistration FamilyRegistrar::submit(const FamilyUpload& upload) {
  FamilyRegistration registration;
  registration.id = random_id();
  const auto staged = root_ / ".staging" / registration.id;
  CheckedUpload checked = check_family_upload(upload, registry_, staged, common_);
  const Family& family = checked.family;
  const std::string& name = family.name;
  const std::string& manifest_text = checked.manifest_text;
  const Family* served = registry_.find(name);
  registration.family = name;
  registration.source_hash = family.source_hash;
  if (served != nullptr && served->source_hash != family.source_hash)
    registration.previous_hash = served->source_hash;
  if (is_served_version(served, family)) {
    std::error_code ec;
    std::filesystem::remove_all(staged, ec);
    registration.status = FamilyRegistration::Status::registered;
    registration.unchanged = true;
    registration.message = "this version of " + name + " is already registered";
    return registration;
  }
  // Stored with its upload before the compile is queued: a daemon that stops meanwhile compiles
  // it again when it starts.
  registration.manifest_json = manifest_text;
  registration.sources = upload.sources;
  try {
    store_.create_family_registration(registration);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(staged, ec);
    throw;
  }
  registration.manifest_json.clear();
  registration.sources.clear();
  worker_->submit([this, registration, staged] { compile_and_register(registration, staged); });
  return registration;
}

std::optional<FamilyRegistration> FamilyRegistrar::find(const std::string& id) const {
  return store_.family_registration(id);
}

void FamilyRegistrar::compile_and_register(FamilyRegistration registration,
                                           const std::filesystem::path& staged) {
  const auto finish = [&](FamilyRegistration::Status status, const std::string& message) {
    registration.status = status;
    registration.message = message;
    try {
      store_.finish_family_registration(registration);
    } catch (const std::exception& error) {  // the client's poll goes on saying compiling
      spdlog::error("family registration {}: outcome not stored: {}", registration.id,
                    error.what());
    }
  };
  const auto fail = [&](const std::string& message, const nlohmann::json& compile) {
    std::error_code ec;
    std::filesystem::remove_all(staged, ec);
    registration.compile_json = compile.is_null() ? "" : compile.dump();
    finish(FamilyRegistration::Status::failed, message);
    spdlog::warn("family registration {}: {}", registration.id, message);
  };
  if (stopping_) return left_for_restart(registration);
  try {
    const Family staged_family = load_family(staged);
    registration.source_hash = staged_family.source_hash;
    const Family* served = registry_.find(staged_family.name);
    // Resumed after a restart: shipped families and the served versions may have changed since.
    if (served != nullptr && !served->registered)
      return fail("family " + staged_family.name +
                      " is shipped with the daemon; register yours under another name",
                  nullptr);
    if (is_served_version(served, staged_family)) {
      std::error_code ec;
      std::filesystem::remove_all(staged, ec);
      return finish(FamilyRegistration::Status::registered,
                    "this version of " + staged_family.name + " is already registered");
    }
    std::string why_not;
    bool stopped = false;
    const auto probe = probe_variant(
        staged_family, archs_, [this] { return stopping_.load(); }, why_not, stopped);
    if (stopped) return left_for_restart(registration);
    if (!probe) return fail("nothing to compile: " + why_not, nullptr);
    CompileReply reply = compile_in_child(
        compiler_,
        compile_request(staged_family, *probe->tmpl, probe->config, probe->dtype, probe->limits));
    CompileResult& result = reply.result;
    if (reply.outcome != CompileReply::Outcome::answered) result.log = reply.reason;
    nlohmann::json compile = {{"template", probe->tmpl->name},
                              {"kernel", probe->tmpl->kernel},
                              {"arch", probe->limits.arch},
                              {"dtype", probe->dtype},
                              {"config", probe->config},
                              {"ok", result.ok},
                              {"compile_ms", result.compile_ms},
                              {"registers", result.ok ? result.resources.registers : -1},
                              {"log", without_folder(result.log, staged)}};
    if (reply.outcome != CompileReply::Outcome::answered)
      return fail("variant " + canonical_key(probe->config) + " of template " + probe->tmpl->name +
                      " could not be compiled for " + probe->limits.arch + ": " + reply.reason,
                  compile);
    if (!result.ok)
      return fail("variant " + canonical_key(probe->config) + " of template " + probe->tmpl->name +
                      " did not compile for " + probe->limits.arch +
                      " (the NVRTC log is in compile.log)",
                  compile);

    // The reference kernel too: jobs compile it before they check a variant, and an error in it
    // would otherwise show only on a GPU, failing every job.
    std::string reference_log;
    if (staged_family.reference.kind == "kernel") {
      const CompileRequest request =
          reference_compile_request(staged_family, probe->dtype, probe->limits);
      CompileReply reference = compile_in_child(compiler_, request);
      if (reference.outcome != CompileReply::Outcome::answered)
        reference.result.log = reference.reason;
      reference_log = reference.result.log;
      compile["reference"] = {{"kernel", request.kernel},
                              {"source", request.source_name},
                              {"ok", reference.result.ok},
                              {"compile_ms", reference.result.compile_ms},
                              {"log", without_folder(reference_log, staged)}};
      const std::string what =
          "the reference kernel " + request.kernel + " (" + request.source_name + ") ";
      if (reference.outcome != CompileReply::Outcome::answered)
        return fail(
            what + "could not be compiled for " + probe->limits.arch + ": " + reference.reason,
            compile);
      if (!reference.result.ok)
        return fail(what + "did not compile for " + probe->limits.arch + " " + probe->dtype +
                        " (the NVRTC log is in compile.reference.log)",
                    compile);
    }

    // Accepted: into its own folder, the store, then the registry.
    const auto dir = root_ / staged_family.name / staged_family.source_hash;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir.parent_path());
    std::filesystem::rename(staged, dir);
    Family family = load_family(dir);
    RegisteredFamilyRecord record;
    record.name = family.name;
    record.source_hash = family.source_hash;
    // What was written, as written: reloading it must give the same family and hash.
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      if (entry.path().filename() != "manifest.json")
        record.sources.emplace_back(entry.path().filename().string(), read_text_file(entry.path()));
    std::sort(record.sources.begin(), record.sources.end());
    record.manifest_json = read_text_file(dir / "manifest.json");
    compile["log"] = without_folder(result.log, dir);
    if (compile.contains("reference"))
      compile["reference"]["log"] = without_folder(reference_log, dir);
    record.compile_json = compile.dump();
    store_.save_registered_family(record);
    const Family* previous = registry_.find(family.name);
    // The same hash in another key order: the results stay current.
    const std::string previous_hash =
        previous != nullptr && previous->source_hash != family.source_hash ? previous->source_hash
                                                                           : "";
    registry_.put_registered(std::move(family));
    // Answers remembered from before judged staleness against the older version.
    store_.note_outside_change();
    registration.previous_hash = previous_hash;
    registration.compile_json = record.compile_json;
    finish(FamilyRegistration::Status::registered,
           previous_hash.empty() ? "registered"
                                 : "registered; results of the previous version are now stale");
    spdlog::info("family {} registered (version {})", record.name,
                 record.source_hash.substr(0, 12));
  } catch (const std::exception& error) {
    fail(error.what(), nullptr);
  }
}

}  // namespace kt
