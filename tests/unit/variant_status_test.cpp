#include "tuner/variant_status.hpp"

#include <set>

#include <gtest/gtest.h>

namespace kt {
namespace {

constexpr VariantStatus kAllVariantStatuses[] = {
    VariantStatus::pending,           VariantStatus::pruned,
    VariantStatus::unsupported_arch,  VariantStatus::compile_error,
    VariantStatus::resource_exceeded, VariantStatus::launch_failed,
    VariantStatus::illegal_access,    VariantStatus::hang,
    VariantStatus::crashed,           VariantStatus::wrong_result,
    VariantStatus::measured,          VariantStatus::compiled,
    VariantStatus::cancelled};

TEST(VariantStatus, EveryStateHasADistinctNameThatRoundTrips) {
  std::set<std::string_view> names;
  for (VariantStatus status : kAllVariantStatuses) {
    const std::string_view name = to_string(status);
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(variant_status_from_string(name), status) << name;
  }
  EXPECT_EQ(names.size(), 13u);
  EXPECT_EQ(to_string(VariantStatus::unsupported_arch), "unsupported_arch");
  EXPECT_EQ(to_string(VariantStatus::wrong_result), "wrong_result");
  EXPECT_EQ(to_string(VariantStatus::compiled), "compiled");
}

TEST(VariantStatus, UnknownTextIsNullopt) {
  EXPECT_EQ(variant_status_from_string("Measured"), std::nullopt);
  EXPECT_EQ(variant_status_from_string(""), std::nullopt);
  EXPECT_EQ(variant_status_from_string("done"), std::nullopt);
}

TEST(VariantStatus, OnlyPendingIsNotFinal) {
  for (VariantStatus status : kAllVariantStatuses)
    EXPECT_EQ(is_final(status), status != VariantStatus::pending) << to_string(status);
}

TEST(JobStatus, NamesMatchTheApi) {
  const std::pair<JobStatus, std::string_view> expected[] = {{JobStatus::queued, "queued"},
                                                             {JobStatus::running, "running"},
                                                             {JobStatus::done, "done"},
                                                             {JobStatus::failed, "failed"},
                                                             {JobStatus::cancelled, "cancelled"}};
  for (const auto& [status, name] : expected) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(job_status_from_string(name), status);
  }
  EXPECT_EQ(job_status_from_string("pending"), std::nullopt);
  EXPECT_EQ(job_status_from_string("DONE"), std::nullopt);
}

}  // namespace
}  // namespace kt
