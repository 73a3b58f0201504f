#include "bench/driver_version.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

namespace kt::bench {
namespace {

bool is_version_word(const std::string& word) {
  if (word.empty() || !std::isdigit(static_cast<unsigned char>(word.front()))) return false;
  bool dot = false;
  for (char c : word) {
    if (c == '.')
      dot = true;
    else if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  }
  return dot && word.back() != '.';
}

std::string first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::string parse_nvidia_version_text(const std::string& text) {
  const std::size_t module = text.find("Kernel Module");
  if (module == std::string::npos) return "";
  std::istringstream words(text.substr(module));
  std::string word;
  while (words >> word)
    if (is_version_word(word)) return word;
  return "";
}

std::string nvidia_driver_version() {
  std::string version = first_line("/sys/module/nvidia/version");
  while (!version.empty() && std::isspace(static_cast<unsigned char>(version.back())))
    version.pop_back();
  if (is_version_word(version)) return version;
  return parse_nvidia_version_text(first_line("/proc/driver/nvidia/version"));
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace kt::bench
