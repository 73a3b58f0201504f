#include "engine/compile_queue.hpp"

#include <utility>

namespace kt {

void drain(CompileQueue& compiling) noexcept {
  for (auto& future : compiling)
    if (future.valid()) future.wait();
  compiling.clear();
}

CompiledVariant take_front(CompileQueue& compiling) {
  std::future<CompiledVariant> front = std::move(compiling.front());
  compiling.pop_front();
  return front.get();
}

}  // namespace kt
