// Programs the daemon-level tests start (the CLI, a daemon that must refuse to start): output to
// files, a bounded wait for the exit, the files read back. A daemon that should serve is a
// harness::DaemonProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kt::test {

// The file's text; "" if it cannot be read (a program that never wrote it).
std::string read_text(const std::filesystem::path& path);

// Starts argv[0] (a path) with stdout to `out` and stderr to `err` (the same file if equal), in
// this process's environment less KERNTUNE_TOKEN* plus `extra_env` ("NAME=value"); returns the
// pid. std::runtime_error if it cannot be started.
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& out,
            const std::filesystem::path& err, const std::vector<std::string>& extra_env = {});

// The exit code (128 + signal if killed) once the process ends; nullopt if it still runs at the
// limit (it is then killed and reaped, so that no test leaves a child behind).
std::optional<int> wait_exit(pid_t pid, std::chrono::milliseconds limit);

}  // namespace kt::test
