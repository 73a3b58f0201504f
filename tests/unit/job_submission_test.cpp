// A typed job request planned and submitted by the engine (engine/job_submission.cpp): the target
// and search it gets, its refusals, and GET /v1/best's tune-on-request reusing an unfinished job.
#include "engine/job_submission.hpp"

#include <gtest/gtest.h>

#include "support/fake_gpu.hpp"
#include "support/shipped_family.hpp"
#include "support/test_paths.hpp"
#include "support/test_scheduler_options.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/space_index.hpp"

namespace kt {
namespace {

const std::string kH100 = "NVIDIA H100 80GB HBM3";
const Shape kShape{{"M", 1024}, {"N", 256}, {"K", 128}};

using test::fake_h100;

JobRequest gemm_request() {
  JobRequest request;
  request.family = "gemm";
  request.dtype = "bf16";
  request.shape = kShape;
  return request;
}

class JobSubmissionTest : public ::testing::Test {
 protected:
  JobSubmissionTest()
      : store_(dir_.path() / "kerntune.db"),
        families_(test::shipped_families()),
        devices_{fake_h100()},
        scheduler_(store_, families_, test::test_scheduler_options(), devices_) {}

  SubmissionHost host(const std::vector<DeviceInfo>& devices) const {
    return {*families_.find("gemm"), devices, device_error_};
  }
  // The problem code of the request's refusal; fails the test when it is planned.
  SubmissionProblem refusal(const JobRequest& request, const std::vector<DeviceInfo>& devices) {
    try {
      plan_job(request, host(devices));
    } catch (const SubmissionError& error) {
      return error.problem();
    }
    ADD_FAILURE() << "planned";
    return SubmissionProblem::invalid_search;
  }

  test::TempDir dir_;
  Store store_;
  FamilyRegistry families_;
  std::vector<DeviceInfo> devices_;
  std::string device_error_ = "no driver";
  JobScheduler scheduler_;  // never started: submitting only enqueues
};

TEST_F(JobSubmissionTest, ATuneJobRunsOnTheSelectedGpuWithTheDefaultSearchOfItsBudget) {
  JobRequest request = gemm_request();
  const JobSubmission whole = plan_job(request, host(devices_));
  EXPECT_EQ(whole.job.arch, "sm_90a");
  EXPECT_EQ(whole.job.device_name, kH100);
  EXPECT_EQ(whole.job.driver_version, 13000);
  EXPECT_EQ(whole.job.family_hash, families_.find("gemm")->source_hash);
  EXPECT_EQ(whole.job.search, "exhaustive");  // no budget: the whole space in order
  EXPECT_TRUE(whole.warm_start);
  request.budget = 40;
  request.warm_start = false;
  const JobSubmission budgeted = plan_job(request, host(devices_));
  EXPECT_EQ(budgeted.job.search, "predicted");
  EXPECT_FALSE(budgeted.warm_start);
}

TEST_F(JobSubmissionTest, ACompileJobRunsItsPlanAsItIs) {
  JobRequest request = gemm_request();
  request.mode = JobMode::compile;
  request.arch = "sm_90a";
  request.budget = 5;
  const JobSubmission planned = plan_job(request, host({}));
  EXPECT_EQ(planned.job.search, "random");  // a budget of the plan: a random sample of it
  EXPECT_TRUE(planned.job.device_name.empty());
  request.search = "local";
  EXPECT_EQ(refusal(request, {}), SubmissionProblem::invalid_search);
  request.search.reset();
  request.search_seconds = 10;
  EXPECT_EQ(refusal(request, {}), SubmissionProblem::invalid_search);
}

// A check job checks the configs it is given on a GPU (what a predicted answer's check runs): it
// needs both, and it runs its pinned plan as it is.
TEST_F(JobSubmissionTest, ACheckJobNeedsPinnedConfigsAndAGpu) {
  JobRequest request = gemm_request();
  request.mode = JobMode::check;
  EXPECT_EQ(refusal(request, devices_), SubmissionProblem::invalid_configs);
  try {
    plan_job(request, host(devices_));
  } catch (const SubmissionError& error) {
    EXPECT_NE(std::string(error.what()).find("give \"configs\""), std::string::npos)
        << error.what();
  }
  const Family& gemm = *families_.find("gemm");
  const SpaceIndex index(gemm, "bf16", limits_for_device(devices_.front()));
  const std::vector<SpaceIndex::Entry> feasible = index.feasible(kShape);
  ASSERT_FALSE(feasible.empty());
  nlohmann::json pinned = {{"template", feasible.front().tmpl->name}};
  for (const auto& [axis, value] : feasible.front().config) pinned[axis] = value;
  request.configs = nlohmann::json::array({pinned});
  EXPECT_EQ(refusal(request, {}), SubmissionProblem::no_device);
  const JobSubmission planned = plan_job(request, host(devices_));
  EXPECT_EQ(planned.job.mode, JobMode::check);
  EXPECT_EQ(planned.job.device_name, kH100);
  EXPECT_EQ(planned.job.search, "exhaustive");
  EXPECT_FALSE(planned.job.pinned_configs_json.empty());
}

TEST_F(JobSubmissionTest, RefusalsSayWhatIsWrong) {
  EXPECT_EQ(refusal(gemm_request(), {}), SubmissionProblem::no_device);
  JobRequest request = gemm_request();
  request.device = "B200";
  EXPECT_EQ(refusal(request, devices_), SubmissionProblem::unknown_device);
  request = gemm_request();
  request.search = "no_such_search";
  EXPECT_EQ(refusal(request, devices_), SubmissionProblem::invalid_search);
  request = gemm_request();
  request.configs = nlohmann::json::array({{{"template", "no_such_template"}}});
  EXPECT_EQ(refusal(request, devices_), SubmissionProblem::invalid_configs);
  try {
    plan_job(gemm_request(), host({}));
  } catch (const SubmissionError& error) {
    EXPECT_NE(std::string(error.what()).find("no driver"), std::string::npos) << error.what();
  }
}

TEST_F(JobSubmissionTest, TuningOnRequestQueuesOneJobAndThenReusesIt) {
  ProblemQuery problem;
  problem.family = families_.find("gemm");
  problem.dtype = "bf16";
  problem.shape = kShape;
  problem.shape_key = canonical_key(kShape);
  const TuneOnRequest first = tune_on_request(problem, "", store_, scheduler_, host(devices_));
  EXPECT_TRUE(first.new_job);
  EXPECT_EQ(first.job.status, JobStatus::queued);
  EXPECT_EQ(first.job.device_name, kH100);
  EXPECT_EQ(first.job.shape, kShape);
  const TuneOnRequest again = tune_on_request(problem, kH100, store_, scheduler_, host(devices_));
  EXPECT_FALSE(again.new_job);
  EXPECT_EQ(again.job.id, first.job.id);
}

}  // namespace
}  // namespace kt
