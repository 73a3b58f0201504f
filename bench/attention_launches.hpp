// The argument file of bench/sdpa_baseline.py: for each attention shape, the tuning job's
// candidates as the worker launches them (cubin, kernel name, buffers, kernel arguments in
// manifest order with tensor maps described, grid/block/cluster/dynamic shared memory), evaluated
// here with the tuner library from the family manifest for the daemon's device limits, and the
// family's tolerance for the output check (its magnitude term at its largest for inputs in
// [-1, 1], c * u, folded into atol: the script computes no magnitude).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/attention_report.hpp"
#include "tuner/device_limits.hpp"
#include "tuner/family.hpp"

namespace kt::bench {

struct LaunchCandidate {
  std::int64_t variant_id = 0;
  nlohmann::json config;  // {"template": name, axis: value, ...} as the daemon lists it
  std::filesystem::path cubin;
};

// {"key":"BxHxSxD[c]","dtype","B","H","S","D","causal","flops","tolerance":{"atol","rtol",
// "rel_l2"},"candidates":[{"variant_id","config","template","kernel","cubin","buffers":[{"name",
// "role","dtype","elements"}],"args":[{"kind":"buffer"|"i32"|"i64"|"f32"|"tensor_map",...}],
// "launch":{"grid","block","cluster","dynamic_smem"}}]}. Throws std::invalid_argument for a
// template the family does not have, and the tuner's errors for a config it cannot evaluate.
nlohmann::json attention_launch_entry(const Family& family, const AttentionShape& shape,
                                      const std::string& dtype, const DeviceLimits& limits,
                                      const std::vector<LaunchCandidate>& candidates);

// The whole file: {"format":"kerntune-sdpa-launches/1","device","shapes":[entries]}.
nlohmann::json sdpa_launch_file(const std::string& device,
                                const std::vector<nlohmann::json>& shapes);

}  // namespace kt::bench
