// NVRTC in a compile process (kerntune-worker --compile, engine/compile_client.hpp), with real
// NVRTC: a shipped GEMM variant compiled through the child gives the cubin, cache key and
// resources of an in-process compile; a child that dies (SIGSEGV, abort) or hangs mid-compile is
// reported with the reason and replaced, and the next compile succeeds. The faults come from the
// compile process's test hook (KERNTUNE_TEST_COMPILE_FAULT, inherited by the child).
#include "engine/compile_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/child_compiler.hpp"
#include "support/gemm_templates.hpp"
#include "support/scoped_env.hpp"
#include "tuner/variant_space.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

// A small kernel that compiles in well under a second; `marker` is a define that only this
// request carries, for the fault hook to pick it out.
CompileRequest tiny_request(const std::string& marker) {
  CompileRequest request;
  request.source_name = "tiny.cuh";
  request.source = R"(extern "C" __global__ void kt_tiny(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 2.0f;
}
)";
  request.kernel = "kt_tiny";
  request.arch = "sm_90a";
  request.options = {marker};
  return request;
}

void expect_same_resources(const ResourceUsage& a, const ResourceUsage& b) {
  EXPECT_EQ(a.registers, b.registers);
  EXPECT_EQ(a.spill_store_bytes, b.spill_store_bytes);
  EXPECT_EQ(a.spill_load_bytes, b.spill_load_bytes);
  EXPECT_EQ(a.stack_frame_bytes, b.stack_frame_bytes);
  EXPECT_EQ(a.static_smem_bytes, b.static_smem_bytes);
  EXPECT_EQ(a.const_bytes, b.const_bytes);
}

TEST(CompileClient, AShippedVariantCompilesInTheChildAsItDoesInProcess) {
  const DeviceLimits limits = test::gemm_limits("sm_90a");
  const auto plans =
      test::gemm_survivors("mma_multistage_cluster", test::gemm_shape(256, 256, 256), limits);
  ASSERT_FALSE(plans.empty());
  const CompileRequest request = compile_request(test::gemm_family(), *plans.front().tmpl,
                                                 plans.front().config, "bf16", limits);
  const CompileResult in_process = compile_kernel(request);
  ASSERT_TRUE(in_process.ok) << in_process.log;

  CompileClient client(test::compile_process_options());
  const CompileReply reply = client.compile(request);
  ASSERT_EQ(reply.outcome, CompileReply::Outcome::answered) << reply.reason;
  const CompileResult& child = reply.result;
  ASSERT_TRUE(child.ok) << child.log;
  EXPECT_EQ(child.key, compile_cache_key(request));
  EXPECT_EQ(child.key, in_process.key);
  EXPECT_EQ(child.cubin, in_process.cubin);
  EXPECT_GT(child.resources.registers, 0);
  expect_same_resources(child.resources, in_process.resources);
  // The ptxas log comes along (it differs only in its compile time).
  EXPECT_NE(child.log.find("Used " + std::to_string(in_process.resources.registers) + " registers"),
            std::string::npos)
      << child.log;
  EXPECT_GT(child.compile_ms, 0);
  EXPECT_EQ(client.starts(), 1);
  EXPECT_GT(client.pid(), 0);

  // A compile error comes back as NVRTC's result, with its log, from the same child.
  CompileRequest broken = tiny_request("-DKT_BROKEN=1");
  broken.source += "this is not C++;\n";
  const CompileReply error = client.compile(broken);
  ASSERT_EQ(error.outcome, CompileReply::Outcome::answered) << error.reason;
  EXPECT_FALSE(error.result.ok);
  EXPECT_NE(error.result.log.find("error"), std::string::npos) << error.result.log;
  EXPECT_EQ(client.starts(), 1);
}

TEST(CompileClient, AChildKilledBySigsegvMidCompileIsReportedAndReplaced) {
  test::ScopedEnv fault("KERNTUNE_TEST_COMPILE_FAULT", "segv:-DKT_CRASH_HERE=1");
  CompileClient client(test::compile_process_options());
  const CompileReply crashed = client.compile(tiny_request("-DKT_CRASH_HERE=1"));
  EXPECT_EQ(crashed.outcome, CompileReply::Outcome::crashed);
  EXPECT_NE(crashed.reason.find("the NVRTC process died while compiling"), std::string::npos)
      << crashed.reason;
  EXPECT_NE(crashed.reason.find("signal 11"), std::string::npos) << crashed.reason;
  EXPECT_EQ(client.pid(), -1);

  const CompileReply next = client.compile(tiny_request("-DKT_FINE=1"));
  ASSERT_EQ(next.outcome, CompileReply::Outcome::answered) << next.reason;
  EXPECT_TRUE(next.result.ok) << next.result.log;
  EXPECT_GT(next.result.resources.registers, 0);
  EXPECT_EQ(client.starts(), 2);
}

TEST(CompileClient, AnAbortIsReportedWithItsSignal) {
  test::ScopedEnv fault("KERNTUNE_TEST_COMPILE_FAULT", "abort:-DKT_ABORT_HERE=1");
  CompileClient client(test::compile_process_options());
  const CompileReply aborted = client.compile(tiny_request("-DKT_ABORT_HERE=1"));
  EXPECT_EQ(aborted.outcome, CompileReply::Outcome::crashed);
  EXPECT_NE(aborted.reason.find("signal 6"), std::string::npos) << aborted.reason;
}

TEST(CompileClient, AChildPastTheTimeoutIsKilledAndReplaced) {
  test::ScopedEnv fault("KERNTUNE_TEST_COMPILE_FAULT", "hang:-DKT_HANG_HERE=1");
  CompileClient client(test::compile_process_options(1500ms));
  const auto start = std::chrono::steady_clock::now();
  const CompileReply hung = client.compile(tiny_request("-DKT_HANG_HERE=1"));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(hung.outcome, CompileReply::Outcome::timed_out);
  EXPECT_NE(hung.reason.find("no result within 1.5 s"), std::string::npos) << hung.reason;
  EXPECT_NE(hung.reason.find("signal 9"), std::string::npos) << hung.reason;
  EXPECT_GE(waited, 1500ms);
  EXPECT_LT(waited, 10s);

  const CompileReply next = client.compile(tiny_request("-DKT_FINE=1"));
  ASSERT_EQ(next.outcome, CompileReply::Outcome::answered) << next.reason;
  EXPECT_TRUE(next.result.ok) << next.result.log;
  EXPECT_EQ(client.starts(), 2);
}

// The family's sources go to a compile process once; a process that dropped them (past 16 sets it
// forgets them all) is sent them again, and the compile still sees the right headers.
TEST(CompileClient, HeadersAreSentOnceAndAgainWhenTheProcessDroppedThem) {
  CompileClient client(test::compile_process_options());
  const auto with_header = [](int factor) {
    CompileRequest request = tiny_request("-DKT_FINE=1");
    request.source = "#include \"factor.h\"\n" + request.source;
    request.source.replace(request.source.find("2.0f"), 4, "KT_FACTOR");
    request.headers = {{"factor.h", "#define KT_FACTOR " + std::to_string(factor) + ".0f\n"}};
    return request;
  };
  std::vector<std::vector<char>> cubins;
  for (int factor = 1; factor <= 18; ++factor) {
    const CompileReply reply = client.compile(with_header(factor));
    ASSERT_EQ(reply.outcome, CompileReply::Outcome::answered) << reply.reason;
    ASSERT_TRUE(reply.result.ok) << reply.result.log;
    cubins.push_back(reply.result.cubin);
  }
  EXPECT_NE(cubins[0], cubins[1]);  // the header's text reached the compile
  EXPECT_EQ(client.headers_sent(), 18);
  // A set the process holds (it forgot sets 1-16 at the 17th): the id alone, the same kernel.
  const CompileReply held = client.compile(with_header(18));
  ASSERT_EQ(held.outcome, CompileReply::Outcome::answered) << held.reason;
  EXPECT_EQ(held.result.cubin, cubins[17]);
  EXPECT_EQ(client.headers_sent(), 18);
  // Set 1 was forgotten: asked for by id, refused, sent again; same kernel as before.
  const CompileReply again = client.compile(with_header(1));
  ASSERT_EQ(again.outcome, CompileReply::Outcome::answered) << again.reason;
  EXPECT_EQ(again.result.cubin, cubins[0]);
  EXPECT_EQ(client.headers_sent(), 19);
  EXPECT_EQ(client.starts(), 1);
}

// A stand-in compile process answering each request line with `answer`.
std::filesystem::path answering_script(const test::TempDir& dir, const std::string& answer) {
  const auto path = dir.path() / "compile-process.sh";
  std::ofstream(path) << "#!/bin/sh\nwhile read line; do echo '" << answer << "'; done\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

TEST(CompileClient, ARefusedRequestIsAnErrorOfTheJobNotAVariantOutcome) {
  test::TempDir dir;
  CompileClient client({answering_script(dir, R"({"ok":false,"error":"refused for the test"})")});
  try {
    client.compile(tiny_request("-DKT_FINE=1"));
    FAIL() << "no exception";
  } catch (const CompileRefused& e) {
    EXPECT_NE(std::string(e.what()).find("refused for the test"), std::string::npos) << e.what();
  }
  EXPECT_GT(client.pid(), 0);  // it answered: still up
}

TEST(CompileClient, AnUnreadableAnswerIsACrashAndTheProcessIsKilled) {
  test::TempDir dir;
  CompileClient client({answering_script(dir, "this is not JSON")});
  const CompileReply reply = client.compile(tiny_request("-DKT_FINE=1"));
  EXPECT_EQ(reply.outcome, CompileReply::Outcome::crashed);
  EXPECT_NE(reply.reason.find("unreadable answer from the NVRTC process"), std::string::npos)
      << reply.reason;
  EXPECT_NE(reply.reason.find("this is not JSON"), std::string::npos) << reply.reason;
  EXPECT_EQ(client.pid(), -1);
}

// A process that never reads its requests (the 256 KB of sources fill the pipe) cannot hold the
// compile thread past the timeout either.
TEST(CompileClient, AProcessThatStopsReadingIsKilledAtTheTimeout) {
  test::TempDir dir;
  const auto path = dir.path() / "deaf.sh";
  std::ofstream(path) << "#!/bin/sh\nexec sleep 600\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  CompileClient client({path, 1000ms});
  CompileRequest request = tiny_request("-DKT_FINE=1");
  request.headers = {{"big.h", std::string(1 << 20, ' ')}};
  const auto start = std::chrono::steady_clock::now();
  const CompileReply reply = client.compile(request);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reply.outcome, CompileReply::Outcome::timed_out) << reply.reason;
  EXPECT_GE(waited, 1000ms);
  EXPECT_LT(waited, 10s);
  EXPECT_EQ(client.pid(), -1);
}

TEST(CompileClient, AMissingExecutableIsACrashWithTheReasonNotAnException) {
  CompileClient client({test::binary_dir() / "no-such-compiler"});
  const CompileReply reply = client.compile(tiny_request("-DKT_FINE=1"));
  EXPECT_EQ(reply.outcome, CompileReply::Outcome::crashed);
  EXPECT_NE(reply.reason.find("could not be started"), std::string::npos) << reply.reason;
}

}  // namespace
}  // namespace kt
