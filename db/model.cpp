#include "db/model.hpp"

#include <utility>

namespace kt {
namespace {

constexpr std::pair<JobMode, std::string_view> kModeNames[] = {
    {JobMode::tune, "tune"},
    {JobMode::compile, "compile"},
    {JobMode::check, "check"},
};
constexpr std::pair<Pipeline, std::string_view> kPipelineNames[] = {
    {Pipeline::pipelined, "pipelined"},
    {Pipeline::serial, "serial"},
};
constexpr std::pair<FamilyRegistrationRecord::Status, std::string_view> kRegistrationNames[] = {
    {FamilyRegistrationRecord::Status::compiling, "compiling"},
    {FamilyRegistrationRecord::Status::registered, "registered"},
    {FamilyRegistrationRecord::Status::failed, "failed"},
};

template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::pair<Enum, std::string_view> (&names)[N]) {
  for (const auto& [known, name] : names)
    if (known == value) return name;
  return "unknown";
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(std::string_view text,
                             const std::pair<Enum, std::string_view> (&names)[N]) {
  for (const auto& [value, name] : names)
    if (name == text) return value;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(JobMode mode) {
  return name_of(mode, kModeNames);
}

std::optional<JobMode> job_mode_from_string(std::string_view text) {
  return value_of(text, kModeNames);
}

std::string_view to_string(Pipeline pipeline) {
  return name_of(pipeline, kPipelineNames);
}

std::optional<Pipeline> pipeline_from_string(std::string_view text) {
  return value_of(text, kPipelineNames);
}

std::optional<std::string> job_baseline_failure(const JobRecord& job) {
  if (!job.baselines.is_object()) return std::nullopt;
  for (const auto& [ordinal, entry] : job.baselines.items())
    if (entry.is_object() && entry.contains("failed") && entry["failed"].is_string())
      return entry["failed"].get<std::string>();
  return std::nullopt;
}

std::string_view to_string(FamilyRegistrationRecord::Status status) {
  return name_of(status, kRegistrationNames);
}

std::optional<FamilyRegistrationRecord::Status> registration_status_from_string(
    std::string_view text) {
  return value_of(text, kRegistrationNames);
}

}  // namespace kt
