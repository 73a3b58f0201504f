// A job's target (engine/job_target.cpp), resolved by one function for a request and for a stored
// job, and the API/DB text of mode and pipeline (db/model.cpp).
#include "engine/job_target.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

DeviceInfo gpu(int ordinal, const std::string& name, const std::string& arch,
               const std::string& uuid) {
  DeviceInfo device;
  device.ordinal = ordinal;
  device.name = name;
  device.arch = arch;
  device.uuid = uuid;
  device.sm_major = arch == "sm_90a" ? 9 : 8;
  device.sm_count = 100 + ordinal;
  device.smem_per_block_optin = 200 * 1024;
  return device;
}

const std::vector<DeviceInfo> kHost = {
    gpu(0, "NVIDIA A100-SXM4-80GB", "sm_80", "GPU-aaaa"),
    gpu(1, "NVIDIA H100 80GB HBM3", "sm_90a", "GPU-bbbb"),
    gpu(2, "NVIDIA H100 80GB HBM3", "sm_90a", "GPU-cccc"),
};

TargetProblem problem_of(const TargetSpec& spec, const std::vector<DeviceInfo>& devices) {
  try {
    resolve_target(spec, devices);
  } catch (const TargetError& error) {
    return error.problem();
  }
  ADD_FAILURE() << "resolved";
  return TargetProblem::no_device;
}

TEST(JobTarget, ACompileJobTargetsItsArchWithoutAGpu) {
  const JobTarget target = resolve_target({JobMode::compile, "sm_100a", "", ""}, {});
  EXPECT_EQ(target.arch, "sm_100a");
  EXPECT_FALSE(target.device);
  EXPECT_EQ(target.limits.arch, "sm_100a");
  EXPECT_EQ(target.limits.sm, 100);
  EXPECT_EQ(target.limits.sm_count, 148);  // no GPU: the arch's typical part (a B200)
  EXPECT_EQ(resolve_target({JobMode::compile, "sm_90a", "", ""}, {}).limits.sm_count, 132);
  EXPECT_EQ(problem_of({JobMode::compile, "", "", ""}, kHost), TargetProblem::unknown_arch);
  EXPECT_EQ(problem_of({JobMode::compile, "sm_999", "", ""}, kHost), TargetProblem::unknown_arch);
}

TEST(JobTarget, ATuneJobTakesTheSelectedGpuAndItsMeasuredLimits) {
  const JobTarget target = resolve_target({JobMode::tune, "", "h100", ""}, kHost);
  ASSERT_TRUE(target.device);
  EXPECT_EQ(target.device->uuid, "GPU-bbbb");
  EXPECT_EQ(target.arch, "sm_90a");
  EXPECT_EQ(target.limits.sm_count, 101);  // the device's own figures, not the arch table's
  EXPECT_EQ(target.limits.smem_optin, 200 * 1024);
  EXPECT_EQ(resolve_target({JobMode::tune, "sm_90a", "2", ""}, kHost).device->uuid, "GPU-cccc");
  EXPECT_EQ(resolve_target({JobMode::tune, "", "", ""}, kHost).device->ordinal, 0);

  EXPECT_EQ(problem_of({JobMode::tune, "", "", ""}, {}), TargetProblem::no_device);
  EXPECT_EQ(problem_of({JobMode::tune, "", "7", ""}, kHost), TargetProblem::unknown_device);
  EXPECT_EQ(problem_of({JobMode::tune, "sm_100a", "h100", ""}, kHost),
            TargetProblem::arch_mismatch);
}

TEST(JobTarget, AStoredJobFindsItsGpuByUuidOrElseOneOfTheSameModel) {
  JobRecord job;
  job.mode = JobMode::tune;
  job.arch = "sm_90a";
  job.device_uuid = "GPU-cccc";
  job.device_name = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(resolve_target(target_spec_of(job), kHost).device->ordinal, 2);

  job.device_uuid = "GPU-gone";  // the host's GPUs were swapped
  EXPECT_EQ(resolve_target(target_spec_of(job), kHost).device->name, job.device_name);

  job.device_name = "NVIDIA B200";
  job.arch = "sm_100a";
  EXPECT_EQ(problem_of(target_spec_of(job), kHost), TargetProblem::unknown_device);
}

TEST(JobText, ModeAndPipelineReadAndWriteTheApiText) {
  for (const JobMode mode : {JobMode::tune, JobMode::compile})
    EXPECT_EQ(job_mode_from_string(to_string(mode)), mode);
  for (const Pipeline pipeline : {Pipeline::pipelined, Pipeline::serial})
    EXPECT_EQ(pipeline_from_string(to_string(pipeline)), pipeline);
  EXPECT_EQ(to_string(JobMode::compile), "compile");
  EXPECT_EQ(to_string(Pipeline::pipelined), "pipelined");
  EXPECT_FALSE(job_mode_from_string("benchmark"));
  EXPECT_FALSE(job_mode_from_string("Tune"));
  EXPECT_FALSE(pipeline_from_string("parallel"));
}

}  // namespace
}  // namespace kt
