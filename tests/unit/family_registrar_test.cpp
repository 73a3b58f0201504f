// The names a client may give a family and its sources: identifiers and flat file names of
// device code, never a path.
#include "engine/family_registrar.hpp"

#include <gtest/gtest.h>

namespace kt {
namespace {

TEST(FamilyRegistrar, FamilyNamesAreIdentifiers) {
  for (const char* good : {"wmma_gemm", "_x", "A1", "gemm2"})
    EXPECT_TRUE(is_safe_family_name(good)) << good;
  for (const char* bad : {"", "1x", "../x", "a/b", "a.b", "a b", "a-b", ".", ".."})
    EXPECT_FALSE(is_safe_family_name(bad)) << bad;
  EXPECT_TRUE(is_safe_family_name(std::string(64, 'a')));
  EXPECT_FALSE(is_safe_family_name(std::string(65, 'a')));
}

TEST(FamilyRegistrar, SourceNamesAreFlatDeviceCodeFiles) {
  for (const char* good : {"k.cuh", "k.cu", "k.h", "wmma_gemm_2.cuh"})
    EXPECT_TRUE(is_safe_source_name(good)) << good;
  for (const char* bad : {"", ".cuh", "k", "k.txt", "k.cuh.sh", "../k.cuh", "a/k.cuh", "k .cuh",
                          "manifest.json", "k.CUH", "k.cuh\n"})
    EXPECT_FALSE(is_safe_source_name(bad)) << bad;
}

}  // namespace
}  // namespace kt
