#include "server/launch_view.hpp"

#include "engine/variant_launch.hpp"

namespace kt {

std::optional<nlohmann::json> launch_view(AppContext& context, const JobRecord& job,
                                          const VariantRecord& variant, std::string* why) {
  const Family* family = context.families.find(job.family);
  if (family == nullptr) {
    *why = "family " + job.family + " is no longer loaded";
    return std::nullopt;
  }
  try {
    return variant_launch_json(*family, job, variant, job.arch,
                               launch_limits(job, context.scheduler.devices()));
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
}

}  // namespace kt
