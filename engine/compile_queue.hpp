// Internal to engine/: a job's compile tasks in flight on the compile pool, oldest first.
#pragma once

#include <deque>
#include <future>

#include "engine/job_compile.hpp"

namespace kt {

using CompileQueue = std::deque<std::future<CompiledVariant>>;

// Waits for every task still in the queue. Runs in a destructor, so it must not throw: a future
// without state (already taken by get()) has nothing left to wait for and is skipped, where
// wait() would throw std::future_error.
void drain(CompileQueue& compiling) noexcept;

// The next compiled variant, off the queue before get(): get() releases the future's state even
// when it throws (the task's exception), and a spent future left at the front is one that drain
// could not wait for.
CompiledVariant take_front(CompileQueue& compiling);

// Compile tasks refer to the execution: never leave (even by exception) while one is in flight.
struct DrainOnExit {
  CompileQueue& queue;
  ~DrainOnExit() { drain(queue); }
};

}  // namespace kt
