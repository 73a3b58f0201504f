// client/runtime/kerntune_bundle.hpp on a GPU: one problem of each shipped family tuned by a real
// kerntuned, exported as a bundle the way `kerntune export --bundle` writes it, then each kernel
// loaded from the bundle alone and launched over buffers of the CUDA runtime (the primary context
// the loader shares) on random inputs, its output checked against a reference computed here on
// the CPU. A wrong argument order, tensor map or scratch buffer in the loader shows as a wrong
// answer.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "client/bundle_command.hpp"
#include "client/kerntune_client.hpp"
#include "client/runtime/kerntune_bundle.hpp"
#include "harness/daemon_process.hpp"
#include "support/gpu_fixture.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

using namespace std::chrono_literals;
using Shape = std::map<std::string, std::int64_t>;

std::uint16_t to_bf16(float value) {  // round to nearest even
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>(bits >> 16);
}

float from_bf16(std::uint16_t value) {
  const std::uint32_t bits = static_cast<std::uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Random bf16 values in [-0.5, 0.5) and their float values (what the kernel reads).
struct HostTensor {
  std::vector<std::uint16_t> bits;
  std::vector<float> values;
  HostTensor(std::size_t n, std::mt19937& rng) : bits(n), values(n) {
    std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
    for (std::size_t i = 0; i < n; ++i) {
      bits[i] = to_bf16(uniform(rng));
      values[i] = from_bf16(bits[i]);
    }
  }
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(cudaMalloc(&ptr_, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(ptr_, 0xFF, bytes), cudaSuccess);  // poisoned: NaN in bf16
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr_); }
  void upload(const std::vector<std::uint16_t>& bits) {
    ASSERT_EQ(cudaMemcpy(ptr_, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<float> download_bf16() const {
    std::vector<std::uint16_t> bits(bytes_ / 2);
    EXPECT_EQ(cudaMemcpy(bits.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    std::vector<float> out(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) out[i] = from_bf16(bits[i]);
    return out;
  }
  CUdeviceptr address() const { return reinterpret_cast<CUdeviceptr>(ptr_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

// Relative L2 error of got against want, and whether every element is finite.
double relative_l2(const std::vector<float>& got, const std::vector<float>& want) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    error += (got[i] - want[i]) * double(got[i] - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(error / norm);
}

// C[m, n] = sum_k A[m, k] B[n, k] (row-major).
std::vector<float> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m,
                                  int n, int k) {
  std::vector<float> c(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int x = 0; x < k; ++x)
        sum += double(a[std::size_t(i) * k + x]) * b[std::size_t(j) * k + x];
      c[std::size_t(i) * n + j] = static_cast<float>(sum);
    }
  return c;
}

class BundleOnGpu : public test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    daemon_ = std::make_unique<harness::DaemonProcess>(
        test::binary_dir() / "kerntuned", dir_.path() / "kerntune.db",
        dir_.path() / "kerntuned.log",
        std::vector<std::string>{"--families", (test::source_dir() / "kernel_templates").string(),
                                 "--worker", (test::binary_dir() / "kerntune-worker").string(),
                                 "--compile-threads", "8"});
    daemon_->wait_healthy(180s);
    client_ = std::make_unique<Client>(daemon_->url(), 60s);
  }

  // Tunes the problem (a small budget) and waits for the job.
  void tune(const std::string& family, const Shape& shape) {
    JobSpec spec;
    spec.family = family;
    spec.shape = shape;
    spec.dtype = "bf16";
    spec.budget = 6;
    const std::int64_t id = client_->submit_job(spec).at("id").get<std::int64_t>();
    const auto deadline = std::chrono::steady_clock::now() + 300s;
    for (;;) {
      const nlohmann::json job = client_->job(id);
      const std::string status = job["status"];
      if (status == "done") return;
      ASSERT_TRUE(status == "queued" || status == "running") << job.dump(2) << daemon_->log_tail();
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "job " << id << " still " << status;
      std::this_thread::sleep_for(250ms);
    }
  }

  // The loaded kernel of the problem, from the bundle alone (our best variant where the baseline
  // won, so every family's loader path runs).
  kerntune::Kernel load(const kerntune::Bundle& bundle, const std::string& family,
                        const Shape& shape) {
    const kerntune::Lookup found =
        bundle.find(family, shape, "bf16", kerntune::device_name(0), kerntune::driver_version(),
                    /*accept_baseline_wins=*/true);
    if (!found.entry) throw std::runtime_error(family + ": " + found.refused);
    return kerntune::Kernel::load(bundle, *found.entry, 0);
  }

  test::TempDir dir_;
  std::unique_ptr<harness::DaemonProcess> daemon_;
  std::unique_ptr<Client> client_;
};

TEST_F(BundleOnGpu, EachFamilysKernelLaunchesFromTheBundleAndComputesTheReference) {
  const Shape gemm{{"M", 16}, {"N", 1024}, {"K", 4097}};
  const Shape dual{{"G", 1}, {"M", 40}, {"N", 512}, {"K", 256}};
  const Shape attention{{"B", 1}, {"H", 2}, {"S", 129}, {"D", 64}, {"CAUSAL", 1}};
  tune("gemm", gemm);
  tune("dual_gemm_silu", dual);
  tune("attention_fwd", attention);

  // Exported as `kerntune export --bundle` does, from a shapes file of the three problems.
  const std::filesystem::path shapes = dir_.path() / "shapes.jsonl";
  {
    std::ofstream out(shapes);
    for (const auto& [family, shape] : std::vector<std::pair<std::string, Shape>>{
             {"gemm", gemm}, {"dual_gemm_silu", dual}, {"attention_fwd", attention}})
      out << nlohmann::json{{"family", family},
                            {"shape", shape},
                            {"dtype", "bf16"},
                            {"supported", true}}
                 .dump()
          << "\n";
  }
  std::ostringstream out, err;
  const CliContext ctx{*client_, out, err, false, false};
  ASSERT_EQ(run_export_bundle(ctx, {(dir_.path() / "bundle").string(), shapes.string(), {}}),
            kExitOk)
      << err.str();
  daemon_->stop();  // from here on the bundle alone
  const kerntune::Bundle bundle = kerntune::Bundle::open((dir_.path() / "bundle").string());
  ASSERT_EQ(bundle.entries().size(), 3u) << out.str();
  std::mt19937 rng(7);

  {  // gemm: C = A B^T, K = 4097 (unaligned: TMA's zero fill or the plain loads' tail)
    const int m = 16, n = 1024, k = 4097;
    HostTensor a(std::size_t(m) * k, rng), b(std::size_t(n) * k, rng);
    DeviceBuffer da(a.bits.size() * 2), db(b.bits.size() * 2), dc(std::size_t(m) * n * 2);
    da.upload(a.bits);
    db.upload(b.bits);
    const kerntune::Kernel kernel = load(bundle, "gemm", gemm);
    kernel.launch({{"A", da.address()}, {"B", db.address()}, {"C", dc.address()}}, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const double error =
        relative_l2(dc.download_bf16(), gemm_reference(a.values, b.values, m, n, k));
    EXPECT_LT(error, 8e-3) << kernel.plan().entry;
  }
  {  // dual GEMM: C = silu(A B1^T) * (A B2^T)
    const int m = 40, n = 512, k = 256;
    HostTensor a(std::size_t(m) * k, rng), b1(std::size_t(n) * k, rng), b2(std::size_t(n) * k, rng);
    DeviceBuffer da(a.bits.size() * 2), db1(b1.bits.size() * 2), db2(b2.bits.size() * 2),
        dc(std::size_t(m) * n * 2);
    da.upload(a.bits);
    db1.upload(b1.bits);
    db2.upload(b2.bits);
    const kerntune::Kernel kernel = load(bundle, "dual_gemm_silu", dual);
    kernel.launch(
        {{"A", da.address()}, {"B1", db1.address()}, {"B2", db2.address()}, {"C", dc.address()}},
        nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<float> gate = gemm_reference(a.values, b1.values, m, n, k);
    std::vector<float> want = gemm_reference(a.values, b2.values, m, n, k);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] *= gate[i] / (1.0f + std::exp(-gate[i]));
    EXPECT_LT(relative_l2(dc.download_bf16(), want), 8e-3) << kernel.plan().entry;
  }
  {  // attention: causal softmax(Q K^T / sqrt(D)) V per head
    const int heads = 2, s = 129, d = 64;
    const std::size_t n = std::size_t(heads) * s * d;
    HostTensor q(n, rng), kk(n, rng), v(n, rng);
    DeviceBuffer dq(n * 2), dk(n * 2), dv(n * 2), dout(n * 2);
    float* lse = nullptr;
    ASSERT_EQ(cudaMalloc(&lse, std::size_t(heads) * s * sizeof(float)), cudaSuccess);
    dq.upload(q.bits);
    dk.upload(kk.bits);
    dv.upload(v.bits);
    const kerntune::Kernel kernel = load(bundle, "attention_fwd", attention);
    kernel.launch({{"Q", dq.address()},
                   {"K", dk.address()},
                   {"V", dv.address()},
                   {"O", dout.address()},
                   {"LSE", reinterpret_cast<CUdeviceptr>(lse)}},
                  nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(lse);
    std::vector<float> want(n);
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < s; ++i) {
        std::vector<double> p(i + 1);
        double top = -INFINITY, sum = 0;
        for (int j = 0; j <= i; ++j) {
          double dot = 0;
          for (int x = 0; x < d; ++x)
            dot += double(q.values[(std::size_t(h) * s + i) * d + x]) *
                   kk.values[(std::size_t(h) * s + j) * d + x];
          p[j] = dot / std::sqrt(double(d));
          top = std::max(top, p[j]);
        }
        for (double& e : p) sum += (e = std::exp(e - top));
        for (int x = 0; x < d; ++x) {
          double o = 0;
          for (int j = 0; j <= i; ++j) o += p[j] / sum * v.values[(std::size_t(h) * s + j) * d + x];
          want[(std::size_t(h) * s + i) * d + x] = static_cast<float>(o);
        }
      }
    EXPECT_LT(relative_l2(dout.download_bf16(), want), 8e-3) << kernel.plan().entry;
  }
}

}  // namespace
}  // namespace kt
