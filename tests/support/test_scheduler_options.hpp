// The scheduler options the tests' in-process daemons start from. Their compiles run at nice +10,
// not at the daemon's default SCHED_IDLE: on a 2-core CI machine running two tests at once,
// idle-only compiles could wait as long as the other test keeps both cores busy. The tests'
// kerntuned processes get the same through KERNTUNE_COMPILE_NICE (tests/CMakeLists.txt).
#pragma once

#include "engine/job_runner.hpp"

namespace kt::test {

inline constexpr int kDaemonTestCompileNice = 10;

inline SchedulerOptions test_scheduler_options() {
  SchedulerOptions options;
  options.compile_nice = kDaemonTestCompileNice;
  return options;
}

}  // namespace kt::test
