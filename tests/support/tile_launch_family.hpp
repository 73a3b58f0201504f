// A family built in code whose launches are easy to count, for tests of what a searcher is told
// about grids: one template of cdiv(N,BN) x cdiv(M,BM) blocks of 128 threads with
// STAGES x (BM+BN) x 64 elements of shared memory, GEMM's flops and bytes.
#pragma once

#include <string>

#include "tuner/family.hpp"

namespace kt::test {

inline Family tile_launch_family(const std::string& family_name, const std::string& template_name) {
  Family family;
  family.name = family_name;
  family.flops = "2*M*N*K";
  family.bytes = "(M*K + N*K + M*N) * elem_bytes";
  TemplateSpec tmpl;
  tmpl.name = template_name;
  tmpl.launch.grid = {"cdiv(N,BN)", "cdiv(M,BM)", "1"};
  tmpl.launch.block = {"128", "1", "1"};
  tmpl.launch.dynamic_smem = "STAGES*(BM+BN)*64*elem_bytes";
  family.templates.push_back(tmpl);
  return family;
}

}  // namespace kt::test
