#include "fuzz/fuzz_app.hpp"

#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "support/test_paths.hpp"
#include "tuner/family.hpp"

namespace kt::fuzz {
namespace {

DeviceInfo fake_gpu(int ordinal, const std::string& name, int sm_major, const std::string& arch) {
  DeviceInfo device;
  device.ordinal = ordinal;
  device.name = name;
  device.uuid = "GPU-fuzz-" + std::to_string(ordinal);
  device.sm_major = sm_major;
  device.arch = arch;
  device.sm_count = sm_major == 9 ? 132 : 148;
  device.memory_bytes = 80ll << 30;
  device.l2_bytes = 50ll << 20;
  device.smem_per_block_optin = 232448;
  device.smem_per_sm = 233472;
  device.max_threads_per_block = 1024;
  device.regs_per_block = 65536;
  return device;
}

std::vector<DeviceInfo> fake_gpus() {
  return {fake_gpu(0, "NVIDIA H100 80GB HBM3", 9, "sm_90a"),
          fake_gpu(1, "NVIDIA H100 80GB HBM3", 9, "sm_90a"),
          fake_gpu(2, "NVIDIA B200", 10, "sm_100a")};
}

FamilyRegistry shipped_families() {
  FamilyRegistry registry;
  registry.load_root(test::source_dir() / "kernel_templates");
  return registry;
}

SchedulerOptions inert_scheduler_options(const std::filesystem::path& dir) {
  SchedulerOptions options;
  options.worker_exe = dir / "no-worker";  // never started: the scheduler is never started
  options.work_dir = dir / "work";
  options.compile_threads = 1;  // an idle pool thread; nothing is ever queued on it
  return options;
}

// Job 1 as the runner leaves a finished tune job: three variants (measured with its kernel,
// compile error, pruned) and the measured one on the Pareto front.
void add_finished_job(Store& store, const DeviceInfo& device) {
  store.upsert_device(device);
  NewJob job;
  job.family = "gemm";
  job.shape = {{"M", 256}, {"N", 256}, {"K", 128}};
  job.dtype = "bf16";
  job.arch = device.arch;
  job.device_uuid = device.uuid;
  job.device_name = device.name;
  const std::int64_t id = store.create_job(job);
  store.set_job_reference(id, 150.0);
  std::vector<VariantRecord> planned(3);
  for (std::size_t i = 0; i < planned.size(); ++i) {
    planned[i].template_name = "mma_multistage";
    planned[i].config = {{"BM", 64 << i}, {"BN", 128}};
    planned[i].config_key = canonical_key(planned[i].config);
  }
  const auto rows = store.plan_variants(id, planned);

  KernelBlob blob;
  blob.key = "fuzz-kernel";
  blob.arch = device.arch;
  blob.kernel = "gemm_kernel";
  blob.cubin = {'\x7f', 'E', 'L', 'F'};
  store.put_kernel(blob);
  CompileResult compiled;
  compiled.ok = true;
  compiled.key = blob.key;
  compiled.resources.registers = 168;
  store.record_compile(rows[0].id, compiled, 256, 49152);
  VariantOutcome measured;
  measured.status = VariantStatus::measured;
  measured.timing = TimingSummary{};
  measured.timing->median_us = 100.0;
  measured.error = ErrorSummary{};
  store.record_outcome(rows[0].id, measured);

  VariantOutcome failed;
  failed.status = VariantStatus::compile_error;
  failed.failed_gate = "compile";
  failed.reason = "error: identifier \"x\" is undefined";
  store.record_outcome(rows[1].id, failed);
  VariantOutcome pruned;
  pruned.status = VariantStatus::pruned;
  pruned.failed_gate = "constraints";
  pruned.reason = "constraint failed: BM <= 128";
  store.record_outcome(rows[2].id, pruned);
  store.set_job_status(id, JobStatus::done);
}

// Logging off before anything logs: the router logs every 500, which the fuzzers report anyway,
// and a line per run would slow them down.
struct QuietLogs {
  QuietLogs() { spdlog::set_level(spdlog::level::off); }
};

// Members in construction order; destroying them stops nothing (nothing was started) and removes
// the folder with the database.
struct FuzzApp {
  QuietLogs quiet;
  test::TempDir dir;
  Store store{dir.path() / "kerntune.db"};
  FamilyRegistry families = shipped_families();
  JobScheduler scheduler{store, families, inert_scheduler_options(dir.path()), fake_gpus()};
  AppContext context{store, families, scheduler, fake_gpus(), ""};

  FuzzApp() { add_finished_job(store, context.devices.front()); }
};

}  // namespace

AppContext& app_context() {
  static FuzzApp app;
  return app.context;
}

}  // namespace kt::fuzz
