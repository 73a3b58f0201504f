#include "bench/bench_session.hpp"

#include <cstdio>
#include <ostream>
#include <stdexcept>

#include "bench/output_files.hpp"
#include "bench/text_format.hpp"

namespace kt::bench {

CopyBandwidthInfo copy_bandwidth_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("gbps") || !j.at("gbps").is_number() ||
      !(j.at("gbps").get<double>() > 0))
    throw std::invalid_argument("the copy bandwidth JSON has no positive \"gbps\"");
  CopyBandwidthInfo info;
  info.gbps = j.at("gbps").get<double>();
  info.device = j.value("device", std::string());
  info.driver = j.value("driver", std::string());
  if (info.driver.empty() && j.contains("cuda_driver") && j.at("cuda_driver").is_string())
    info.driver = "CUDA " + j.at("cuda_driver").get<std::string>();  // no kernel module version
  return info;
}

std::optional<CopyBandwidthInfo> run_copy_bandwidth_program(const std::string& device,
                                                            std::ostream& log) {
  std::string command = (program_dir() / "kt-copy-bandwidth").string();
  if (!device.empty() && device.find_first_not_of("0123456789") == std::string::npos)
    command += " --device " + device;
  log << "copy bandwidth: running " << command << std::endl;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    log << "copy bandwidth: cannot start " << command << std::endl;
    return std::nullopt;
  }
  std::string output;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  try {
    if (status != 0) throw std::runtime_error("exit status " + std::to_string(status));
    return copy_bandwidth_from_json(nlohmann::json::parse(output));
  } catch (const std::exception& error) {
    log << "copy bandwidth: not measured (" << error.what() << "): " << output << std::endl;
    return std::nullopt;
  }
}

std::optional<CopyBandwidthInfo> copy_bandwidth_for_run(double copy_gbps,
                                                        const std::filesystem::path& copy_json,
                                                        const std::string& device,
                                                        std::ostream& log) {
  std::optional<CopyBandwidthInfo> copy;
  if (copy_gbps > 0) {
    copy = CopyBandwidthInfo{copy_gbps, "", ""};
  } else if (!copy_json.empty()) {
    copy = copy_bandwidth_from_json(nlohmann::json::parse(read_text_file(copy_json)));
  } else {
    copy = run_copy_bandwidth_program(device, log);
  }
  if (copy) log << "copy bandwidth: " << format_fixed(copy->gbps, 0) << " GB/s" << std::endl;
  return copy;
}

DaemonDevice daemon_device(const kt::Client& client) {
  DaemonDevice device;
  const nlohmann::json answer = client.devices();
  const nlohmann::json devices = answer.value("devices", nlohmann::json::array());
  if (!devices.is_array() || devices.empty() || !devices.front().is_object()) return device;
  device.info = devices.front();
  device.name = device.info.value("name", std::string());
  if (device.info.contains("driver_version"))
    device.driver = "CUDA driver " + device.info.at("driver_version").dump();
  return device;
}

std::optional<WaitOptions> wait_for_next_job(int poll_ms, double job_timeout_seconds,
                                             double deadline_seconds, double elapsed,
                                             std::ostream& log) {
  WaitOptions wait;
  wait.poll = std::chrono::milliseconds(poll_ms);
  wait.progress = &log;
  wait.timeout_seconds = job_timeout_seconds;
  if (deadline_seconds > 0) {
    const double left = deadline_seconds - elapsed;
    if (left <= 0) return std::nullopt;
    if (wait.timeout_seconds <= 0 || left < wait.timeout_seconds) wait.timeout_seconds = left;
  }
  return wait;
}

std::string deadline_passed_note(double deadline_seconds) {
  return "skipped: the run's time limit (" + format_fixed(deadline_seconds, 0) + " s) had passed";
}

}  // namespace kt::bench
