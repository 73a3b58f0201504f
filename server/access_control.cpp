// The bearer-token check run on every request before routing, and the helpers kerntuned uses at
// start-up to decide whether the listen address needs a token and to read it.
#include "server/access_control.hpp"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include "server/static_files.hpp"

namespace kt {
namespace http = boost::beast::http;

namespace {

constexpr std::string_view kHealthPath = "/healthz";
constexpr std::string_view kBearerScheme = "bearer";  // RFC 9110 11.1: schemes are case-blind
constexpr std::string_view kWhitespace = " \t\r\n\v\f";

std::string_view trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  const std::size_t last = text.find_last_not_of(kWhitespace);
  return text.substr(first, last - first + 1);
}

bool is_read(http::verb method) {
  return method == http::verb::get || method == http::verb::head;
}

// The path of the target, without the query. A percent-encoded spelling of /healthz does not
// match and so needs the token: the stricter side is the safe one.
std::string_view target_path(std::string_view target) {
  return target.substr(0, target.find('?'));
}

// The token of "Bearer <token>", or nullopt when the value is not of that form.
std::optional<std::string_view> bearer_token(std::string_view authorization) {
  if (authorization.size() <= kBearerScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kBearerScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kBearerScheme[i])
      return std::nullopt;
  const std::string_view rest = authorization.substr(kBearerScheme.size());
  if (rest.front() != ' ') return std::nullopt;
  const std::string_view token = trim(rest);
  if (token.empty()) return std::nullopt;
  return token;
}

ApiResponse unauthorized(const std::string& message) {
  ApiResponse response = error_response(HttpStatus::unauthorized, "unauthorized", message);
  response.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"kerntuned\"");
  return response;
}

}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Walk the longer of the two so a short guess costs as much as a long one; the length
  // difference joins the accumulated XOR rather than ending the loop.
  const std::size_t length = a.size() > b.size() ? a.size() : b.size();
  unsigned difference = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < length; ++i) {
    const unsigned char left = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char right = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned>(left ^ right);
  }
  return difference == 0;
}

std::optional<ApiResponse> check_access(const HttpRequest& request, const AccessPolicy& policy) {
  if (!policy.token) return std::nullopt;
  if (target_path(request.target()) == kHealthPath) return std::nullopt;
  // The page's files hold no data (the page asks the API, with the token, for that).
  if (is_read(request.method()) && is_static_page_path(target_path(request.target())))
    return std::nullopt;
  if (policy.public_reads && is_read(request.method())) return std::nullopt;

  const std::string how =
      ": send \"Authorization: Bearer <token>\" with the token of kerntuned's --token-file "
      "(kerntune: --token-file PATH or $KERNTUNE_TOKEN)";
  const auto count = request.count(http::field::authorization);
  if (count == 0) return unauthorized("this server requires a bearer token" + how);
  if (count > 1) return unauthorized("more than one Authorization header" + how);
  const auto token = bearer_token(request[http::field::authorization]);
  if (!token) return unauthorized("the Authorization header is not \"Bearer <token>\"" + how);
  if (!constant_time_equal(*token, *policy.token)) return unauthorized("wrong bearer token" + how);
  return std::nullopt;
}

bool is_loopback_host(const std::string& host) {
  boost::system::error_code ec;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, ec);
  if (ec) return false;
  if (address.is_v4()) return address.to_v4().is_loopback();
  const boost::asio::ip::address_v6 v6 = address.to_v6();
  if (v6.is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).is_loopback();
  return v6.is_loopback();
}

std::string read_token_file(const std::filesystem::path& path) {
  const std::string name = "token file " + path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw std::runtime_error(name + " does not exist" + (ec ? " (" + ec.message() + ")" : ""));
  if (!std::filesystem::is_regular_file(status))
    throw std::runtime_error(name + " is not a regular file");
  using std::filesystem::perms;
  if ((status.permissions() & (perms::group_read | perms::others_read)) != perms::none)
    throw std::runtime_error(name +
                             " is readable by other users: make it private "
                             "(chmod 600 " +
                             path.string() + ")");
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(name + " cannot be read (" + std::strerror(errno) +
                             "): give this user read access (chmod 600 " + path.string() + ")");
  std::string first_line;
  std::getline(in, first_line);
  const std::string token(trim(first_line));
  if (token.empty())
    throw std::runtime_error(name +
                             " holds no token: write one on its first line, e.g. "
                             "(umask 077; openssl rand -hex 32 > " +
                             path.string() + ")");
  return token;
}

}  // namespace kt
