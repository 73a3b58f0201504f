#include "client/cli_hints.hpp"

#include <utility>

namespace kt {

std::string with_cli_hints(std::string message) {
  static const std::pair<const char*, const char*> kHints[] = {
      {"nearest=1", "--nearest"},
      {"tune_on_miss=1", "--tune-on-miss"},
      {"retune_stale=1", "--retune-stale"},
      {"use \"mode\":\"compile\" with \"arch\"",
       "use --mode compile --arch sm_90a (or another arch)"},
  };
  for (const auto& [api, cli] : kHints)
    for (std::size_t at = message.find(api); at != std::string::npos;
         at = message.find(api, at + std::string(cli).size()))
      message.replace(at, std::string(api).size(), cli);
  return message;
}

}  // namespace kt
