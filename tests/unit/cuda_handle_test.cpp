// The move-only owner every CUDA handle class is built on (worker/cuda_handle.hpp), on a fake
// handle: each handle is released exactly once, whoever ends up owning it.
#include "worker/cuda_handle.hpp"

#include <vector>

#include <gtest/gtest.h>

namespace kt::cuda {
namespace {

std::vector<int>& released() {
  static std::vector<int> handles;
  return handles;
}

struct ReleaseFake {
  void operator()(int handle) const noexcept { released().push_back(handle); }
};
using FakeHandle = UniqueHandle<int, ReleaseFake>;

TEST(UniqueHandle, ReleasesOnceWhoeverOwnsIt) {
  released().clear();
  {
    FakeHandle a(7);
    EXPECT_TRUE(a);
    FakeHandle b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from owns nothing
    EXPECT_EQ(b.get(), 7);
    FakeHandle c(9);
    c = std::move(b);  // 9 goes now, 7 moves on
    EXPECT_EQ(released(), std::vector<int>{9});
    EXPECT_EQ(c.get(), 7);
  }
  EXPECT_EQ(released(), (std::vector<int>{9, 7}));

  FakeHandle empty;
  EXPECT_FALSE(empty);
  empty.reset();
  EXPECT_EQ(released().size(), 2u);  // nothing owned, nothing released
}

}  // namespace
}  // namespace kt::cuda
