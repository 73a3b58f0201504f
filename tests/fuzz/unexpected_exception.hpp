// The fuzz targets' one verdict beyond the sanitizers: an exception of a type the code under test
// does not document. Aborting makes libFuzzer keep the input and report it as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

namespace kt::fuzz {

[[noreturn]] inline void abort_unexpected(const char* target, const std::exception& error) {
  std::fprintf(stderr, "%s: undocumented exception %s: %s\n", target, typeid(error).name(),
               error.what());
  std::abort();
}

[[noreturn]] inline void abort_unexpected(const char* target) {
  std::fprintf(stderr, "%s: undocumented exception not derived from std::exception\n", target);
  std::abort();
}

}  // namespace kt::fuzz
