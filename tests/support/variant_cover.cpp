#include "support/variant_cover.hpp"

#include <set>
#include <stdexcept>
#include <utility>

#include <gtest/gtest.h>

namespace kt::test {

const TemplateSpec& template_named(const Family& family, const std::string& name) {
  for (const TemplateSpec& tmpl : family.templates)
    if (tmpl.name == name) return tmpl;
  throw std::runtime_error("family " + family.name + " has no template " + name);
}

std::vector<VariantPlan> survivors(const Family& family, const std::string& name,
                                   const Shape& shape, const std::string& dtype,
                                   const DeviceLimits& limits) {
  std::vector<VariantPlan> out;
  for (VariantPlan& plan : enumerate_variants(family, shape, dtype, limits))
    if (plan.tmpl != nullptr && plan.tmpl->name == name && !plan.unsupported_arch &&
        !plan.pruned_by)
      out.push_back(std::move(plan));
  return out;
}

std::vector<VariantPlan> covering_set(const std::vector<VariantPlan>& plans) {
  std::set<std::pair<std::string, std::int64_t>> seen;
  std::vector<VariantPlan> chosen;
  for (;;) {
    const VariantPlan* best = nullptr;
    std::size_t best_gain = 0;
    for (const VariantPlan& plan : plans) {
      std::size_t gain = 0;
      for (const auto& [axis, value] : plan.config) gain += seen.count({axis, value}) == 0;
      if (gain > best_gain) {
        best_gain = gain;
        best = &plan;
      }
    }
    if (best == nullptr) return chosen;
    for (const auto& [axis, value] : best->config) seen.insert({axis, value});
    chosen.push_back(*best);
  }
}

CompileResult compile_variant(const Family& family, const TemplateSpec& tmpl, const Config& config,
                              const std::string& dtype, const DeviceLimits& limits) {
  CompileResult result = compile_kernel(compile_request(family, tmpl, config, dtype, limits));
  // Every kernel that compiles uses registers: 0 means its resource report was lost (issue 9).
  // The cubin's figures and the ptxas log's must also agree where the log has them.
  if (result.ok) {
    const std::string what =
        tmpl.name + " " + canonical_key(config) + " " + dtype + " for " + limits.arch;
    EXPECT_GT(result.resources.registers, 0) << what << "\n" << result.log;
    EXPECT_EQ(result.log.find("the ptxas log and the cubin disagree"), std::string::npos)
        << what << "\n"
        << result.log;
  }
  return result;
}

void expect_clean_wgmma_compile(const CompileResult& result, const std::string& what) {
  EXPECT_GT(result.resources.registers, 0) << what << "\n" << result.log;
  EXPECT_EQ(result.resources.spill_store_bytes, 0) << what << "\n" << result.log;
  EXPECT_EQ(result.resources.spill_load_bytes, 0) << what << "\n" << result.log;
  EXPECT_EQ(result.resources.stack_frame_bytes, 0) << what << "\n" << result.log;
  EXPECT_EQ(result.resources.static_smem_bytes, 0) << what << ": all shared memory is dynamic";
  EXPECT_EQ(result.log.find("C7508"), std::string::npos) << what << ": ptxas ignored setmaxnreg\n"
                                                         << result.log;
  EXPECT_EQ(result.log.find("serialized"), std::string::npos)
      << what << ": ptxas serialised the wgmma pipeline\n"
      << result.log;
}

DeviceLimits limits_with_sms(const std::string& arch, int sm_count) {
  auto limits = limits_for_arch(arch);
  if (!limits) throw std::runtime_error("no limits for " + arch);
  limits->sm_count = sm_count;
  return *limits;
}

}  // namespace kt::test
