#include "tuner/variant_status.hpp"

#include <array>
#include <utility>

namespace kt {
namespace {

constexpr std::array<std::pair<VariantStatus, std::string_view>, 13> kVariantNames{{
    {VariantStatus::pending, "pending"},
    {VariantStatus::pruned, "pruned"},
    {VariantStatus::unsupported_arch, "unsupported_arch"},
    {VariantStatus::compile_error, "compile_error"},
    {VariantStatus::resource_exceeded, "resource_exceeded"},
    {VariantStatus::launch_failed, "launch_failed"},
    {VariantStatus::illegal_access, "illegal_access"},
    {VariantStatus::hang, "hang"},
    {VariantStatus::crashed, "crashed"},
    {VariantStatus::wrong_result, "wrong_result"},
    {VariantStatus::measured, "measured"},
    {VariantStatus::compiled, "compiled"},
    {VariantStatus::cancelled, "cancelled"},
}};

constexpr std::array<std::pair<JobStatus, std::string_view>, 5> kJobNames{{
    {JobStatus::queued, "queued"},
    {JobStatus::running, "running"},
    {JobStatus::done, "done"},
    {JobStatus::failed, "failed"},
    {JobStatus::cancelled, "cancelled"},
}};

}  // namespace

std::string_view to_string(VariantStatus status) {
  for (const auto& [value, name] : kVariantNames)
    if (value == status) return name;
  return "unknown";
}

std::optional<VariantStatus> variant_status_from_string(std::string_view text) {
  for (const auto& [value, name] : kVariantNames)
    if (name == text) return value;
  return std::nullopt;
}

bool is_final(VariantStatus status) {
  return status != VariantStatus::pending;
}

std::string_view to_string(JobStatus status) {
  for (const auto& [value, name] : kJobNames)
    if (value == status) return name;
  return "unknown";
}

std::optional<JobStatus> job_status_from_string(std::string_view text) {
  for (const auto& [value, name] : kJobNames)
    if (name == text) return value;
  return std::nullopt;
}

}  // namespace kt
