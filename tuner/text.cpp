#include "tuner/text.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <system_error>

namespace kt {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::runtime_error file_error(const char* what, const std::filesystem::path& path, int error) {
  return std::runtime_error(std::string(what) + " " + path.string() + ": " + std::strerror(error));
}

}  // namespace

std::string ascii_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::optional<std::int64_t> parse_decimal(const std::string& text) {
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
    return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw file_error("cannot read", path, EISDIR);
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw file_error("cannot read", path, errno);
  std::string text;
  char buffer[1 << 16];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, file.get())) > 0;)
    text.append(buffer, got);
  if (std::ferror(file.get())) throw file_error("cannot read", path, errno);
  return text;
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) throw file_error("cannot write", path, ec.value());
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) throw file_error("cannot write", path, errno);
  if (std::fwrite(text.data(), 1, text.size(), file.get()) != text.size())
    throw file_error("cannot write", path, errno);
  if (std::fclose(file.release()) != 0) throw file_error("cannot write", path, errno);
}

}  // namespace kt
