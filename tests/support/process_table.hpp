// What /proc says about other processes, for the daemon-level tests that look at a daemon's
// children (its compile processes): which it has, how they are scheduled, whether they still run.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace kt::test {

// The children of `parent` whose command line holds the argument `arg` (e.g. "--compile").
std::vector<pid_t> children_with_argument(pid_t parent, const std::string& arg);

// (policy, nice) of each of the process's threads, from /proc/PID/task/*/stat.
std::vector<std::pair<int, int>> thread_scheduling(pid_t pid);

// False once the process is gone or a zombie (a container's init may never reap it).
bool process_running(pid_t pid);

}  // namespace kt::test
