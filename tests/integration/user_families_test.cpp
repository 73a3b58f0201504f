// Families over the API against a real daemon on loopback: POST /v1/families refused (403) without
// --allow-user-families; bad names, oversized uploads, a broken manifest and a shipped name refused
// with a clear 4xx that changes nothing (store, folder, registry); the worked example of
// kernel_templates/README.md (a WMMA kernel with tile-size macros, including <mma.h> and
// <cuda_fp16.h>) compiled with real NVRTC before it is accepted, listed, tuned in a compile-mode
// job; an NVRTC error coming back with its log, of a variant or of the reference kernel; common/
// headers seen by an upload; a second version making the first one's results stale, the same
// version in another key order replacing the served manifest; registered families surviving a
// restart of a real kerntuned, and so do registrations: one left compiling by a daemon killed
// mid-compile is compiled again at the next start, its poll never a 404.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "client/http_transport.hpp"
#include "db/store.hpp"
#include "harness/daemon_process.hpp"
#include "support/in_process_daemon.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The worked example, as `kerntune family add kernel_templates/examples/wmma_gemm` sends it.
nlohmann::ordered_json example_upload() {
  const auto dir = test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm";
  nlohmann::ordered_json body;
  body["manifest"] = nlohmann::ordered_json::parse(file_text(dir / "manifest.json"));
  body["sources"]["wmma_gemm.cuh"] = file_text(dir / "wmma_gemm.cuh");
  body["sources"]["wmma_gemm_reference.cuh"] = file_text(dir / "wmma_gemm_reference.cuh");
  return body;
}

class Api {
 public:
  explicit Api(const std::string& url) : transport_(parse_server_url(url), 120s, "") {}
  HttpReply send(http::verb method, const std::string& target, const std::string& body = "") {
    return transport_.send(method, target, body);
  }
  HttpReply post_family(const nlohmann::ordered_json& body) {
    return send(http::verb::post, "/v1/families", body.dump());
  }
  nlohmann::json get(const std::string& target) {
    const HttpReply reply = send(http::verb::get, target);
    EXPECT_EQ(reply.status, 200) << target << ": " << reply.body;
    return nlohmann::json::parse(reply.body);
  }
  // Polls the registration until it is no longer compiling.
  nlohmann::json settled(const HttpReply& accepted) {
    EXPECT_EQ(accepted.status, 202) << accepted.body;
    return settled(nlohmann::json::parse(accepted.body)["id"].get<std::string>());
  }
  nlohmann::json settled(const std::string& id) {
    nlohmann::json state;
    for (int i = 0; i < 1200; ++i) {
      state = get("/v1/families/registrations/" + id);
      if (state["status"] != "compiling") break;
      std::this_thread::sleep_for(100ms);
    }
    return state;
  }
  nlohmann::json family(const std::string& name) {
    const nlohmann::json listed = get("/v1/families");
    for (const auto& family : listed["families"])
      if (family["name"] == name) return family;
    return nullptr;
  }
  nlohmann::json finished_job(const std::string& body) {
    const HttpReply created = send(http::verb::post, "/v1/jobs", body);
    EXPECT_EQ(created.status, 202) << created.body;
    const std::string id = nlohmann::json::parse(created.body)["id"].dump();
    nlohmann::json job;
    for (int i = 0; i < 1200; ++i) {
      job = get("/v1/jobs/" + id);
      if (job["status"] != "queued" && job["status"] != "running") break;
      std::this_thread::sleep_for(100ms);
    }
    return job;
  }

 private:
  HttpTransport transport_;
};

const std::string kCompileJob =
    R"({"family":"wmma_gemm","shape":{"M":128,"N":128,"K":64},"dtype":"fp16","mode":"compile",
        "arch":"sm_80","budget":3})";

std::size_t entries(const std::filesystem::path& dir) {
  std::error_code ec;
  std::size_t count = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); ++it)
    if (it->is_regular_file()) ++count;
  return count;
}

TEST(UserFamiliesTest, RegistrationIsRefusedWithoutTheOption) {
  test::InProcessDaemon daemon;
  Api api(daemon.url);
  const HttpReply refused = api.post_family(example_upload());
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("--allow-user-families"), std::string::npos) << refused.body;
  EXPECT_EQ(api.send(http::verb::get, "/v1/families/registrations/abc").status, 403);
  EXPECT_TRUE(api.family("wmma_gemm").is_null());
  EXPECT_TRUE(daemon.store.registered_families().empty());
}

TEST(UserFamiliesTest, BadUploadsGetAClearErrorAndChangeNothing) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  struct Bad {
    std::string what;
    nlohmann::ordered_json body;
    int status;
    std::string says;  // part of the message
  };
  std::vector<Bad> cases;
  auto with = [](const std::function<void(nlohmann::ordered_json&)>& change) {
    nlohmann::ordered_json body = example_upload();
    change(body);
    return body;
  };
  cases.push_back({"a family name with a path",
                   with([](auto& b) { b["manifest"]["name"] = "../x"; }), 400, "is not allowed"});
  cases.push_back({"a dotted family name", with([](auto& b) { b["manifest"]["name"] = "a.b"; }),
                   400, "identifier"});
  cases.push_back({"a source name with a path",
                   with([](auto& b) { b["sources"]["../evil.cuh"] = "x"; }), 400,
                   "[A-Za-z0-9_]+.(cuh|cu|h)"});
  cases.push_back({"a source that is not device code",
                   with([](auto& b) { b["sources"]["run.sh"] = "rm -rf /"; }), 400, "not allowed"});
  cases.push_back({"a source over the size limit",
                   with([](auto& b) { b["sources"]["big.cuh"] = std::string(300 * 1024, ' '); }),
                   413, "per file"});
  cases.push_back({"too many sources", with([](auto& b) {
                     for (int i = 0; i < 40; ++i) b["sources"]["s" + std::to_string(i) + ".h"] = "";
                   }),
                   413, "at most 32"});
  cases.push_back(
      {"an unknown field", with([](auto& b) { b["path"] = "/tmp/x"; }), 400, "unknown field"});
  cases.push_back({"a manifest with two problems", with([](auto& b) {
                     b["manifest"]["dtypes"] = {"fp64"};
                     b["manifest"]["templates"][0]["source"] = "missing.cuh";
                   }),
                   422, "fp64"});
  cases.push_back({"a shipped family's name", with([](auto& b) { b["manifest"]["name"] = "gemm"; }),
                   409, "shipped"});
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.what);
    const HttpReply reply = api.post_family(bad.body);
    EXPECT_EQ(reply.status, bad.status) << reply.body;
    const nlohmann::json error = nlohmann::json::parse(reply.body)["error"];
    EXPECT_NE(error["message"].get<std::string>().find(bad.says), std::string::npos) << error;
  }
  // Both problems of the broken manifest, named by field, without the daemon's folder.
  const HttpReply broken = api.post_family(cases[7].body);
  const std::string message = nlohmann::json::parse(broken.body)["error"]["message"];
  EXPECT_NE(message.find("missing.cuh"), std::string::npos) << message;
  EXPECT_NE(message.find("fp64"), std::string::npos) << message;
  EXPECT_EQ(message.find(daemon.dir.path().string()), std::string::npos) << message;
  // A body over the daemon's limit never reaches the handler.
  EXPECT_EQ(api.send(http::verb::post, "/v1/families", std::string(2 << 20, ' ')).status, 413);
  EXPECT_EQ(api.send(http::verb::post, "/v1/families", "{").status, 400);

  EXPECT_TRUE(daemon.store.registered_families().empty());
  EXPECT_EQ(entries(daemon.registrar->root()), 0u);
  EXPECT_TRUE(api.family("wmma_gemm").is_null());
  EXPECT_TRUE(api.family("gemm")["origin"] == "shipped");
}

// What an upload can hold to bloat an answer or slip past a check: a 400 KB constraint, a long
// key, 2^63 where an integer goes, thousands of problems. Each is 422 with a short message saying
// what is wrong, and nothing is stored or written.
TEST(UserFamiliesTest, HugeValuesAndNumbersPastTheExactRangeAre422WithShortMessages) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  const std::string huge(400'000, 'x');
  struct Bad {
    std::string what;
    nlohmann::ordered_json body;
    std::string says;
  };
  auto with = [](const std::function<void(nlohmann::ordered_json&)>& change) {
    nlohmann::ordered_json body = example_upload();
    change(body);
    return body;
  };
  const std::vector<Bad> cases{
      {"a 400 KB shape constraint",
       with([&](auto& b) { b["manifest"]["shape_constraints"][0] = huge; }), "(400000 bytes)"},
      {"a 400 KB template constraint",
       with([&](auto& b) { b["manifest"]["templates"][0]["constraints"][0] = "BM < (" + huge; }),
       "(400006 bytes)"},
      {"a 400 KB dim name", with([&](auto& b) { b["manifest"]["dims"][huge + "."] = {}; }),
       "(400001 bytes)"},
      {"a 400 KB dtype", with([&](auto& b) { b["manifest"]["dtypes"][0] = huge; }),
       "(400000 bytes)"},
      {"2^63 as a dim's max",
       with([](auto& b) { b["manifest"]["dims"]["M"]["max"] = std::uint64_t{1} << 63; }),
       "dims.M.max: 9223372036854775808 is outside the exact integer range (|x| <= 2^53)"},
      {"2^53 + 1 as an axis value", with([](auto& b) {
         b["manifest"]["templates"][0]["axes"]["BM"]["values"][0] = (std::int64_t{1} << 53) + 1;
       }),
       "is outside the exact integer range"},
      {"a float past 2^53 as a dim's min",
       with([](auto& b) { b["manifest"]["dims"]["K"]["min"] = 1e300; }),
       "dims.K.min: 1e+300 is outside the exact integer range"},
      {"thousands of problems", with([](auto& b) {
         for (int i = 0; i < 3000; ++i) b["manifest"]["dtypes"].push_back("d" + std::to_string(i));
       }),
       "more problems"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.what);
    const HttpReply reply = api.post_family(bad.body);
    EXPECT_EQ(reply.status, 422) << reply.body.substr(0, 2000);
    EXPECT_LT(reply.body.size(), 4096u) << reply.body.substr(0, 2000);
    const nlohmann::json error = nlohmann::json::parse(reply.body)["error"];
    EXPECT_EQ(error["code"], "invalid_manifest");
    EXPECT_NE(error["message"].get<std::string>().find(bad.says), std::string::npos) << error;
  }
  EXPECT_TRUE(daemon.store.registered_families().empty());
  EXPECT_EQ(entries(daemon.registrar->root()), 0u);
  EXPECT_TRUE(api.family("wmma_gemm").is_null());
}

TEST(UserFamiliesTest, TheWorkedExampleCompilesIsListedAndTunedAndANewVersionMakesResultsStale) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);

  const HttpReply accepted = api.post_family(example_upload());
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  EXPECT_NE(std::find_if(accepted.headers.begin(), accepted.headers.end(),
                         [](const auto& h) { return h.first == "Location"; }),
            accepted.headers.end());
  const nlohmann::json registered = api.settled(accepted);
  ASSERT_EQ(registered["status"], "registered") << registered.dump(2);
  EXPECT_EQ(registered["compile"]["ok"], true);
  EXPECT_EQ(registered["compile"]["arch"], "sm_80");  // no GPU here: the template's first arch
  EXPECT_EQ(registered["compile"]["template"], "wmma_direct");
  EXPECT_GT(registered["compile"]["registers"].get<int>(), 0);
  EXPECT_TRUE(registered["previous_hash"].is_null());
  const std::string first_hash = registered["source_hash"];

  const nlohmann::json listed = api.family("wmma_gemm");
  ASSERT_TRUE(listed.is_object());
  EXPECT_EQ(listed["origin"], "registered");
  EXPECT_EQ(listed["source_hash"], first_hash);
  // Stored, and written to the daemon's folder under its version.
  const auto stored = daemon.store.registered_families();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].source_hash, first_hash);
  EXPECT_TRUE(std::filesystem::is_regular_file(daemon.registrar->root() / "wmma_gemm" / first_hash /
                                               "wmma_gemm.cuh"));

  // The same version again: nothing to do.
  const HttpReply again = api.post_family(example_upload());
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(nlohmann::json::parse(again.body)["unchanged"], true);

  // Its macros tuned: a compile-mode job over the variant space, through NVRTC.
  const nlohmann::json job = api.finished_job(kCompileJob);
  ASSERT_EQ(job["status"], "done") << job.dump(2);
  EXPECT_EQ(job["stale"], false);
  const nlohmann::json page =
      api.get("/v1/jobs/" + job["id"].dump() + "/variants?exclude_pruned=1");
  int compiled = 0;
  for (const auto& variant : page["variants"]) compiled += variant["has_kernel"] == true;
  EXPECT_EQ(compiled, 3) << page.dump(2);

  // A second version: registered in place of the first, whose results are now stale.
  nlohmann::ordered_json changed = example_upload();
  changed["sources"]["wmma_gemm.cuh"] =
      "// version 2\n" + changed["sources"]["wmma_gemm.cuh"].get<std::string>();
  const nlohmann::json second = api.settled(api.post_family(changed));
  ASSERT_EQ(second["status"], "registered") << second.dump(2);
  EXPECT_EQ(second["previous_hash"], first_hash);
  EXPECT_NE(second["source_hash"], first_hash);
  EXPECT_EQ(api.family("wmma_gemm")["source_hash"], second["source_hash"]);
  const nlohmann::json old_job = api.get("/v1/jobs/" + job["id"].dump());
  EXPECT_EQ(old_job["stale"], true) << old_job.dump(2);
  ASSERT_EQ(old_job["stale_keys"].size(), 1u) << old_job.dump(2);
  EXPECT_EQ(old_job["stale_keys"][0]["key"], "family_hash");
  EXPECT_EQ(old_job["stale_keys"][0]["stored"], first_hash);
  EXPECT_EQ(old_job["stale_keys"][0]["current"], second["source_hash"]);
  // The history answer (remembered between writes) says so too.
  const nlohmann::json history = api.get("/v1/history?family=wmma_gemm");
  ASSERT_EQ(history["jobs"].size(), 1u);
  EXPECT_EQ(history["jobs"][0]["stale"], true);
  // A job of the new version is not stale.
  EXPECT_EQ(api.finished_job(kCompileJob)["stale"], false);
}

TEST(UserFamiliesTest, ACompileErrorComesBackWithTheNvrtcLogAndChangesNothing) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  nlohmann::ordered_json broken = example_upload();
  broken["sources"]["wmma_gemm.cuh"] =
      broken["sources"]["wmma_gemm.cuh"].get<std::string>() + "\nthis_is_not_cuda;\n";
  const nlohmann::json failed = api.settled(api.post_family(broken));
  ASSERT_EQ(failed["status"], "failed") << failed.dump(2);
  EXPECT_EQ(failed["compile"]["ok"], false);
  EXPECT_NE(failed["compile"]["log"].get<std::string>().find("this_is_not_cuda"), std::string::npos)
      << failed.dump(2);
  EXPECT_NE(failed["message"].get<std::string>().find("did not compile"), std::string::npos);
  EXPECT_TRUE(daemon.store.registered_families().empty());
  EXPECT_EQ(entries(daemon.registrar->root()), 0u);
  EXPECT_TRUE(api.family("wmma_gemm").is_null());
  EXPECT_EQ(api.send(http::verb::get, "/v1/families/registrations/nope").status, 404);
}

// Jobs compile the reference kernel before they check a variant: one that does not compile is
// refused at registration, with its NVRTC log, not found out by the first tune job on a GPU.
TEST(UserFamiliesTest, AReferenceKernelThatDoesNotCompileIsRefusedWithItsLog) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  nlohmann::ordered_json broken = example_upload();
  broken["sources"]["wmma_gemm_reference.cuh"] =
      broken["sources"]["wmma_gemm_reference.cuh"].get<std::string>() + "\nnot_a_reference;\n";
  const nlohmann::json failed = api.settled(api.post_family(broken));
  ASSERT_EQ(failed["status"], "failed") << failed.dump(2);
  EXPECT_NE(failed["message"].get<std::string>().find("reference kernel wmma_gemm_reference"),
            std::string::npos)
      << failed.dump(2);
  EXPECT_EQ(failed["compile"]["ok"], true);  // the variant compiled; its reference did not
  const nlohmann::json& reference = failed["compile"]["reference"];
  ASSERT_TRUE(reference.is_object()) << failed.dump(2);
  EXPECT_EQ(reference["ok"], false);
  EXPECT_EQ(reference["kernel"], "wmma_gemm_reference");
  EXPECT_NE(reference["log"].get<std::string>().find("not_a_reference"), std::string::npos)
      << failed.dump(2);
  EXPECT_EQ(reference["log"].get<std::string>().find(daemon.dir.path().string()),
            std::string::npos);
  EXPECT_TRUE(daemon.store.registered_families().empty());
  EXPECT_EQ(entries(daemon.registrar->root()), 0u);
  EXPECT_TRUE(api.family("wmma_gemm").is_null());

  // The example as shipped: both compiled, the reference's outcome reported too.
  const nlohmann::json registered = api.settled(api.post_family(example_upload()));
  ASSERT_EQ(registered["status"], "registered") << registered.dump(2);
  EXPECT_EQ(registered["compile"]["reference"]["ok"], true) << registered.dump(2);
}

// kernel_templates/README.md: every family sees common/. An upload including a common/ header
// compiles, and the header is kept with the version (a restart reloads it to the same hash);
// one including none is versioned by its own files alone.
TEST(UserFamiliesTest, AnUploadSeesTheCommonHeaders) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  nlohmann::ordered_json upload = example_upload();
  upload["sources"]["wmma_gemm.cuh"] =
      "#include \"mma_primitives.cuh\"\nstatic_assert(sizeof(kt_mma::elem_t) == 2, \"fp16\");\n" +
      upload["sources"]["wmma_gemm.cuh"].get<std::string>();
  const nlohmann::json registered = api.settled(api.post_family(upload));
  ASSERT_EQ(registered["status"], "registered") << registered.dump(2);
  EXPECT_EQ(registered["compile"]["ok"], true);

  const auto stored = daemon.store.registered_families();
  ASSERT_EQ(stored.size(), 1u);
  const auto header =
      std::find_if(stored[0].sources.begin(), stored[0].sources.end(),
                   [](const auto& file) { return file.first == "mma_primitives.cuh"; });
  ASSERT_NE(header, stored[0].sources.end());
  EXPECT_EQ(header->second,
            file_text(test::source_dir() / "kernel_templates" / "common" / "mma_primitives.cuh"));
  // Only what it includes: not the other common/ headers.
  EXPECT_EQ(stored[0].sources.size(), 3u);
  FamilyRegistry reloaded;
  FamilyRegistrar again(daemon.store, reloaded, daemon.dir.path() / "reloaded", "");
  EXPECT_EQ(again.reload(), 1u);
  ASSERT_NE(reloaded.find("wmma_gemm"), nullptr);
  EXPECT_EQ(reloaded.find("wmma_gemm")->source_hash, registered["source_hash"]);

  const nlohmann::json plain = api.settled(api.post_family(example_upload()));
  ASSERT_EQ(plain["status"], "registered") << plain.dump(2);
  EXPECT_EQ(
      plain["source_hash"],
      load_family(test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm").source_hash);
}

// A client that sorted the manifest's keys (the CLI did) registered the dims as K, M, N. The same
// version in the manifest's order replaces it: listed M, N, K, its results still current.
TEST(UserFamiliesTest, TheSameVersionInAnotherKeyOrderReplacesTheServedManifest) {
  test::InProcessDaemon daemon;
  daemon.allow_user_families();
  Api api(daemon.url);
  const auto dim_names = [&] {
    std::vector<std::string> names;
    const nlohmann::json family = api.family("wmma_gemm");  // kept: the loop reads into it
    for (const auto& dim : family["dims"]) names.push_back(dim["name"]);
    return names;
  };
  nlohmann::ordered_json sorted = example_upload();
  sorted["manifest"] = nlohmann::ordered_json::parse(nlohmann::json(sorted["manifest"]).dump());
  const nlohmann::json first = api.settled(api.post_family(sorted));
  ASSERT_EQ(first["status"], "registered") << first.dump(2);
  EXPECT_EQ(dim_names(), (std::vector<std::string>{"K", "M", "N"}));
  const nlohmann::json job = api.finished_job(kCompileJob);
  ASSERT_EQ(job["status"], "done") << job.dump(2);

  const HttpReply accepted = api.post_family(example_upload());
  ASSERT_EQ(accepted.status, 202) << accepted.body;  // not "unchanged"
  const nlohmann::json second = api.settled(accepted);
  ASSERT_EQ(second["status"], "registered") << second.dump(2);
  EXPECT_EQ(second["source_hash"], first["source_hash"]);
  EXPECT_TRUE(second["previous_hash"].is_null()) << second.dump(2);
  EXPECT_EQ(dim_names(), (std::vector<std::string>{"M", "N", "K"}));
  EXPECT_EQ(api.get("/v1/jobs/" + job["id"].dump())["stale"], false);
  // What a restart serves: the newest, in its order.
  const auto stored = daemon.store.registered_families();
  ASSERT_EQ(stored.size(), 1u);
  std::vector<std::string> stored_dims;
  const nlohmann::ordered_json stored_manifest =
      nlohmann::ordered_json::parse(stored[0].manifest_json);
  for (const auto& [name, dim] : stored_manifest["dims"].items()) stored_dims.push_back(name);
  EXPECT_EQ(stored_dims, (std::vector<std::string>{"M", "N", "K"}));
  // And now the same upload again is unchanged.
  EXPECT_EQ(api.post_family(example_upload()).status, 200);
}

TEST(UserFamiliesTest, RegisteredFamiliesSurviveARestartOfTheDaemon) {
  test::TempDir dir;
  const auto db = dir.path() / "kerntune.db";
  const std::vector<std::string> args{"--allow-user-families", "--families",
                                      (test::source_dir() / "kernel_templates").string()};
  std::string hash;
  {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db, dir.path() / "first.log",
                                  args);
    daemon.wait_healthy(60s);
    Api api(daemon.url());
    const nlohmann::json registered = api.settled(api.post_family(example_upload()));
    ASSERT_EQ(registered["status"], "registered") << registered.dump(2);
    hash = registered["source_hash"];
    daemon.stop();
  }
  {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db, dir.path() / "second.log",
                                  args);
    daemon.wait_healthy(60s);
    Api api(daemon.url());
    const nlohmann::json listed = api.family("wmma_gemm");
    ASSERT_TRUE(listed.is_object()) << daemon.log_tail();
    EXPECT_EQ(listed["source_hash"], hash);
    EXPECT_EQ(api.finished_job(kCompileJob)["status"], "done");
    daemon.stop();
  }
  {  // Without the option the family stays in the store, unserved, and the log says so.
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db, dir.path() / "third.log",
                                  std::vector<std::string>{"--families", args[2]});
    daemon.wait_healthy(60s);
    EXPECT_TRUE(Api(daemon.url()).family("wmma_gemm").is_null());
    EXPECT_TRUE(daemon.wait_for_log("--allow-user-families is off", 5s)) << daemon.log_tail();
  }
}

// As a daemon that stopped mid-compile leaves it: stored with its upload, held by no live daemon.
TEST(UserFamiliesTest, ARegistrationLeftCompilingIsCompiledAgainWhenTheDaemonStarts) {
  test::InProcessDaemon daemon;
  const std::string id = "0123456789abcdef";
  {
    Store earlier(daemon.dir.path() / "kerntune.db");
    const nlohmann::ordered_json upload = example_upload();
    FamilyRegistrationRecord left;
    left.id = id;
    left.family = "wmma_gemm";
    left.source_hash = "not yet known";
    left.manifest_json = upload["manifest"].dump(2);
    for (const auto& [name, text] : upload["sources"].items())
      left.sources.emplace_back(name, text.get<std::string>());
    earlier.create_family_registration(left);
  }
  daemon.allow_user_families();
  Api api(daemon.url);
  EXPECT_EQ(api.get("/v1/families/registrations/" + id)["status"], "compiling");
  EXPECT_EQ(daemon.registrar->resume(), 1u);
  EXPECT_EQ(daemon.registrar->resume(), 0u);  // held by this daemon now
  const nlohmann::json registered = api.settled(id);
  ASSERT_EQ(registered["status"], "registered") << registered.dump(2);
  EXPECT_EQ(registered["compile"]["ok"], true);
  EXPECT_EQ(api.family("wmma_gemm")["origin"], "registered");
  EXPECT_EQ(api.family("wmma_gemm")["source_hash"], registered["source_hash"]);
  EXPECT_EQ(daemon.store.registered_families().size(), 1u);
  // Nothing of the upload is left in the staging folder.
  EXPECT_FALSE(std::filesystem::exists(daemon.registrar->root() / ".staging" / id));
}

TEST(UserFamiliesTest, APollAfterTheDaemonWasKilledMidCompileGetsTheRealOutcome) {
  test::TempDir dir;
  const auto db = dir.path() / "kerntune.db";
  const std::vector<std::string> args{"--allow-user-families", "--families",
                                      (test::source_dir() / "kernel_templates").string()};
  std::string id;
  {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db, dir.path() / "first.log",
                                  args);
    daemon.wait_healthy(60s);
    const HttpReply accepted = Api(daemon.url()).post_family(example_upload());
    ASSERT_EQ(accepted.status, 202) << accepted.body;
    EXPECT_TRUE(daemon.kill_now());  // as a crash, in the middle of the NVRTC compile
    id = nlohmann::json::parse(accepted.body)["id"];
  }
  {
    Store left(db);
    const auto registration = left.family_registration(id);
    ASSERT_TRUE(registration);
    ASSERT_EQ(registration->status, FamilyRegistrationRecord::Status::compiling)
        << "the compile ended before the kill: nothing to resume";
    EXPECT_TRUE(left.registered_families().empty());
  }
  std::string hash;
  {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db, dir.path() / "second.log",
                                  args);
    daemon.wait_healthy(60s);
    Api api(daemon.url());
    nlohmann::json state;
    for (int i = 0; i < 1200; ++i) {  // every poll answers, never a 404
      const HttpReply reply = api.send(http::verb::get, "/v1/families/registrations/" + id);
      ASSERT_EQ(reply.status, 200) << reply.body << daemon.log_tail();
      state = nlohmann::json::parse(reply.body);
      if (state["status"] != "compiling") break;
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_EQ(state["status"], "registered") << state.dump(2) << daemon.log_tail();
    EXPECT_EQ(state["compile"]["ok"], true);
    EXPECT_TRUE(daemon.wait_for_log("compiling again", 5s)) << daemon.log_tail();
    hash = state["source_hash"];
    EXPECT_EQ(api.family("wmma_gemm")["source_hash"], hash);
    daemon.stop();
  }
  {  // Once more: the same answer, nothing compiled again.
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", db, dir.path() / "third.log",
                                  args);
    daemon.wait_healthy(60s);
    const nlohmann::json state = Api(daemon.url()).get("/v1/families/registrations/" + id);
    EXPECT_EQ(state["status"], "registered");
    EXPECT_EQ(state["source_hash"], hash);
    EXPECT_FALSE(daemon.wait_for_log("compiling again", 1s));
  }
}

}  // namespace
}  // namespace kt
