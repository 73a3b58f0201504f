// What Ctrl-C says while the CLI waits on jobs: they go on in the daemon, and how to follow or
// stop them. The words are set before the wait begins; the handler only writes them (write(2) is
// async-signal-safe) and exits with 130, as a shell reports an interrupted command.
#pragma once

#include <string>

namespace kt {

// From now on SIGINT prints `text` on stderr and exits 130. Longer text is cut at 4 KiB.
void set_interrupt_notice(const std::string& text);
// SIGINT as before the first set_interrupt_notice.
void clear_interrupt_notice();

}  // namespace kt
