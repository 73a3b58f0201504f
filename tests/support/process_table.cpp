#include "support/process_table.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kt::test {
namespace {

// The fields of /proc/<path>/stat after the command's closing parenthesis (field 3, the state,
// first); empty when the process is gone.
std::vector<std::string> stat_fields(const std::filesystem::path& stat_file) {
  std::ifstream stat(stat_file);
  std::string line;
  if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) return {};
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  return {std::istream_iterator<std::string>(fields), {}};
}

}  // namespace

std::vector<pid_t> children_with_argument(pid_t parent, const std::string& arg) {
  std::vector<pid_t> found;
  const std::string wanted = std::string(1, '\0') + arg + std::string(1, '\0');
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto fields = stat_fields(entry.path() / "stat");
    if (fields.size() < 2 || fields[1] != std::to_string(parent)) continue;
    std::ifstream cmdline_file(entry.path() / "cmdline");
    const std::string cmdline{std::istreambuf_iterator<char>(cmdline_file), {}};
    if (cmdline.find(wanted) != std::string::npos)
      found.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return found;
}

std::vector<std::pair<int, int>> thread_scheduling(pid_t pid) {
  std::vector<std::pair<int, int>> threads;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    // Counted from field 3 (state): nice is field 19 and policy field 41 (proc(5)).
    const auto values = stat_fields(task.path() / "stat");
    if (values.size() > 38) threads.emplace_back(std::stoi(values[38]), std::stoi(values[16]));
  }
  return threads;
}

bool process_running(pid_t pid) {
  const auto fields = stat_fields("/proc/" + std::to_string(pid) + "/stat");
  return !fields.empty() && fields[0] != "Z";
}

}  // namespace kt::test
