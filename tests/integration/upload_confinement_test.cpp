// What an uploaded family can reach, against a real kerntuned and real compile processes: an
// #include of a host file, written literally, is refused at registration with the line (400), and
// one written so that no scan can see it (a digraph, a file in the daemon's working directory)
// fails to open in the compile process, confined by Landlock to the CUDA headers, so that no
// log carries the file. A daemon started as root compiles as nobody; one that cannot (the account
// cannot reach the worker, or does not exist) refuses to start and says what to change.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/http_transport.hpp"
#include "engine/compile_client.hpp"
#include "harness/daemon_process.hpp"
#include "support/test_paths.hpp"
#include "tuner/compile/compile_confinement.hpp"
#include "tuner/text.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using namespace std::chrono_literals;

// The worked example with `line` put before its kernel source's first line.
nlohmann::ordered_json example_upload_with(const std::string& line) {
  const auto dir = test::source_dir() / "kernel_templates" / "examples" / "wmma_gemm";
  nlohmann::ordered_json body;
  body["manifest"] = nlohmann::ordered_json::parse(read_text_file(dir / "manifest.json"));
  body["sources"]["wmma_gemm.cuh"] = line + "\n" + read_text_file(dir / "wmma_gemm.cuh");
  body["sources"]["wmma_gemm_reference.cuh"] = read_text_file(dir / "wmma_gemm_reference.cuh");
  return body;
}

// Text that only a host file would put in a reply.
void expect_no_host_file(const std::string& text) {
  for (const char* host : {"root:x:0:0", "root:*:", "PATH=/", "HOME=/", "kt-canary-contents"})
    EXPECT_EQ(text.find(host), std::string::npos) << "'" << host << "' in:\n" << text;
}

// kerntune-worker and the libraries beside it ($ORIGIN) in a folder every account can enter:
// the checkout may sit where nobody cannot (a 0700 home folder).
std::filesystem::path reachable_worker(const test::TempDir& dir) {
  const auto folder = dir.path() / "bin";
  std::filesystem::create_directories(folder);
  for (const auto& entry : std::filesystem::directory_iterator(test::binary_dir())) {
    const std::string name = entry.path().filename().string();
    if (name == "kerntune-worker" || name.rfind("lib", 0) == 0)
      std::filesystem::copy_file(entry.path(), folder / name);
  }
  for (auto path = folder; path != dir.path().parent_path(); path = path.parent_path())
    chmod(path.c_str(), 0755);
  return folder / "kerntune-worker";
}

class Api {
 public:
  explicit Api(const std::string& url) : transport_(parse_server_url(url), 120s, "") {}
  HttpReply post_family(const nlohmann::ordered_json& body) {
    return transport_.send(http::verb::post, "/v1/families", body.dump());
  }
  nlohmann::json settled(const HttpReply& accepted) {
    EXPECT_EQ(accepted.status, 202) << accepted.body;
    const std::string id = nlohmann::json::parse(accepted.body)["id"].get<std::string>();
    nlohmann::json state;
    for (int i = 0; i < 1200; ++i) {
      const HttpReply reply = transport_.send(http::verb::get, "/v1/families/registrations/" + id);
      state = nlohmann::json::parse(reply.body);
      if (state["status"] != "compiling") break;
      std::this_thread::sleep_for(100ms);
    }
    return state;
  }
  nlohmann::json families() {
    return nlohmann::json::parse(transport_.send(http::verb::get, "/v1/families").body);
  }

 private:
  HttpTransport transport_;
};

bool listed(const nlohmann::json& families, const std::string& name) {
  for (const auto& family : families["families"])
    if (family["name"] == name) return true;
  return false;
}

class UploadConfinementTest : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--allow-user-families", "--families",
                                  (test::source_dir() / "kernel_templates").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<harness::DaemonProcess>(test::binary_dir() / "kerntuned",
                                                       dir_.path() / "kerntune.db",
                                                       dir_.path() / "daemon.log", args);
    daemon_->wait_healthy(60s);
  }
  test::TempDir dir_;
  std::unique_ptr<harness::DaemonProcess> daemon_;
};

TEST_F(UploadConfinementTest, IncludesOfHostFilesAreRefusedAtRegistrationWithTheLine) {
  if (!landlock_support().available())
    start({"--unconfined-compiles"});
  else
    start();
  Api api(daemon_->url());
  for (const std::string& line :
       {std::string("#include \"/etc/passwd\""), std::string("#include \"../../../etc/shadow\""),
        std::string("#include <../../../../../../etc/hostname>"),
        std::string("#  include \"/proc/self/environ\""),
        std::string("#define HOST_FILE \"/etc/passwd\"\n#include HOST_FILE"),
        std::string("#include_next <cuda_fp16.h>"), std::string("#include \"sub\\\\..\\\\x.h\"")}) {
    SCOPED_TRACE(line);
    const HttpReply refused = api.post_family(example_upload_with(line));
    EXPECT_EQ(refused.status, 400) << refused.body;
    EXPECT_NE(refused.body.find("invalid_upload"), std::string::npos) << refused.body;
    EXPECT_NE(refused.body.find("wmma_gemm.cuh line "), std::string::npos) << refused.body;
    expect_no_host_file(refused.body);
  }
  EXPECT_FALSE(listed(api.families(), "wmma_gemm"));
  // The check reads directives, not text: a comment naming a path is no include.
  const nlohmann::json registered =
      api.settled(api.post_family(example_upload_with("// see /etc/passwd and ../README")));
  EXPECT_EQ(registered["status"], "registered") << registered.dump(2) << daemon_->log_tail();
}

TEST_F(UploadConfinementTest, ACompileProcessCannotOpenAFileOutsideTheCudaHeaders) {
  if (!landlock_support().available())
    GTEST_SKIP() << "no Landlock here: " << landlock_support().why_not;
  if (geteuid() == 0) {
    start({"--run-as", "nobody", "--worker", reachable_worker(dir_).string()});
    EXPECT_TRUE(daemon_->wait_for_log("compile processes and workers run as nobody", 5s))
        << daemon_->log_tail();
  } else {
    start();
  }
  EXPECT_TRUE(daemon_->wait_for_log("compiles confined with Landlock", 5s)) << daemon_->log_tail();
  // A file in the daemon's working directory (NVRTC looks there for "name"), and host files
  // through the digraph %: for #, which a scan of directives does not read.
  const auto canary =
      std::filesystem::current_path() / ("kt_canary_" + std::to_string(getpid()) + ".h");
  write_text_file(canary, "kt-canary-contents\n");
  Api api(daemon_->url());
  for (const std::string& line :
       {"#include \"" + canary.filename().string() + "\"", std::string("%:include \"/etc/passwd\""),
        std::string("%:include \"/proc/self/environ\"")}) {
    SCOPED_TRACE(line);
    const nlohmann::json failed = api.settled(api.post_family(example_upload_with(line)));
    EXPECT_EQ(failed["status"], "failed") << failed.dump(2);
    const std::string reply = failed.dump();
    EXPECT_NE(reply.find("cannot open source file"), std::string::npos) << reply;
    expect_no_host_file(reply);
  }
  std::filesystem::remove(canary);
  EXPECT_FALSE(listed(api.families(), "wmma_gemm"));
}

TEST(CompileProcessUserTest, ARootDaemonsCompileProcessRunsAsNobodyAndConfined) {
  if (geteuid() != 0) GTEST_SKIP() << "switching accounts needs root";
  test::TempDir dir;
  CompileProcessOptions options{reachable_worker(dir), kDefaultCompileTimeout,
                                landlock_support().available(), lookup_process_user("nobody")};
  CompileClient client(options);
  CompileRequest request;
  request.source_name = "probe.cu";
  request.source =
      "#include <cuda_fp16.h>\nextern \"C\" __global__ void probe(__half* x) "
      "{ x[0] = __float2half(1.0f); }\n";
  request.kernel = "probe";
  request.arch = "sm_90a";
  const CompileReply reply = client.compile(request);
  ASSERT_EQ(reply.outcome, CompileReply::Outcome::answered) << reply.reason;
  EXPECT_TRUE(reply.result.ok) << reply.result.log;
  const std::string status = read_text_file("/proc/" + std::to_string(client.pid()) + "/status");
  const std::string uid_line = status.substr(
      status.find("Uid:"), status.find('\n', status.find("Uid:")) - status.find("Uid:"));
  const std::string nobody = std::to_string(options.user->uid);
  EXPECT_EQ(uid_line, "Uid:\t" + nobody + "\t" + nobody + "\t" + nobody + "\t" + nobody);
  if (options.confined) {  // Landlock sets no_new_privs, which /proc shows
    EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos) << status;
  }
}

// A store in a folder only root can enter (root's home): the workers, as nobody, cannot read the
// cubins beside it, so they get a folder of their own, gone when the daemon stops.
TEST(CompileProcessUserTest, ARootDaemonWithAPrivateStoreHandsItsWorkersAFolderTheyCanRead) {
  if (geteuid() != 0) GTEST_SKIP() << "switching accounts needs root";
  test::TempDir dir;
  const auto worker = reachable_worker(dir);
  const auto private_folder = dir.path() / "private";
  std::filesystem::create_directories(private_folder);
  chmod(private_folder.c_str(), 0700);
  std::filesystem::path cubins;
  {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", private_folder / "kerntune.db",
                                  dir.path() / "daemon.log",
                                  {"--run-as", "nobody", "--worker", worker.string(), "--families",
                                   (test::source_dir() / "kernel_templates").string()});
    daemon.wait_healthy(60s);
    ASSERT_TRUE(daemon.wait_for_log("workers read their cubins from", 5s)) << daemon.log_tail();
    const std::string log = daemon.log_tail();
    const auto from = log.find("workers read their cubins from ") + 31;
    cubins = log.substr(from, log.find(' ', from) - from);
    struct stat folder {};
    ASSERT_EQ(stat(cubins.c_str(), &folder), 0) << cubins;
    EXPECT_EQ(folder.st_uid, lookup_process_user("nobody").uid);
    EXPECT_EQ(folder.st_mode & 0777, 0700u);
    daemon.stop();
  }
  EXPECT_FALSE(std::filesystem::exists(cubins)) << cubins;
}

TEST(CompileProcessUserTest, ARootDaemonThatCannotCompileAsItsAccountRefusesToStart) {
  if (geteuid() != 0) GTEST_SKIP() << "switching accounts needs root";
  test::TempDir dir;
  // A worker nobody cannot reach: its folder is root's alone.
  const auto hidden = dir.path() / "hidden";
  std::filesystem::create_directories(hidden);
  std::filesystem::copy_file(test::binary_dir() / "kerntune-worker", hidden / "kerntune-worker");
  chmod(hidden.c_str(), 0700);
  const auto start = [&](const std::vector<std::string>& args, const std::string& log) {
    harness::DaemonProcess daemon(test::binary_dir() / "kerntuned", dir.path() / "kerntune.db",
                                  dir.path() / log, args);
    const std::optional<int> code = daemon.exit_code_within(30s);
    EXPECT_TRUE(code.has_value() && *code != 0) << daemon.log_tail();
    return daemon.log_tail();
  };
  const std::string unreachable =
      start({"--run-as", "nobody", "--worker", (hidden / "kerntune-worker").string()}, "a.log");
  EXPECT_NE(unreachable.find("nobody cannot run"), std::string::npos) << unreachable;
  EXPECT_NE(unreachable.find("--run-as root"), std::string::npos) << unreachable;
  const std::string unknown = start({"--run-as", "kt_no_such_account"}, "b.log");
  EXPECT_NE(unknown.find("no user named 'kt_no_such_account'"), std::string::npos) << unknown;
  // A refused start leaves no store behind.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "kerntune.db"));
}

}  // namespace
}  // namespace kt
