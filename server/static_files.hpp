// The history page: static files (HTML, JS, CSS, the vendored plotting library) served from the
// daemon's web folder at GET / and GET /ui/<file>, /ui/vendor/<file>. Only names made of
// letters, digits, '.', '-' and '_' that do not start with '.' are served, and the resolved
// path must stay inside the folder, so no request can read anything else. The files hold no
// data (the page reads the API), so access control lets them through without a token.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_response.hpp"
#include "server/router.hpp"

namespace kt {

// "text/html; charset=utf-8" for .html, and so on; application/octet-stream when unknown.
std::string content_type_for(const std::filesystem::path& file);

// A file name a request may ask for (see above).
bool is_safe_file_name(std::string_view name);

// The file under web_dir for the path segments after /ui/ ({"app.js"}, {"vendor", "x.js"}), or
// nullopt when a segment is unsafe, the file is missing or it resolves outside web_dir.
std::optional<std::filesystem::path> resolve_web_file(const std::filesystem::path& web_dir,
                                                      const std::string& folder,
                                                      const std::string& name);

// Handlers: GET / (index.html), GET /ui/{file}, GET /ui/vendor/{file}. 404 not_found for
// anything the folder does not hold.
ApiResponse get_ui_index(const ApiRequest& request, AppContext& context);
ApiResponse get_ui_file(const ApiRequest& request, AppContext& context);
ApiResponse get_ui_vendor_file(const ApiRequest& request, AppContext& context);

// True for the raw paths of the page's static files: "/", "/ui", "/ui/<name>",
// "/ui/vendor/<name>" with a safe name (no escapes, no '/', no leading '.').
bool is_static_page_path(std::string_view path);

}  // namespace kt
