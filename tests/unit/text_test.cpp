// The text-file pair every layer shares (tuner/text.hpp): a missing file, a folder or an unwritable
// place is an error naming the path and why; what is written reads back byte for byte.
#include "tuner/text.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

#include "support/test_paths.hpp"

namespace kt {
namespace {

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

TEST(TextFiles, AMissingFileIsAnErrorNamingThePathAndWhy) {
  test::TempDir dir;
  const auto missing = dir.path() / "no_such_manifest.json";
  const std::string message = error_of([&] { read_text_file(missing); });
  EXPECT_NE(message.find("cannot read " + missing.string()), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
  const std::string folder = error_of([&] { read_text_file(dir.path()); });
  EXPECT_NE(folder.find(dir.path().string()), std::string::npos) << folder;
}

TEST(TextFiles, WhatIsWrittenReadsBackByteForByteAndReplacesTheOldFile) {
  test::TempDir dir;
  const auto file = dir.path() / "a" / "b" / "k.cuh";  // folders created
  std::string text = "line 1\r\nline 2\n";
  text += std::string(1, '\0') + "after a NUL\xff";
  text += std::string(200000, 'x');  // more than one read buffer
  write_text_file(file, text);
  EXPECT_EQ(read_text_file(file), text);
  write_text_file(file, "short");
  EXPECT_EQ(read_text_file(file), "short");
  write_text_file(file, "");
  EXPECT_EQ(read_text_file(file), "");
}

TEST(TextFiles, AnUnwritablePlaceIsAnErrorNamingThePath) {
  test::TempDir dir;
  write_text_file(dir.path() / "plain", "a file, not a folder");
  const auto inside = dir.path() / "plain" / "k.cuh";
  const std::string message = error_of([&] { write_text_file(inside, "x"); });
  EXPECT_NE(message.find("cannot write " + inside.string()), std::string::npos) << message;
  const std::string folder = error_of([&] { write_text_file(dir.path(), "x"); });
  EXPECT_NE(folder.find("cannot write " + dir.path().string()), std::string::npos) << folder;
}

}  // namespace
}  // namespace kt
