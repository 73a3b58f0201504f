// The references' magnitudes (the per-element bound's magnitude term, tuner/error_bound.hpp) on a
// real GPU, in this process: cuBLAS's |A| |B|^T (in one block and in many small blocks of rows)
// and the attention and dual GEMM magnitude kernels of the shipped families, each held to the
// same sums computed in fp64 on the host from the inputs the GPU had. Skips without a GPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/gpu_fixture.hpp"
#include "support/naive_gemm.hpp"
#include "support/shipped_family.hpp"
#include "support/worker_inputs.hpp"
#include "tuner/error_bound.hpp"
#include "tuner/family.hpp"
#include "tuner/family_baseline.hpp"
#include "tuner/variant_space.hpp"
#include "worker/cublas_handle.hpp"
#include "worker/cuda_context.hpp"
#include "worker/cuda_stream.hpp"
#include "worker/gemm_operands.hpp"
#include "worker/half_precision.hpp"
#include "worker/output_check.hpp"
#include "worker/problem_buffers.hpp"
#include "worker/reference.hpp"
#include "worker/support_kernels.hpp"

namespace kt {
namespace {

constexpr std::uint64_t kSeed = 4242;

class MagnitudeOnGpu : public test::WorkerGpuTest {
 protected:
  void SetUp() override {
    test::WorkerGpuTest::SetUp();
    if (IsSkipped()) return;
    context_ = std::make_unique<cuda::PrimaryContext>(device_.ordinal);
    stream_ = std::make_unique<cuda::Stream>();
    support_ = std::make_unique<cuda::SupportKernels>(device_.arch);
    cublas_ = std::make_unique<cuda::CublasHandle>();
  }

  // A buffer of the problem as floats (16-bit values widened).
  static std::vector<float> floats(const ProblemBuffers& buffers, const std::string& name) {
    const std::vector<std::byte> bytes = buffers.download(name);
    const std::string& dtype = buffers.spec(name).dtype;
    std::vector<float> values;
    for (std::size_t i = 0; i + 1 < bytes.size(); i += 2) {
      std::uint16_t bits;
      std::memcpy(&bits, bytes.data() + i, 2);
      values.push_back(dtype == "bf16" ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits));
    }
    return values;
  }

  static std::vector<float> download(const cuda::DeviceBuffer& buffer, std::size_t count) {
    std::vector<float> values(count);
    buffer.copy_to_host(values.data(), count * sizeof(float));
    return values;
  }

  // The problem of a shipped kernel-reference family with its reference compiled for the device.
  ProblemInstance kernel_reference_problem(const std::string& family_name, const Shape& shape,
                                           const std::string& dtype) {
    const Family& family = test::shipped_family(family_name);
    ProblemInstance p = baseline_instance(family, with_default_dims(family, shape), dtype, limits_);
    p.reference.params["cubin_path"] =
        write_cubin(reference_compile_request(family, dtype, limits_), family_name + "_" + dtype);
    return p;
  }

  std::unique_ptr<cuda::PrimaryContext> context_;
  std::unique_ptr<cuda::Stream> stream_;
  std::unique_ptr<cuda::SupportKernels> support_;
  std::unique_ptr<cuda::CublasHandle> cublas_;
};

TEST_F(MagnitudeOnGpu, FillMatchesTheHostCopyOfTheWorkersInputs) {
  const ProblemInstance p = test::naive_gemm_problem(37, 29, 301, "bf16");
  ProblemBuffers buffers(p.buffers);
  buffers.prepare(*support_, kSeed, stream_->get());
  EXPECT_EQ(floats(buffers, "A"),
            test::worker_input(37 * 301, "bf16", test::worker_buffer_seed(kSeed, 0)));
  EXPECT_EQ(floats(buffers, "B"),
            test::worker_input(29 * 301, "bf16", test::worker_buffer_seed(kSeed, 1)));
}

TEST_F(MagnitudeOnGpu, AbsCopyClearsTheSignExactly) {
  for (const std::string dtype : {"bf16", "fp16"}) {
    const ProblemInstance p = test::naive_gemm_problem(5, 3, 1000, dtype);
    ProblemBuffers buffers(p.buffers);
    buffers.prepare(*support_, kSeed, stream_->get());
    cuda::DeviceBuffer copy(5 * 1000 * 2);
    support_->abs_copy(copy.get(), buffers.pointer("A"), 5 * 1000, dtype, stream_->get());
    stream_->synchronize();
    std::vector<std::uint16_t> bits(5 * 1000);
    copy.copy_to_host(bits.data(), bits.size() * 2);
    const std::vector<float> a = floats(buffers, "A");
    for (std::size_t i = 0; i < a.size(); ++i) {
      const float value =
          dtype == "bf16" ? bf16_bits_to_float(bits[i]) : fp16_bits_to_float(bits[i]);
      ASSERT_EQ(value, std::abs(a[i])) << dtype << " " << i;
    }
  }
}

// |A| |B|^T of the cublas_gemm reference, and the same in blocks of 10 rows (7 of A, 5 of B).
TEST_F(MagnitudeOnGpu, CublasGemmMagnitudeIsAbsATimesAbsBTransposed) {
  constexpr int m = 67, n = 45, k = 1000;
  for (const std::string dtype : {"bf16", "fp16"}) {
    const ProblemInstance p = test::naive_gemm_problem(m, n, k, dtype);
    ProblemBuffers buffers(p.buffers);
    buffers.prepare(*support_, kSeed, stream_->get());
    const auto reference = make_reference(p, buffers, *cublas_, *support_);
    ASSERT_TRUE(reference->magnitude().has_value());
    EXPECT_EQ(reference->magnitude()->reduction, k);
    EXPECT_EQ(reference->magnitude()->what, kGemmMagnitude);
    const ReferenceResults computed =
        compute_reference(*reference, test::naive_gemm_tolerance(dtype), stream_->get());
    ASSERT_TRUE(computed.magnitude.has_value());
    const std::vector<float> whole = download(*computed.magnitude, m * n);

    cuda::DeviceBuffer blocked_buffer(std::size_t{m} * n * sizeof(float));
    compute_gemm_magnitude(*cublas_, *support_, gemm_operands(p.reference.params, buffers, "test"),
                           blocked_buffer.get(), stream_->get(), 10 * k * 2);
    const std::vector<float> blocked = download(blocked_buffer, m * n);

    const std::vector<float> a = floats(buffers, "A"), b = floats(buffers, "B");
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double exact = 0;
        for (int x = 0; x < k; ++x) exact += std::abs(double(a[i * k + x]) * b[j * k + x]);
        ASSERT_NEAR(whole[i * n + j], exact, 1e-5 * exact) << dtype << " " << i << "," << j;
        ASSERT_NEAR(blocked[i * n + j], exact, 1e-5 * exact) << dtype << " " << i << "," << j;
      }
  }
}

// m = Σ_j p_ij |V_jd| from the same softmax as the reference, for a causal and a full row set.
TEST_F(MagnitudeOnGpu, AttentionMagnitudeIsTheSoftmaxWeightedAbsoluteV) {
  constexpr int B = 1, H = 2, S = 77, D = 64;
  for (const int causal : {0, 1}) {
    const std::string dtype = "bf16";
    const ProblemInstance p = kernel_reference_problem(
        "attention_fwd", {{"B", B}, {"H", H}, {"S", S}, {"D", D}, {"CAUSAL", causal}}, dtype);
    ProblemBuffers buffers(p.buffers);
    buffers.prepare(*support_, kSeed, stream_->get());
    const auto reference = make_reference(p, buffers, *cublas_, *support_);
    ASSERT_TRUE(reference->magnitude().has_value());
    EXPECT_EQ(reference->magnitude()->reduction, 1);
    const Tolerance tolerance = tolerance_for(test::shipped_family("attention_fwd"), dtype);
    const ReferenceResults computed = compute_reference(*reference, tolerance, stream_->get());
    ASSERT_TRUE(computed.magnitude.has_value());
    const std::size_t count = std::size_t{B} * H * S * D;
    const std::vector<float> out = download(computed.expected, count);
    const std::vector<float> magnitude = download(*computed.magnitude, count);
    const std::vector<float> q = floats(buffers, "Q"), k = floats(buffers, "K"),
                             v = floats(buffers, "V");
    const double scale = 1.0 / std::sqrt(double(D));
    for (int bh = 0; bh < B * H; ++bh)
      for (int i = 0; i < S; ++i) {
        const std::size_t head = std::size_t(bh) * S * D;
        const int keys = causal ? i + 1 : S;
        std::vector<double> score(keys);
        double top = -INFINITY;
        for (int j = 0; j < keys; ++j) {
          double s = 0;
          for (int d = 0; d < D; ++d) s += double(q[head + i * D + d]) * k[head + j * D + d];
          score[j] = s * scale;
          top = std::max(top, score[j]);
        }
        double sum = 0;
        for (double& s : score) sum += (s = std::exp(s - top));
        for (int d = 0; d < D; ++d) {
          double o = 0, m = 0;
          for (int j = 0; j < keys; ++j) {
            o += score[j] * v[head + j * D + d];
            m += score[j] * std::abs(v[head + j * D + d]);
          }
          const std::size_t at = head + std::size_t(i) * D + d;
          ASSERT_NEAR(out[at], o / sum, 1e-5) << causal << " " << bh << "," << i << "," << d;
          ASSERT_NEAR(magnitude[at], m / sum, 1e-5) << causal << " " << bh << "," << i << "," << d;
          ASSERT_GE(magnitude[at], std::abs(out[at]) - 1e-5);  // m bounds |O|
        }
      }
  }
}

// m = 1.1 |up| m1 + |silu(gate)| m2 with m1 = |A| |B1|^T and m2 = |A| |B2|^T, per group.
TEST_F(MagnitudeOnGpu, DualGemmMagnitudePropagatesBothGemmsMagnitudes) {
  constexpr int G = 2, M = 33, N = 47, K = 200;
  const std::string dtype = "fp16";
  const ProblemInstance p =
      kernel_reference_problem("dual_gemm_silu", {{"G", G}, {"M", M}, {"N", N}, {"K", K}}, dtype);
  ProblemBuffers buffers(p.buffers);
  buffers.prepare(*support_, kSeed, stream_->get());
  const auto reference = make_reference(p, buffers, *cublas_, *support_);
  ASSERT_TRUE(reference->magnitude().has_value());
  EXPECT_EQ(reference->magnitude()->reduction, K);
  const Tolerance tolerance = tolerance_for(test::shipped_family("dual_gemm_silu"), dtype);
  const ReferenceResults computed = compute_reference(*reference, tolerance, stream_->get());
  ASSERT_TRUE(computed.magnitude.has_value());
  const std::vector<float> magnitude = download(*computed.magnitude, std::size_t{G} * M * N);
  const std::vector<float> a = floats(buffers, "A"), b1 = floats(buffers, "B1"),
                           b2 = floats(buffers, "B2");
  for (int g = 0; g < G; ++g)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double gate = 0, up = 0, m1 = 0, m2 = 0;
        for (int x = 0; x < K; ++x) {
          const double av = a[(std::size_t(g) * M + i) * K + x];
          const double g1 = av * b1[(std::size_t(g) * N + j) * K + x];
          const double u2 = av * b2[(std::size_t(g) * N + j) * K + x];
          gate += g1;
          up += u2;
          m1 += std::abs(g1);
          m2 += std::abs(u2);
        }
        const double silu = gate / (1 + std::exp(-gate));
        const double exact = 1.1 * std::abs(up) * m1 + std::abs(silu) * m2;
        // fp32 sums of K terms: gate and up within ~K * 2^-24 of m1 and m2.
        const double slack = 1e-4 * exact + 1e-4 * m1 * m2;
        ASSERT_NEAR(magnitude[(std::size_t(g) * M + i) * N + j], exact, slack)
            << g << "," << i << "," << j;
      }
}

// A tolerance with a magnitude term and a reference without a magnitude: refused, not ignored.
TEST_F(MagnitudeOnGpu, ATermWithoutAMagnitudeIsRefused) {
  const ProblemInstance p =
      kernel_reference_problem("attention_fwd", {{"B", 1}, {"H", 1}, {"S", 16}, {"D", 64}}, "bf16");
  ProblemInstance without = p;
  without.reference.params.erase("magnitude");
  ProblemBuffers buffers(without.buffers);
  buffers.prepare(*support_, kSeed, stream_->get());
  const auto reference = make_reference(without, buffers, *cublas_, *support_);
  EXPECT_FALSE(reference->magnitude().has_value());
  EXPECT_THROW(compute_reference(*reference, Tolerance{0.01, 0.01, 0.01, 4}, stream_->get()),
               std::invalid_argument);
  EXPECT_NO_THROW(compute_reference(*reference, Tolerance{0.01, 0.01, 0.01}, stream_->get()));
}

}  // namespace
}  // namespace kt
