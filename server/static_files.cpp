#include "server/static_files.hpp"

#include <fstream>
#include <iterator>
#include <map>

#include "server/app_context.hpp"
#include "server/request_parsing.hpp"

namespace kt {
namespace {

ApiResponse serve(const AppContext& context, const std::string& folder, const std::string& name) {
  const auto file = resolve_web_file(context.web_dir, folder, name);
  if (!file)
    throw ApiError(
        HttpStatus::not_found, "not_found",
        "no such page file: " + quote_client_text(folder.empty() ? name : folder + "/" + name));
  std::ifstream in(*file, std::ios::binary);
  if (!in)
    throw ApiError(HttpStatus::internal_server_error, "internal",
                   "cannot read page file " + file->filename().string());
  ApiResponse response;
  response.content_type = content_type_for(*file);
  response.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  // The page is small and changes only with the daemon; revalidate rather than cache stale.
  response.headers.emplace_back("Cache-Control", "no-cache");
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return response;
}

}  // namespace

std::string content_type_for(const std::filesystem::path& file) {
  static const std::map<std::string, std::string> types{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".txt", "text/plain; charset=utf-8"},
      {".md", "text/markdown; charset=utf-8"},
  };
  const auto it = types.find(file.extension().string());
  return it == types.end() ? "application/octet-stream" : it->second;
}

bool is_safe_file_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::filesystem::path> resolve_web_file(const std::filesystem::path& web_dir,
                                                      const std::string& folder,
                                                      const std::string& name) {
  if (!is_safe_file_name(name) || (!folder.empty() && !is_safe_file_name(folder)))
    return std::nullopt;
  std::error_code ec;
  const auto root = std::filesystem::canonical(web_dir, ec);
  if (ec) return std::nullopt;
  const auto file =
      std::filesystem::canonical(folder.empty() ? web_dir / name : web_dir / folder / name, ec);
  if (ec || !std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  // A symbolic link inside the folder must not lead out of it.
  const auto relative = file.lexically_relative(root);
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return file;
}

ApiResponse get_ui_index(const ApiRequest&, AppContext& context) {
  return serve(context, "", "index.html");
}

ApiResponse get_ui_file(const ApiRequest& request, AppContext& context) {
  return serve(context, "", request.path_params.at("file"));
}

ApiResponse get_ui_vendor_file(const ApiRequest& request, AppContext& context) {
  return serve(context, "vendor", request.path_params.at("file"));
}

bool is_static_page_path(std::string_view path) {
  if (path == "/" || path == "/ui") return true;
  constexpr std::string_view kFiles = "/ui/", kVendor = "/ui/vendor/";
  // Exactly the routed shapes, spelled without escapes: anything else goes through the check.
  if (path.rfind(kVendor, 0) == 0) return is_safe_file_name(path.substr(kVendor.size()));
  if (path.rfind(kFiles, 0) == 0) return is_safe_file_name(path.substr(kFiles.size()));
  return false;
}

}  // namespace kt
