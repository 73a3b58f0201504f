// The history page's file serving, without sockets: which names are served, the content types,
// and that nothing outside the web folder can be reached (dot-dot, absolute names, symbolic links).
#include "server/static_files.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "support/test_paths.hpp"

namespace kt {
namespace {

TEST(StaticFiles, ContentTypesByExtension) {
  EXPECT_EQ(content_type_for("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(content_type_for("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type_for("style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(content_type_for("plotly-LICENSE.txt"), "text/plain; charset=utf-8");
  EXPECT_EQ(content_type_for("blob"), "application/octet-stream");
}

TEST(StaticFiles, OnlyPlainNamesAreSafe) {
  for (const char* name : {"index.html", "plotly-basic.min.js", "a_b-1.css"})
    EXPECT_TRUE(is_safe_file_name(name)) << name;
  for (const char* name : {"", ".", "..", ".hidden", "a/b", "..%2f", "a\\b", "a b", "/etc"})
    EXPECT_FALSE(is_safe_file_name(name)) << name;
  EXPECT_FALSE(is_safe_file_name(std::string(129, 'a')));
}

TEST(StaticFiles, ResolvesInsideTheFolderOnly) {
  test::TempDir dir;
  const auto web = dir.path() / "web";
  std::filesystem::create_directories(web / "vendor");
  std::ofstream(web / "index.html") << "<html>";
  std::ofstream(web / "vendor" / "lib.js") << "1";
  std::ofstream(dir.path() / "secret.txt") << "no";
  std::filesystem::create_symlink(dir.path() / "secret.txt", web / "leak.txt");

  EXPECT_EQ(resolve_web_file(web, "", "index.html"),
            std::filesystem::canonical(web / "index.html"));
  EXPECT_EQ(resolve_web_file(web, "vendor", "lib.js"),
            std::filesystem::canonical(web / "vendor" / "lib.js"));
  EXPECT_FALSE(resolve_web_file(web, "", "leak.txt")) << "a link out of the folder";
  EXPECT_FALSE(resolve_web_file(web, "", "missing.js"));
  EXPECT_FALSE(resolve_web_file(web, "", "vendor")) << "a folder is not a file";
  EXPECT_FALSE(resolve_web_file(web, "..", "secret.txt"));
  EXPECT_FALSE(resolve_web_file(web, "vendor", "../index.html"));
  EXPECT_FALSE(resolve_web_file(dir.path() / "nowhere", "", "index.html"));
}

TEST(StaticFiles, StaticPagePathsAreTheRoutedShapesOnly) {
  for (const char* path : {"/", "/ui", "/ui/app.js", "/ui/vendor/plotly-basic.min.js"})
    EXPECT_TRUE(is_static_page_path(path)) << path;
  for (const char* path : {"/v1/jobs", "/ui/", "/ui/a/b", "/ui/%2e%2e", "/ui/../x", "/uix",
                           "/ui/vendor/", "/ui/vendor/../x", "/healthz"})
    EXPECT_FALSE(is_static_page_path(path)) << path;
}

}  // namespace
}  // namespace kt
