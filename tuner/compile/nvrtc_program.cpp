#include "tuner/compile/nvrtc_program.hpp"

#include <nvrtc.h>

namespace kt {
namespace {

void check_nvrtc(nvrtcResult result, const char* call) {
  if (result != NVRTC_SUCCESS)
    throw NvrtcError(std::string(call) + " failed: " + nvrtcGetErrorString(result));
}

}  // namespace

NvrtcProgram::NvrtcProgram(const std::string& source, const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const auto& [header_name, text] : headers) {
    header_names.push_back(header_name.c_str());
    header_texts.push_back(text.c_str());
  }
  check_nvrtc(
      nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                         header_texts.data(), header_names.data()),
      "nvrtcCreateProgram");
}

NvrtcProgram::~NvrtcProgram() {
  // Destruction cannot report; nvrtcDestroyProgram only fails on an invalid handle.
  if (program_ != nullptr) nvrtcDestroyProgram(&program_);
}

NvrtcProgram::NvrtcProgram(NvrtcProgram&& other) noexcept
    : program_(std::exchange(other.program_, nullptr)) {}

NvrtcProgram& NvrtcProgram::operator=(NvrtcProgram&& other) noexcept {
  if (this != &other) {
    if (program_ != nullptr) nvrtcDestroyProgram(&program_);
    program_ = std::exchange(other.program_, nullptr);
  }
  return *this;
}

std::string NvrtcProgram::compile(const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(program_, static_cast<int>(argv.size()), argv.data());
  return result == NVRTC_SUCCESS ? std::string() : nvrtcGetErrorString(result);
}

std::string NvrtcProgram::log() const {
  std::size_t size = 0;
  check_nvrtc(nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize");
  std::string text(size, '\0');
  if (size > 0) check_nvrtc(nvrtcGetProgramLog(program_, text.data()), "nvrtcGetProgramLog");
  while (!text.empty() && text.back() == '\0') text.pop_back();  // the size counts the NUL
  return text;
}

std::vector<char> NvrtcProgram::cubin() const {
  std::size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(program_, &size), "nvrtcGetCUBINSize");
  std::vector<char> bytes(size);
  if (size > 0) check_nvrtc(nvrtcGetCUBIN(program_, bytes.data()), "nvrtcGetCUBIN");
  return bytes;
}

}  // namespace kt
