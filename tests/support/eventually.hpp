// Waiting for a condition instead of sleeping a fixed time: a test that sleeps "long enough" is
// slow on a fast machine and flaky on a loaded one.
#pragma once

#include <chrono>
#include <thread>

namespace kt::test {

// Polls condition() every `poll` until it holds (true) or `within` has passed (false).
template <class Condition>
bool eventually(Condition&& condition, std::chrono::milliseconds within = std::chrono::seconds(60),
                std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace kt::test
