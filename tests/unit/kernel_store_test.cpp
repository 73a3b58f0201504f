// The compile cache (db/kernel_store.cpp).
#include "db/store.hpp"

#include <gtest/gtest.h>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class KernelStoreTest : public StoreBackendFixture {};

TEST_P(KernelStoreTest, KernelCacheRoundTripsBinaryBlobs) {
  Store store(db_path());
  EXPECT_FALSE(store.find_kernel("missing"));

  KernelBlob blob;
  blob.key = "abc123";
  blob.arch = "sm_90a";
  blob.kernel = "gemm_mma_kernel";
  blob.nvrtc_version = "13.0";
  blob.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\0', '\x01', '\xff', '\0', 'x'};
  for (int i = 0; i < 5000; ++i) blob.cubin.push_back(static_cast<char>(i % 7 == 0 ? 0 : i));
  blob.log = "ptxas info    : Used 128 registers";
  blob.resources = {128, 4, 8, 16, 32768, 400};
  store.put_kernel(blob);

  auto found = store.find_kernel("abc123");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->cubin, blob.cubin);
  EXPECT_EQ(found->arch, "sm_90a");
  EXPECT_EQ(found->kernel, "gemm_mma_kernel");
  EXPECT_EQ(found->nvrtc_version, "13.0");
  EXPECT_EQ(found->log, blob.log);
  EXPECT_EQ(found->resources.registers, 128);
  EXPECT_EQ(found->resources.spill_store_bytes, 4);
  EXPECT_EQ(found->resources.spill_load_bytes, 8);
  EXPECT_EQ(found->resources.stack_frame_bytes, 16);
  EXPECT_EQ(found->resources.static_smem_bytes, 32768);
  EXPECT_EQ(found->resources.const_bytes, 400);

  blob.cubin = {'\0'};
  blob.log = "second compile";
  store.put_kernel(blob);  // replaces
  found = store.find_kernel("abc123");
  EXPECT_EQ(found->cubin, std::vector<char>{'\0'});
  EXPECT_EQ(found->log, "second compile");

  blob.key = "empty";
  blob.cubin.clear();
  store.put_kernel(blob);
  ASSERT_TRUE(store.find_kernel("empty"));
  EXPECT_TRUE(store.find_kernel("empty")->cubin.empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, KernelStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
