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
#include "worker/cuda_module.hpp"
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

// One thread walking a chain of dependent loads through a buffer of zeros: each address depends
// on the value the last load returned (the compiler cannot know it is 0), and ld.global.cg keeps
// the loads out of L1, so the time is the loads' latency, L2's or HBM's. Bandwidth cannot tell the
// two apart on an H200, whose HBM3e nearly keeps up with what a read kernel draws from L2.
constexpr const char* kChaseSource = R"cuda(
extern "C" __global__ void kt_test_chase(const unsigned* data, unsigned long long loads,
                                         unsigned long long stride_words, unsigned* sink) {
  unsigned long long i = 0;
  unsigned acc = 0;
  for (unsigned long long step = 0; step < loads; ++step) {
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(data + i));
    acc += v;
    i += stride_words + v;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}
)cuda";

// Needs no GPU: the chain walk below compiles for the archs the test runs on.
TEST(SupportKernelSource, ChainWalkProbeCompiles) {
  for (const char* arch : {"sm_90a", "sm_100a"}) {
    CompileRequest request;
    request.source_name = "kt_test_chase.cu";
    request.source = kChaseSource;
    request.kernel = "kt_test_chase";
    request.arch = arch;
    const CompileResult result = compile_kernel(request);
    EXPECT_TRUE(result.ok) << arch << ":\n" << result.log;
    EXPECT_GT(result.resources.registers, 0) << arch;
  }
}

// A read flush must evict (a latency-bound walk through a warm 32 MiB buffer is much faster than
// one after the flush) and leave L2 clean (a read after it is faster than after a memset flush,
// which leaves dirty lines to write back). The 32 MiB read's bandwidth is printed, not asserted:
// on an H200 the warm read was 0-10% faster than after a read flush from one machine to the next
// (2026-11-26: 11.68 against 12.22 us; 2026-11-27: 11.81-12.51 against 12.05-12.14 us).
TEST_F(OnDevice, ReadFlushEvictsAndLeavesL2Clean) {
  const std::size_t bytes = std::size_t{32} << 20;
  ASSERT_GT(static_cast<std::size_t>(info_.l2_bytes), bytes) << "needs an L2 larger than 32 MiB";
  cuda::DeviceBuffer data(bytes);
  cuda::DeviceBuffer zeros(bytes);
  cuda::DeviceBuffer sink(16);
  support_->fill_uniform(data.get(), bytes / 4, "f32", 5, stream_->get());
  zeros.fill_bytes(0, stream_->get());

  CompileRequest request;
  request.source_name = "kt_test_chase.cu";
  request.source = kChaseSource;
  request.kernel = "kt_test_chase";
  request.arch = info_.arch;
  const CompileResult chase_kernel = compile_kernel(request);
  ASSERT_TRUE(chase_kernel.ok) << chase_kernel.log;
  const cuda::Module chase_module(chase_kernel.cubin);
  const CUfunction chase = chase_module.function("kt_test_chase");
  unsigned long long stride_words = 16 * 1024 / 4;  // one load per 16 KiB: 2048 loads
  unsigned long long loads = bytes / 4 / stride_words;
  CUdeviceptr zeros_ptr = zeros.get(), sink_ptr = sink.get();
  void* chase_args[] = {&zeros_ptr, &loads, &stride_words, &sink_ptr};

  TimingOptions options;
  options.min_trials = 30;
  options.max_trials = 200;
  options.max_seconds = 1.0;
  options.graph_below_us = 0;  // events for all, so they compare like with like
  const auto median_us = [&](cuda::L2Flusher* flusher, auto&& launch) {
    TimingPipeline pipeline(stream_->get(), flusher);
    return pipeline.run(launch, options).median_us;
  };
  const auto read = [&](CUstream s) { support_->read_through(data.get(), bytes, sink.get(), s); };
  const auto walk = [&](CUstream s) {
    KT_CU(cuLaunchKernel, chase, 1, 1, 1, 1, 1, 1, 0, s, chase_args, nullptr);
  };
  cuda::L2Flusher read_flush(info_.l2_bytes, support_.get());
  cuda::L2Flusher memset_flush(info_.l2_bytes);
  const double walk_warm = median_us(nullptr, walk);
  const double walk_after_read_flush = median_us(&read_flush, walk);
  const double warm = median_us(nullptr, read);
  const double after_read_flush = median_us(&read_flush, read);
  const double after_memset_flush = median_us(&memset_flush, read);
  RecordProperty("walk_warm_us", std::to_string(walk_warm));
  RecordProperty("walk_read_flush_us", std::to_string(walk_after_read_flush));
  RecordProperty("warm_us", std::to_string(warm));
  RecordProperty("read_flush_us", std::to_string(after_read_flush));
  RecordProperty("memset_flush_us", std::to_string(after_memset_flush));
  std::printf("2048 dependent loads over 32 MiB: warm %.1f us, after read flush %.1f us\n",
              walk_warm, walk_after_read_flush);
  std::printf("32 MiB read: warm %.2f us, after read flush %.2f us, after memset flush %.2f us\n",
              warm, after_read_flush, after_memset_flush);
  EXPECT_LT(walk_warm * 1.3, walk_after_read_flush);
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
