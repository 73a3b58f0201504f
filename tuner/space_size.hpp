// How many configurations a template spans, counted without enumerating them, and the cap a
// manifest is held to: planning walks every configuration of the job's arch, so a space of 10^20
// (ten axes of 100 values) would never be planned; the cap keeps any plan to seconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tuner/family.hpp"

namespace kt {

// The most configurations one template may span (the product of its axes' value counts, every
// axis counted whatever arch it applies to): load_family refuses a manifest above it.
inline constexpr std::uint64_t kMaxTemplateConfigs = 10'000'000;

// The exact product of the template's axes' value counts, or nullopt when it exceeds 64 bits.
std::optional<std::uint64_t> template_space_size(const TemplateSpec& tmpl);

// The template's space_size for an API answer: the product, saturated at INT64_MAX so that it
// never wraps whatever the template.
std::int64_t saturated_space_size(const TemplateSpec& tmpl);

// Why the template is refused: "template 'x' has 10^20 configs (100^10); at most 10,000,000 per
// template", or nullopt within kMaxTemplateConfigs.
std::optional<std::string> space_too_large(const TemplateSpec& tmpl);

}  // namespace kt
