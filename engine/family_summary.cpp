#include "engine/family_summary.hpp"

#include "tuner/space_size.hpp"

namespace kt {

FamilySummary family_summary_of(const Family& family) {
  FamilySummary summary;
  summary.baseline = baseline_summary_of(family);
  for (const TemplateSpec& tmpl : family.templates)
    summary.space_sizes.push_back(saturated_space_size(tmpl));
  return summary;
}

}  // namespace kt
