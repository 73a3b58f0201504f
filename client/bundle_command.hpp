// `kerntune export --bundle DIR --shapes SHAPES.jsonl`: the tuned answers of a recorded
// program's problems, written to a folder a deployed program loads without a daemon
// (kerntune.torch.enable(bundle=DIR), or client/runtime's C++ loader): bundle.json (each
// problem's /v1/best answer with its launch description, the family's tolerance and the
// provenance: GPU model, arch, driver, NVRTC, family source hash, final comparison) and the
// cubins under kernels/.
#pragma once

#include <string>
#include <vector>

#include "client/cli_context.hpp"

namespace kt {

inline constexpr const char* kBundleFormat = "kerntune-bundle/1";

struct BundleArgs {
  std::string folder;
  std::string shapes_path;
  std::vector<std::string> devices;  // GPU models; empty = the daemon's GPUs, else every model
                                     // its store has seen
};

int run_export_bundle(const CliContext& ctx, const BundleArgs& args);

// Lower-case hex SHA-256 of the bytes.
std::string sha256_hex(const std::vector<char>& bytes);

}  // namespace kt
