#include "tuner/search/recorded_space_file.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <zlib.h>

namespace kt {
namespace {

bool is_space_file(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  const auto ends_with = [&](const std::string& tail) {
    return name.size() > tail.size() &&
           name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz");
}

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};

std::string read_whole(const std::filesystem::path& file) {
  std::unique_ptr<gzFile_s, GzCloser> in(gzopen(file.c_str(), "rb"));
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const int n = gzread(in.get(), buffer, sizeof buffer);
    if (n < 0) {
      int code = 0;
      throw std::runtime_error(file.string() + ": " + gzerror(in.get(), &code));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

RecordedSpace load_recorded_space(const std::filesystem::path& file) {
  const std::string text = read_whole(file);
  try {
    return recorded_space_from_json(nlohmann::json::parse(text));
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

std::vector<std::filesystem::path> recorded_space_files(const std::vector<std::string>& args) {
  std::vector<std::filesystem::path> files;
  for (const std::string& arg : args) {
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file() && is_space_file(entry.path())) files.push_back(entry.path());
    } else {
      files.emplace_back(arg);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kt
