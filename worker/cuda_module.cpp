#include "worker/cuda_module.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "worker/driver_api.hpp"

namespace kt::cuda {

Module::Module(const void* image) {
  CUmodule module = nullptr;
  KT_CU(cuModuleLoadData, &module, image);
  module_ = UniqueHandle<CUmodule, Unload>(module);
}

CUfunction Module::function(const std::string& name) const {
  CUfunction function = nullptr;
  KT_CU(cuModuleGetFunction, &function, get(), name.c_str());
  return function;
}

void Module::Unload::operator()(CUmodule module) const noexcept {
  driver().cuModuleUnload(module);  // fails harmlessly on a context lost to a sticky error
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
