// The one state every variant ends in, and the gate that put it there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kt {

enum class VariantStatus {
  pending,            // planned, not yet through the gates
  pruned,             // a manifest constraint rejected it before compiling
  unsupported_arch,   // the template does not target this GPU's architecture
  compile_error,      // NVRTC failed; the log is stored
  resource_exceeded,  // compiled, but needs more registers/smem/threads than the device gives
  launch_failed,      // the launch itself was refused (bad config, cluster not schedulable)
  illegal_access,     // sticky error: the context was lost; the worker was replaced
  hang,               // killed by the watchdog; the worker was replaced
  crashed,            // the worker process died for another reason
  wrong_result,       // ran, but disagreed with the reference (or left NaN/poison)
  measured,           // correct and timed
  compiled,           // compile-only job: compiled and resource-checked, never run
  cancelled,          // the job was cancelled before this variant ran
};

std::string_view to_string(VariantStatus status);
// nullopt for unknown text.
std::optional<VariantStatus> variant_status_from_string(std::string_view text);
// True for every state but pending.
bool is_final(VariantStatus status);

// Job states as the API names them.
enum class JobStatus { queued, running, done, failed, cancelled };
std::string_view to_string(JobStatus status);
std::optional<JobStatus> job_status_from_string(std::string_view text);

}  // namespace kt
