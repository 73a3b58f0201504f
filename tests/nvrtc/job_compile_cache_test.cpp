// A variant's resources are the same whether it was compiled or taken from the compile cache: a
// shipped GEMM variant goes through the runner's path (compile_variant, then record_compiled into
// a real store) once compiled and once from the cache, and a cache row written before resources
// were read from the cubin (0 registers, no ptxas log, as the GPU host stored them) is read again
// from its cubin instead of serving the zeros.
#include <memory>

#include <gtest/gtest.h>

#include "engine/job_compile.hpp"
#include "engine/job_recorder.hpp"
#include "support/child_compiler.hpp"
#include "support/gemm_templates.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

class CompileCacheResources : public test::StoreFixture {
 protected:
  void SetUp() override {
    store_ = std::make_unique<Store>(db_path());
    job_ = *store_->job(store_->create_job(test::tune_job()));
    const auto plans = test::gemm_survivors("mma_multistage_cluster", job_.shape, limits_);
    ASSERT_FALSE(plans.empty());
    VariantRecord planned;
    planned.template_name = plans.front().tmpl->name;
    planned.config = plans.front().config;
    variants_ = store_->plan_variants(job_.id, {planned});
    ASSERT_EQ(variants_.size(), 1u);
  }

  // The compile step exactly as the runner takes it, with the store as the compile cache.
  CompiledVariant compile_and_record() {
    const KernelLookup cached = [&](const std::string& key) { return store_->find_kernel(key); };
    CompiledVariant cv = compile_variant(cached, test::child_compiler(), test::gemm_family(), job_,
                                         variants_[0], limits_);
    record_compiled(*store_, cv);
    return cv;
  }

  const DeviceLimits limits_ = test::gemm_limits("sm_90a");
  std::unique_ptr<Store> store_;
  JobRecord job_;
  std::vector<VariantRecord> variants_;
};

TEST_F(CompileCacheResources, ACachedKernelReportsTheRegistersOfItsCompile) {
  const CompiledVariant first = compile_and_record();
  ASSERT_TRUE(first.compile && first.compile->ok) << first.compile->log;
  ASSERT_FALSE(first.failure) << first.failure->reason;
  EXPECT_FALSE(first.cache_hit);
  const ResourceUsage& compiled = first.compile->resources;
  EXPECT_GT(compiled.registers, 0) << first.compile->log;
  EXPECT_EQ(store_->variant(variants_[0].id)->registers, compiled.registers);

  const CompiledVariant second = compile_and_record();
  ASSERT_TRUE(second.compile && second.compile->ok) << second.compile->log;
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.cubin, first.cubin);
  const ResourceUsage& cached = second.compile->resources;
  EXPECT_EQ(cached.registers, compiled.registers);
  EXPECT_EQ(cached.static_smem_bytes, compiled.static_smem_bytes);
  EXPECT_EQ(cached.stack_frame_bytes, compiled.stack_frame_bytes);
  EXPECT_EQ(cached.spill_store_bytes, compiled.spill_store_bytes);
  EXPECT_EQ(store_->variant(variants_[0].id)->registers, compiled.registers);
}

TEST_F(CompileCacheResources, AnOldCacheRowWithZeroRegistersIsReadAgainFromItsCubin) {
  const CompiledVariant fresh = compile_and_record();
  ASSERT_TRUE(fresh.compile && fresh.compile->ok) << fresh.compile->log;
  const ResourceUsage& compiled = fresh.compile->resources;
  // Without a log, spills are known only where there is no stack frame to spill into.
  const int spills_without_log = compiled.stack_frame_bytes == 0 ? 0 : -1;

  // What the GPU host stored: the cubin, an empty log, and zeros for every resource.
  KernelBlob old_row = *store_->find_kernel(fresh.kernel_key);
  old_row.log.clear();
  old_row.resources = ResourceUsage{};
  store_->put_kernel(old_row);
  ASSERT_EQ(store_->find_kernel(fresh.kernel_key)->resources.registers, 0);

  const CompiledVariant hit = compile_and_record();
  ASSERT_TRUE(hit.compile && hit.compile->ok) << hit.compile->log;
  ASSERT_FALSE(hit.failure) << hit.failure->reason;
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.compile->resources.registers, compiled.registers);
  EXPECT_EQ(hit.compile->resources.static_smem_bytes, compiled.static_smem_bytes);
  EXPECT_EQ(hit.compile->resources.stack_frame_bytes, compiled.stack_frame_bytes);
  EXPECT_EQ(hit.compile->resources.spill_store_bytes, spills_without_log);
  const VariantRecord stored = *store_->variant(variants_[0].id);
  EXPECT_EQ(stored.registers, compiled.registers);
  EXPECT_EQ(stored.spill_bytes, spills_without_log) << "never 0 for unknown";

  // A row whose cubin cannot be read is a failed compile, not a kernel with 0 registers.
  old_row.cubin.assign(old_row.cubin.begin(), old_row.cubin.begin() + 100);
  store_->put_kernel(old_row);
  const CompiledVariant broken = compile_and_record();
  ASSERT_TRUE(broken.compile);
  EXPECT_FALSE(broken.compile->ok);
  ASSERT_TRUE(broken.failure);
  EXPECT_EQ(broken.failure->status, VariantStatus::compile_error);
  EXPECT_NE(broken.failure->reason.find("cubin"), std::string::npos) << broken.failure->reason;
}

}  // namespace
}  // namespace kt
