// "Did you mean …?" for a mistyped name: the known family, arch, dtype or search it most likely
// meant, by a comparison that ignores case and the separators people drop or add (sm90a for
// sm_90a), then by edit distance, and a few synonyms of the dtypes (bfloat16 for bf16).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kt {

// The one known name nearest to `asked`, or nullopt when none is near enough (at most 1 edit for
// names of up to 4 characters, 2 beyond) or two are equally near.
std::optional<std::string> nearest_name(const std::string& asked,
                                        const std::vector<std::string>& known);

// " (did you mean X?)" for nearest_name's answer, or "".
std::string did_you_mean(const std::string& asked, const std::vector<std::string>& known);

}  // namespace kt
