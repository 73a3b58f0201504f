#include "support/test_family.hpp"

#include <fstream>
#include <stdexcept>

namespace kt::test {
namespace {

void write_file(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace

nlohmann::ordered_json tiny_family_manifest() {
  // Axes deliberately not in alphabetical order: enumeration must follow the manifest.
  return nlohmann::ordered_json::parse(R"json({
    "name": "tiny",
    "description": "Y = X * 0.5",
    "_comment": "keys starting with _ are comments",
    "dims": {"M": {"min": 1, "max": 1048576, "description": "rows"}, "N": {"min": 1, "max": 4096}},
    "dtypes": ["bf16", "fp16"],
    "shape_constraints": ["M*N <= 2^24"],
    "smoke_shape": {"M": 7, "N": 5},
    "flops": "M*N",
    "bytes": "2*M*N*elem_bytes",
    "buffers": [
      {"name": "X", "role": "input", "dtype": "in", "elements": "M*N"},
      {"name": "Y", "role": "output", "dtype": "in", "elements": "M*N"},
      {"name": "ws", "role": "scratch", "dtype": "f32", "elements": "SPLIT > 1 ? M*SPLIT : 1"}
    ],
    "args": [{"buffer": "Y"}, {"buffer": "X"}, {"i32": "M"}, {"i64": "M*N"}, {"f32": "0.5"}],
    "reference": {"kind": "cublas_gemm", "a": "X", "b": "X", "c": "Y", "m": "M", "n": "N",
                  "k": "1", "transposed": false},
    "tolerance": {"bf16": {"atol": 0.03125, "rtol": 0.0078125, "rel_l2": 0.0078125},
                  "fp16": {"atol": 0.03125, "rtol": 0.0009765625, "rel_l2": 0.0009765625}},
    "templates": [
      {
        "name": "simple",
        "source": "tiny.cuh",
        "kernel": "kt_tiny",
        "archs": ["sm_80", "sm_90a", "sm_100a"],
        "axes": {
          "TILE": {"values": [32, 64, 128], "description": "elements per block"},
          "SPLIT": {"values": [1, 2]},
          "CLUSTER": {"values": [1, 2], "archs": ["sm_90a", "sm_100a"]}
        },
        "constraints": ["TILE*SPLIT <= 128", "TILE*elem_bytes*1024 <= smem_optin"],
        "launch": {"grid": ["cdiv(M, TILE)", "N", "SPLIT"], "block": ["TILE", 1, 1],
                   "cluster": ["1", "1", "1"], "dynamic_smem": "TILE*elem_bytes"},
        "options": ["-lineinfo"]
      },
      {
        "name": "blackwell_only",
        "source": "tiny.cuh",
        "kernel": "kt_tiny",
        "archs": ["sm_100a"],
        "axes": {"TILE": {"values": [256]}, "SPLIT": {"values": [1]}},
        "launch": {"grid": ["cdiv(M, TILE)", "N", "1"], "block": ["TILE", "1", "1"]}
      }
    ]
  })json");
}

void write_tiny_family(const std::filesystem::path& dir, const nlohmann::ordered_json& manifest) {
  std::filesystem::create_directories(dir);
  write_file(dir / "manifest.json", manifest.dump(2));
  write_file(dir / "tiny_common.h", "#pragma once\n#define KT_HALF 0.5f\n");
  write_file(dir / "tiny.cuh", R"cuda(#include "tiny_common.h"
extern "C" __global__ void kt_tiny(float* y, const float* x, int m, long long n, float scale) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * scale * (KT_HALF * 2);
}
)cuda");
  write_file(dir / "notes.txt", "not a source\n");
}

}  // namespace kt::test
