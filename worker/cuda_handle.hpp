// One owned handle (a CUDA stream, event, module, graph, ...): move-only, released by Release when
// the owner goes. The CUDA owners are this plus their create call and their few operations, so
// none of them spells out moves and destruction again. Handle{} is "nothing owned".
#pragma once

#include <utility>

namespace kt::cuda {

template <typename Handle, typename Release>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(Handle handle) noexcept : handle_(handle) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, Handle{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  const Handle& get() const { return handle_; }
  explicit operator bool() const { return !(handle_ == Handle{}); }
  // Releases what is owned now (errors ignored: after a sticky fault releasing is all that's left).
  void reset() noexcept {
    if (handle_ == Handle{}) return;
    Release{}(std::exchange(handle_, Handle{}));
  }

 private:
  Handle handle_{};
};

}  // namespace kt::cuda
