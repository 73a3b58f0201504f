// The NVIDIA driver's version ("580.159.04"), as the kernel module reports it; the CUDA driver
// API only knows the CUDA version it supports (13000).
#pragma once

#include <string>

namespace kt::bench {

// The first dotted number after "Kernel Module" in /proc/driver/nvidia/version's text
// ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..."); "" if none.
std::string parse_nvidia_version_text(const std::string& text);

// /sys/module/nvidia/version, else /proc/driver/nvidia/version; "" when neither can be read.
std::string nvidia_driver_version();

// 13000 -> "13.0", 12080 -> "12.8".
std::string cuda_version_text(int version);

}  // namespace kt::bench
