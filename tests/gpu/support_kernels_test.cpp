// The worker's building blocks in this process: the support kernels (compiled by NVRTC without a
// GPU, then run on one), the driver-API owners and the timing pipeline.
#include "worker/support_kernels.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "tuner/compile/nvrtc_compiler.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/cuda_context.hpp"
#include "worker/cuda_stream.hpp"
#include "worker/device_probe.hpp"
#include "worker/driver_api.hpp"
#include "worker/half_precision.hpp"
#include "worker/l2_flusher.hpp"
#include "worker/timing.hpp"

namespace kt {
namespace {

// Needs no GPU: NVRTC only.
TEST(SupportKernelSource, CompilesForHopperAndBlackwell) {
  for (const char* arch : {"sm_80", "sm_90a", "sm_100a"}) {
    CompileRequest request;
    request.source_name = "kt_support.cu";
    request.source = cuda::SupportKernels::source();
    request.kernel = cuda::SupportKernels::kFillKernel;
    request.arch = arch;
    const CompileResult result = compile_kernel(request);
    EXPECT_TRUE(result.ok) << arch << ":\n" << result.log;
    EXPECT_FALSE(result.cubin.empty());
    EXPECT_GT(result.resources.registers, 0) << arch << ":\n" << result.log;
  }
}

class OnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      cuda::driver();
      int count = 0;
      KT_CU(cuDeviceGetCount, &count);
      if (count == 0) GTEST_SKIP() << "no CUDA device";
    } catch (const std::exception& e) {
      GTEST_SKIP() << e.what();
    }
    info_ = describe_device(0);
    context_ = std::make_unique<cuda::PrimaryContext>(0);
    stream_ = std::make_unique<cuda::Stream>();
    support_ = std::make_unique<cuda::SupportKernels>(info_.arch);
  }

  template <typename T>
  std::vector<T> fill(std::size_t n, const std::string& dtype, std::uint64_t seed) {
    cuda::DeviceBuffer buffer(n * sizeof(T));
    buffer.fill_bytes(0xFF, stream_->get());
    support_->fill_uniform(buffer.get(), static_cast<std::int64_t>(n), dtype, seed, stream_->get());
    stream_->synchronize();
    std::vector<T> host(n);
    buffer.copy_to_host(host.data(), n * sizeof(T));
    return host;
  }

  DeviceInfo info_;
  std::unique_ptr<cuda::PrimaryContext> context_;
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::SupportKernels> support_;
};

TEST_F(OnDevice, FillIsUniformInRangeAndDeterministic) {
  constexpr std::size_t n = 1 << 20;  // more elements than one launch's threads: grid-stride
  const auto a = fill<float>(n, "f32", 1);
  double sum = 0, sum_sq = 0;
  for (float v : a) {
    ASSERT_TRUE(v >= -1.0f && v < 1.0f) << v;
    sum += v;
    sum_sq += double{v} * v;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / n, 1.0 / 3.0, 0.01);  // variance of U(-1, 1)
  EXPECT_EQ(a, fill<float>(n, "f32", 1));
  const auto b = fill<float>(n, "f32", 2);
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) same += a[i] == b[i];
  EXPECT_LT(same, n / 1000);
}

TEST_F(OnDevice, HalfFillsAreTheRoundedF32Values) {
  constexpr std::size_t n = 100000;
  const auto exact = fill<float>(n, "f32", 7);
  const auto bf16 = fill<std::uint16_t>(n, "bf16", 7);
  const auto fp16 = fill<std::uint16_t>(n, "fp16", 7);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(bf16[i], float_to_bf16_bits(exact[i])) << i;
    ASSERT_EQ(fp16[i], float_to_fp16_bits(exact[i])) << i;
  }
}

TEST_F(OnDevice, TimingPipelineTakesTrialsUntilItStops) {
  ASSERT_GT(info_.l2_bytes, 0) << "the probe reads the device's L2 size";
  cuda::L2Flusher flusher(info_.l2_bytes);
  EXPECT_GE(flusher.bytes(), static_cast<std::size_t>(2 * info_.l2_bytes) - 4);
  cuda::DeviceBuffer buffer(std::size_t{64} << 20);
  TimingOptions options;
  options.min_trials = 10;
  options.max_trials = 300;
  options.max_seconds = 1.0;
  TimingPipeline pipeline(stream_->get(), &flusher);
  const TimingSummary summary = pipeline.run(
      [&](CUstream stream) {
        support_->fill_uniform(buffer.get(), (std::int64_t{64} << 20) / 4, "f32", 3, stream);
      },
      options);
  EXPECT_GE(summary.trials, 10);
  EXPECT_LE(summary.trials, 300);
  EXPECT_EQ(static_cast<std::size_t>(summary.trials), pipeline.samples().size());
  EXPECT_GT(summary.min_us, 1.0);  // 64 MiB written takes well over a microsecond
  EXPECT_LE(summary.min_us, summary.median_us);
  EXPECT_LE(summary.median_us, summary.p90_us);
  EXPECT_EQ(summary.converged, pipeline.stop_reason() == StopReason::converged);
}

// A read flush must evict (a warm 32 MiB read is faster than one after it) and leave L2 clean
// (a read after it is faster than after a memset flush, which leaves dirty lines to write back).
// The eviction margin is small on an H200: its HBM3e (4.8 TB/s) nearly keeps up with what this
// read kernel draws from L2 (2026-11-26: warm 11.68 us, after a read flush 12.22 us, +4.6%; an
// H100 shows more than 10%), so the test asks for more than run-to-run noise (about 1-2%).
TEST_F(OnDevice, ReadFlushEvictsAndLeavesL2Clean) {
  const std::size_t bytes = std::size_t{32} << 20;
  ASSERT_GT(static_cast<std::size_t>(info_.l2_bytes), bytes) << "needs an L2 larger than 32 MiB";
  cuda::DeviceBuffer data(bytes);
  cuda::DeviceBuffer sink(16);
  support_->fill_uniform(data.get(), bytes / 4, "f32", 5, stream_->get());
  TimingOptions options;
  options.min_trials = 30;
  options.max_trials = 200;
  options.max_seconds = 1.0;
  options.graph_below_us = 0;  // events for all three, so they compare like with like
  const auto median_read_us = [&](cuda::L2Flusher* flusher) {
    TimingPipeline pipeline(stream_->get(), flusher);
    return pipeline
        .run([&](CUstream s) { support_->read_through(data.get(), bytes, sink.get(), s); }, options)
        .median_us;
  };
  cuda::L2Flusher read_flush(info_.l2_bytes, support_.get());
  cuda::L2Flusher memset_flush(info_.l2_bytes);
  const double warm = median_read_us(nullptr);
  const double after_read_flush = median_read_us(&read_flush);
  const double after_memset_flush = median_read_us(&memset_flush);
  RecordProperty("warm_us", std::to_string(warm));
  RecordProperty("read_flush_us", std::to_string(after_read_flush));
  RecordProperty("memset_flush_us", std::to_string(after_memset_flush));
  std::printf("32 MiB read: warm %.2f us, after read flush %.2f us, after memset flush %.2f us\n",
              warm, after_read_flush, after_memset_flush);
  EXPECT_LT(warm * 1.03, after_read_flush);
  EXPECT_LT(after_read_flush, after_memset_flush);
}

TEST_F(OnDevice, DriverErrorsCarryTheCallAndTheCode) {
  try {
    cuda::DeviceBuffer huge(std::size_t{1} << 50);  // 1 PiB
    FAIL() << "allocating 1 PiB succeeded";
  } catch (const cuda::CudaError& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("cuMemAlloc("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("cuda_buffer.cpp:"), std::string::npos);
  }
}

}  // namespace
}  // namespace kt
