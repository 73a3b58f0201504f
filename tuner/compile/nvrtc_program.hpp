// Move-only owner of one nvrtcProgram: created from a source and its headers, compiled once, then
// asked for its log and cubin. Every NVRTC call is checked; failures throw NvrtcError.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// nvrtc.h's handle type, declared here so that users of this header need not see NVRTC's headers.
typedef struct _nvrtcProgram* nvrtcProgram;

namespace kt {

class NvrtcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NvrtcProgram {
 public:
  NvrtcProgram(const std::string& source, const std::string& name,
               const std::vector<std::pair<std::string, std::string>>& headers);
  ~NvrtcProgram();
  NvrtcProgram(NvrtcProgram&& other) noexcept;
  NvrtcProgram& operator=(NvrtcProgram&& other) noexcept;
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;

  // Runs nvrtcCompileProgram. Returns "" on success, else the NVRTC error name: compile errors
  // are not exceptions, the log explains them.
  std::string compile(const std::vector<std::string>& options);
  std::string log() const;
  std::vector<char> cubin() const;
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

}  // namespace kt
