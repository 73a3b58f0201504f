// What every family's benchmark run does around its jobs: measure the device's copy bandwidth
// with kt-copy-bandwidth (next to the program), ask the daemon which GPU and driver the jobs run
// on, and share one deadline among the jobs (each waits at most the time left).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/job_driver.hpp"
#include "client/kerntune_client.hpp"

namespace kt::bench {

// What the report needs of kt-copy-bandwidth's JSON output.
struct CopyBandwidthInfo {
  double gbps = 0;
  std::string device;
  std::string driver;
};
// Throws std::invalid_argument if "gbps" is missing or not positive.
CopyBandwidthInfo copy_bandwidth_from_json(const nlohmann::json& j);

// kt-copy-bandwidth next to this program, run on `device` when that is an ordinal; nullopt (with
// the reason in the log) when it fails.
std::optional<CopyBandwidthInfo> run_copy_bandwidth_program(const std::string& device,
                                                            std::ostream& log);

// The run's copy bandwidth: copy_gbps when positive, else read from copy_json (kt-copy-bandwidth's
// output) when given, else measured now by run_copy_bandwidth_program; logged when known.
std::optional<CopyBandwidthInfo> copy_bandwidth_for_run(double copy_gbps,
                                                        const std::filesystem::path& copy_json,
                                                        const std::string& device,
                                                        std::ostream& log);

// The daemon's first GPU: name and "CUDA driver <version>"; empty strings when it has none.
struct DaemonDevice {
  std::string name;
  std::string driver;
  nlohmann::json info;  // the device's JSON as GET /v1/devices gives it; null when none
};
DaemonDevice daemon_device(const kt::Client& client);

// How long the next job may run: the job timeout, or less when the run's deadline (0 = none) is
// nearer; nullopt once the deadline has passed.
std::optional<WaitOptions> wait_for_next_job(int poll_ms, double job_timeout_seconds,
                                             double deadline_seconds, double elapsed,
                                             std::ostream& log);
// "skipped: the run's time limit (600 s) had passed"
std::string deadline_passed_note(double deadline_seconds);

}  // namespace kt::bench
