// Every kind of job passes through one start (engine/job_start.hpp): a family whose reference is a
// kernel has it compiled for the job's arch and dtype before the first variant, for searched,
// planned and pinned jobs alike, compile-only ones included, so a reference that does not compile
// shows on a machine with no GPU. Through a real daemon on loopback (compile-only jobs, real
// NVRTC, a real SQLite store). A searched job needs a GPU (compile-only jobs run their plan as it
// is); it takes the same start, and the GPU conformance sweep runs it.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "client/kerntune_client.hpp"
#include "support/in_process_daemon.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/family_baseline.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;

class JobStartTest : public ::testing::Test {
 protected:
  nlohmann::json run_to_end(const JobSpec& spec) {
    const Client client(daemon_.url);
    const std::int64_t id = client.submit_job(spec)["id"].get<std::int64_t>();
    const auto deadline = std::chrono::steady_clock::now() + 300s;
    for (;;) {
      nlohmann::json job = client.job(id);
      const std::string status = job["status"];
      if (status != "queued" && status != "running") return job;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "job " << id << " still " << status;
        return job;
      }
      std::this_thread::sleep_for(100ms);
    }
  }

  bool reference_cached(const std::string& family, const std::string& dtype) {
    const CompileRequest request = reference_compile_request(
        *daemon_.families.find(family), dtype, *limits_for_arch("sm_90a"));
    return daemon_.store.find_kernel(compile_cache_key(request)).has_value();
  }

  test::InProcessDaemon daemon_;
};

JobSpec compile_job(const std::string& family, std::map<std::string, std::int64_t> shape,
                    const std::string& dtype) {
  JobSpec spec;
  spec.family = family;
  spec.shape = std::move(shape);
  spec.dtype = dtype;
  spec.mode = "compile";
  spec.arch = "sm_90a";
  return spec;
}

TEST_F(JobStartTest, ABudgetedCompileJobPreparesTheReferenceKernel) {
  // Before, only a planned tune job compiled its reference: a searched one failed at its first
  // variant on a GPU, and a compile-only one never showed a reference that does not compile.
  struct Case {
    std::string family;
    std::map<std::string, std::int64_t> shape;
    std::string dtype;
  };
  const std::vector<Case> cases{
      {"attention_fwd", {{"B", 1}, {"H", 3}, {"S", 131}, {"D", 64}, {"CAUSAL", 1}}, "bf16"},
      {"dual_gemm_silu", {{"G", 1}, {"M", 77}, {"N", 136}, {"K", 264}}, "fp16"},
  };
  for (const Case& c : cases) {
    ASSERT_FALSE(reference_cached(c.family, c.dtype)) << c.family;
    JobSpec spec = compile_job(c.family, c.shape, c.dtype);
    spec.budget = 3;
    const nlohmann::json job = run_to_end(spec);
    EXPECT_EQ(job["status"], "done") << job.dump(2);
    EXPECT_TRUE(reference_cached(c.family, c.dtype))
        << c.family << ": the searched job compiled its reference kernel";
  }
}

TEST_F(JobStartTest, AnExhaustiveCompileJobPreparesTheReferenceKernelToo) {
  JobSpec spec = compile_job("attention_fwd", {{"B", 2}, {"H", 1}, {"S", 64}, {"D", 128}}, "fp16");
  spec.budget = 2;
  spec.search = "exhaustive";
  const nlohmann::json job = run_to_end(spec);
  EXPECT_EQ(job["status"], "done") << job.dump(2);
  EXPECT_TRUE(reference_cached("attention_fwd", "fp16"));
}

TEST_F(JobStartTest, AFamilyWithABuiltInReferenceCompilesNoReferenceKernel) {
  JobSpec spec = compile_job("gemm", {{"M", 64}, {"N", 64}, {"K", 64}}, "bf16");
  spec.budget = 2;
  const nlohmann::json job = run_to_end(spec);
  EXPECT_EQ(job["status"], "done") << job.dump(2);
  EXPECT_THROW(reference_compile_request(*daemon_.families.find("gemm"), "bf16",
                                         *limits_for_arch("sm_90a")),
               FamilyError)
      << "cuBLAS is gemm's reference: nothing to compile";
}

}  // namespace
}  // namespace kt
