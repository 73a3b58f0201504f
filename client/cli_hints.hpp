// The daemon's hints name its API (`nearest=1`, `"mode":"compile"`); the CLI shows them as the
// flags that do the same, so that a message says what to type next.
#pragma once

#include <string>

namespace kt {

// The message with each API hint put as the CLI's flags.
std::string with_cli_hints(std::string message);

}  // namespace kt
