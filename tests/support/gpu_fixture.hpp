// The fixtures of the GPU tests. GpuTest: the host's first GPU as the real kerntune-worker probes
// it (once per test binary); a test is skipped, with the probe's reason, on a host without one.
// WorkerGpuTest adds a measurement worker of its own on that GPU and a folder for cubins.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "engine/worker_client.hpp"
#include "support/test_paths.hpp"
#include "tuner/compile/nvrtc_compiler.hpp"
#include "tuner/device_limits.hpp"

namespace kt::test {

class GpuTest : public ::testing::Test {
 protected:
  static const ProbeResult& probe();
  // GPUs of the same model as the first one (a job spreads over these).
  static int same_model_gpus();

  // Derived fixtures call this first and return if IsSkipped().
  void SetUp() override;

  DeviceInfo device_;
  DeviceLimits limits_;  // the device's, as a tuning job on it sees them
};

class WorkerGpuTest : public GpuTest {
 protected:
  void SetUp() override;

  // Compiles for the device (a failed compile fails the test, with the log) and writes the
  // cubin as `name`.cubin in dir_; returns its path.
  std::string write_cubin(CompileRequest request, const std::string& name);

  TempDir dir_;
  std::unique_ptr<WorkerClient> client_;
};

}  // namespace kt::test
