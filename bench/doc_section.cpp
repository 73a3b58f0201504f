#include "bench/doc_section.hpp"

#include <stdexcept>

namespace kt::bench {
namespace {

std::size_t find_once(const std::string& text, const std::string& marker) {
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) throw std::invalid_argument("marker '" + marker + "' not found");
  if (text.find(marker, at + marker.size()) != std::string::npos)
    throw std::invalid_argument("marker '" + marker + "' appears more than once");
  return at;
}

}  // namespace

std::string replace_marked_section(const std::string& text, const std::string& begin,
                                   const std::string& end, const std::string& content) {
  const std::size_t begin_at = find_once(text, begin);
  const std::size_t end_at = find_once(text, end);
  if (end_at < begin_at + begin.size())
    throw std::invalid_argument("marker '" + end + "' comes before '" + begin + "'");
  // Keep the rest of the begin marker's line; replace whole lines up to the end marker's line.
  std::size_t body_start = text.find('\n', begin_at + begin.size());
  body_start = body_start == std::string::npos || body_start > end_at ? begin_at + begin.size()
                                                                      : body_start + 1;
  const std::size_t line_start = text.rfind('\n', end_at);
  const std::size_t body_end =
      line_start == std::string::npos || line_start < body_start ? end_at : line_start + 1;
  std::string body = content;
  if (!body.empty() && body.back() != '\n') body += '\n';
  std::string result = text.substr(0, body_start);
  if (body_start == begin_at + begin.size()) result += '\n';  // markers shared a line
  result += body;
  result += text.substr(body_end);
  return result;
}

}  // namespace kt::bench
