#include "worker/cuda_module.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "worker/driver_api.hpp"

namespace kt::cuda {

Module::Module(const void* image) {
  KT_CU(cuModuleLoadData, &module_, image);
}

Module::~Module() {
  unload();
}

Module::Module(Module&& other) noexcept : module_(std::exchange(other.module_, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload();
    module_ = std::exchange(other.module_, nullptr);
  }
  return *this;
}

CUfunction Module::function(const std::string& name) const {
  CUfunction function = nullptr;
  KT_CU(cuModuleGetFunction, &function, module_, name.c_str());
  return function;
}

void Module::unload() noexcept {
  if (module_ == nullptr) return;
  driver().cuModuleUnload(module_);  // fails harmlessly on a context lost to a sticky error
  module_ = nullptr;
}

std::vector<char> read_binary_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  if (bytes.empty()) throw std::runtime_error(path + " is empty");
  return bytes;
}

}  // namespace kt::cuda
