#include "tuner/client_values.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace kt {

std::string quote_client_text(std::string_view text) {
  std::size_t cut = std::min(text.size(), kQuotedPrefixChars);
  // Back up to the start of a UTF-8 sequence so the prefix does not end in half a character.
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  const std::string escaped = nlohmann::json(std::string(text.substr(0, cut)))
                                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string quoted = "'" + escaped.substr(1, escaped.size() - 2) + "'";
  if (cut < text.size()) quoted += "... (" + std::to_string(text.size()) + " bytes)";
  return quoted;
}

}  // namespace kt
