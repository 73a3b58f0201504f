// parse_ptxas_report (declared in tuner/compile/nvrtc_compiler.hpp). NVRTC 13 prints, per entry:
//   ptxas info    : Compiling entry function 'kt_gemm_mma' for 'sm_90a'
//   ptxas info    : Function properties for kt_gemm_mma
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem
// and "Function properties" blocks of non-inlined device functions, which must not count.
#include <cstdlib>
#include <regex>
#include <sstream>

#include "tuner/compile/nvrtc_compiler.hpp"

namespace kt {
namespace {

// The integer before `suffix` ("(\d+) bytes spill stores"), or fallback if the line lacks it.
int number_before(const std::string& line, const std::regex& pattern, int fallback) {
  std::smatch match;
  if (!std::regex_search(line, match, pattern)) return fallback;
  try {
    return std::stoi(match[1].str());
  } catch (const std::exception&) {
    return fallback;
  }
}

// The quoted name after `marker` ("Compiling entry function 'NAME'"), or the rest of the line.
std::string name_after(const std::string& line, const std::string& marker) {
  std::size_t begin = line.find(marker);
  if (begin == std::string::npos) return {};
  begin += marker.size();
  while (begin < line.size() && line[begin] == ' ') ++begin;
  if (begin < line.size() && line[begin] == '\'') {
    const std::size_t end = line.find('\'', begin + 1);
    return line.substr(begin + 1, end == std::string::npos ? std::string::npos : end - begin - 1);
  }
  std::size_t end = line.find_first_of(" \r", begin);
  return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

ResourceUsage parse_ptxas_report(const std::string& log, const std::string& kernel) {
  static const std::regex kRegisters(R"((\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[\d+\])");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillStores(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLoads(R"((\d+) bytes spill loads)");

  // Unknown until the log names the kernel; ptxas omits "bytes smem" and cmem when they are 0.
  ResourceUsage usage{-1, -1, -1, -1, -1, -1};
  std::string entry;       // the entry function ptxas is compiling
  std::string properties;  // the function the last "Function properties" header named
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      entry = name_after(line, "Compiling entry function");
    } else if (line.find("Function properties for") != std::string::npos) {
      properties = name_after(line, "Function properties for");
    } else if (line.find("bytes stack frame") != std::string::npos) {
      if (properties != kernel) continue;
      usage.stack_frame_bytes = number_before(line, kStack, usage.stack_frame_bytes);
      usage.spill_store_bytes = number_before(line, kSpillStores, usage.spill_store_bytes);
      usage.spill_load_bytes = number_before(line, kSpillLoads, usage.spill_load_bytes);
    } else if (line.find("Used ") != std::string::npos && entry == kernel) {
      usage.registers = number_before(line, kRegisters, usage.registers);
      usage.static_smem_bytes = number_before(line, kSmem, 0);
      // Constant banks add up: cmem[0] holds the parameters, others the program's constants.
      int const_bytes = 0;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), kCmem);
           it != std::sregex_iterator(); ++it)
        const_bytes += static_cast<int>(std::strtol((*it)[1].str().c_str(), nullptr, 10));
      usage.const_bytes = const_bytes;
    }
  }
  return usage;
}

}  // namespace kt
