#include "support/gpu_fixture.hpp"

#include <fstream>

namespace kt::test {

const ProbeResult& GpuTest::probe() {
  static const ProbeResult result = probe_devices(binary_dir() / "kerntune-worker");
  return result;
}

int GpuTest::same_model_gpus() {
  const auto& devices = probe().devices;
  int count = 0;
  for (const DeviceInfo& d : devices)
    if (d.name == devices.front().name && d.arch == devices.front().arch) ++count;
  return count;
}

void GpuTest::SetUp() {
  if (probe().devices.empty()) GTEST_SKIP() << "no CUDA device: " << probe().error;
  device_ = probe().devices.front();
  limits_ = limits_for_device(device_);
}

void WorkerGpuTest::SetUp() {
  GpuTest::SetUp();
  if (IsSkipped()) return;
  client_ = std::make_unique<WorkerClient>(binary_dir() / "kerntune-worker", device_.ordinal);
}

std::string WorkerGpuTest::write_cubin(CompileRequest request, const std::string& name) {
  request.arch = device_.arch;
  const CompileResult compiled = compile_kernel(request);
  EXPECT_TRUE(compiled.ok) << name << ":\n" << compiled.log;
  const auto path = dir_.path() / (name + ".cubin");
  std::ofstream(path, std::ios::binary)
      .write(compiled.cubin.data(), static_cast<std::streamsize>(compiled.cubin.size()));
  return path.string();
}

}  // namespace kt::test
