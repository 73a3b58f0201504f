// The current UTC time as text, strftime-formatted: ISO 8601 by default ("2026-12-02T06:47:19Z").
#pragma once

#include <string>

namespace kt {

std::string utc_now_text(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace kt
