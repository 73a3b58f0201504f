#include "client/interrupt_notice.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

namespace kt {
namespace {

char notice[4096];
std::atomic<std::size_t> notice_length{0};
struct sigaction previous {};
bool installed = false;

void on_interrupt(int) {
  const std::size_t length = notice_length.load();
  std::size_t written = 0;
  while (written < length) {
    const ssize_t n = write(STDERR_FILENO, notice + written, length - written);
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  _exit(130);
}

}  // namespace

void set_interrupt_notice(const std::string& text) {
  notice_length.store(0);  // a signal now writes nothing half-copied
  const std::size_t length = std::min(text.size(), sizeof notice);
  std::memcpy(notice, text.data(), length);
  notice_length.store(length);
  if (installed) return;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous);
  installed = true;
}

void clear_interrupt_notice() {
  if (!installed) return;
  sigaction(SIGINT, &previous, nullptr);
  installed = false;
  notice_length.store(0);
}

}  // namespace kt
