// The bearer-token check alone (check_access on hand-built requests: every method with and without
// a configured token and --public-reads, /healthz, malformed and wrong tokens), the constant-time
// comparison, which listen hosts count as loopback, kerntuned's token-file rules, and where the
// client takes its token from.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "client/client_error.hpp"
#include "client/http_transport.hpp"
#include "server/access_control.hpp"
#include "support/scoped_env.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

const std::string kToken = "s3cret-token-0123456789";

const std::vector<http::verb> kReads = {http::verb::get, http::verb::head};
const std::vector<http::verb> kWrites = {http::verb::post, http::verb::delete_, http::verb::put,
                                         http::verb::patch};

HttpRequest request(http::verb method, const std::string& target,
                    std::optional<std::string> authorization = std::nullopt) {
  HttpRequest built{method, target, 11};
  built.set(http::field::host, "127.0.0.1");
  if (authorization) built.set(http::field::authorization, *authorization);
  return built;
}

AccessPolicy with_token(bool public_reads = false) {
  return AccessPolicy{kToken, public_reads};
}

// The refusal must be a 401 with the standard error body and a Bearer challenge.
void expect_unauthorized(const std::optional<ApiResponse>& denied, const std::string& what) {
  ASSERT_TRUE(denied.has_value()) << what << ": let through";
  EXPECT_EQ(denied->status, HttpStatus::unauthorized) << what;
  EXPECT_EQ(denied->json()["error"]["code"], "unauthorized") << what;
  EXPECT_FALSE(denied->json()["error"]["message"].get<std::string>().empty()) << what;
  bool challenged = false;
  for (const auto& [name, value] : denied->headers)
    if (name == "WWW-Authenticate" && value.rfind("Bearer", 0) == 0) challenged = true;
  EXPECT_TRUE(challenged) << what << ": no WWW-Authenticate: Bearer";
}

TEST(CheckAccess, WithoutATokenEverythingIsOpen) {
  for (const bool public_reads : {false, true})
    for (const auto& verbs : {kReads, kWrites})
      for (const http::verb method : verbs)
        EXPECT_FALSE(
            check_access(request(method, "/v1/jobs"), AccessPolicy{std::nullopt, public_reads}))
            << http::to_string(method);
}

TEST(CheckAccess, WithATokenEveryMethodNeedsIt) {
  for (const auto& verbs : {kReads, kWrites})
    for (const http::verb method : verbs) {
      const std::string name(http::to_string(method));
      expect_unauthorized(check_access(request(method, "/v1/jobs"), with_token()), name);
      EXPECT_FALSE(check_access(request(method, "/v1/jobs", "Bearer " + kToken), with_token()))
          << name << " with the right token";
    }
}

TEST(CheckAccess, ThePagesStaticFilesNeedNoTokenButTheirDataDoes) {
  for (const std::string target : {"/", "/ui", "/ui/app.js", "/ui/vendor/plotly-basic.min.js"})
    for (const http::verb method : kReads)
      EXPECT_FALSE(check_access(request(method, target), with_token())) << target;
  // Writes, the API the page reads, escapes and other spellings all need the token.
  expect_unauthorized(check_access(request(http::verb::post, "/ui/app.js"), with_token()), "POST");
  for (const std::string target :
       {"/v1/history", "/ui/%2e%2e/v1/history", "/ui/../v1/history", "/ui/vendor/../../x",
        "/ui/.hidden", "/uix", "/ui/a/b", "//ui/app.js"})
    expect_unauthorized(check_access(request(http::verb::get, target), with_token()), target);
}

TEST(CheckAccess, PublicReadsOpenOnlyGetAndHead) {
  for (const http::verb method : kReads)
    EXPECT_FALSE(check_access(request(method, "/v1/history?limit=5"), with_token(true)))
        << http::to_string(method);
  for (const http::verb method : kWrites) {
    const std::string name(http::to_string(method));
    expect_unauthorized(check_access(request(method, "/v1/jobs/1"), with_token(true)), name);
    EXPECT_FALSE(check_access(request(method, "/v1/jobs/1", "Bearer " + kToken), with_token(true)))
        << name << " with the right token";
  }
}

TEST(CheckAccess, OtherMethodsCountAsWrites) {
  expect_unauthorized(check_access(request(http::verb::options, "/v1/jobs"), with_token(true)),
                      "OPTIONS");
}

TEST(CheckAccess, HealthzStaysOpen) {
  for (const bool public_reads : {false, true}) {
    EXPECT_FALSE(check_access(request(http::verb::get, "/healthz"), with_token(public_reads)));
    EXPECT_FALSE(check_access(request(http::verb::head, "/healthz"), with_token(public_reads)));
    EXPECT_FALSE(check_access(request(http::verb::get, "/healthz?x=1"), with_token(public_reads)));
  }
  // Only that exact path: a look-alike still needs the token.
  expect_unauthorized(check_access(request(http::verb::get, "/healthzz"), with_token()),
                      "/healthzz");
  expect_unauthorized(check_access(request(http::verb::get, "/v1/healthz"), with_token()),
                      "/v1/healthz");
}

TEST(CheckAccess, WrongOrMalformedTokensAreRefused) {
  std::string last_byte_differs = kToken;
  last_byte_differs.back() ^= 1;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"wrong token", "Bearer wrong"},
      {"last byte differs", "Bearer " + last_byte_differs},
      {"prefix of the token", "Bearer " + kToken.substr(0, kToken.size() - 1)},
      {"token plus a byte", "Bearer " + kToken + "x"},
      {"empty token", "Bearer "},
      {"scheme only", "Bearer"},
      {"no scheme", kToken},
      {"other scheme", "Basic " + kToken},
      {"scheme glued to the token", "Bearer" + kToken},
      {"empty header", ""},
  };
  for (const auto& [what, header] : refused)
    for (const http::verb method : {http::verb::get, http::verb::post})
      expect_unauthorized(check_access(request(method, "/v1/jobs", header), with_token()), what);
  expect_unauthorized(check_access(request(http::verb::post, "/v1/jobs"), with_token()),
                      "missing header");
}

TEST(CheckAccess, TwoAuthorizationHeadersAreRefused) {
  HttpRequest twice = request(http::verb::post, "/v1/jobs", "Bearer " + kToken);
  twice.insert(http::field::authorization, "Bearer " + kToken);
  expect_unauthorized(check_access(twice, with_token()), "two headers");
}

TEST(CheckAccess, SchemeIsCaseInsensitive) {
  EXPECT_FALSE(
      check_access(request(http::verb::post, "/v1/jobs", "bearer " + kToken), with_token()));
  EXPECT_FALSE(
      check_access(request(http::verb::post, "/v1/jobs", "BEARER " + kToken), with_token()));
}

TEST(ConstantTimeEqual, ComparesLengthAndEveryByte) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "bbc"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_FALSE(constant_time_equal("ab", "abc"));
  EXPECT_FALSE(constant_time_equal("", "a"));
  // A NUL where the other string ends must not pass for "no byte".
  EXPECT_FALSE(constant_time_equal(std::string_view("ab\0", 3), "ab"));
}

TEST(LoopbackHost, OnlyLoopbackLiterals) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "127.255.255.254", "::1", "::ffff:127.0.0.1"})
    EXPECT_TRUE(is_loopback_host(host)) << host;
  for (const char* host : {"0.0.0.0", "::", "", "10.0.0.1", "192.168.1.10", "128.0.0.1",
                           "::ffff:10.0.0.1", "localhost", "example.com", "::2"})
    EXPECT_FALSE(is_loopback_host(host)) << host;
}

std::filesystem::path write_file(const std::filesystem::path& path, const std::string& text,
                                 mode_t mode) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
  return path;
}

TEST(TokenFile, FirstLineTrimmed) {
  test::TempDir dir;
  const auto path = write_file(dir.path() / "token", "  " + kToken + " \t\r\nsecond line\n", 0600);
  EXPECT_EQ(read_token_file(path), kToken);
}

// The message must name the file and what to do about it.
void expect_refused(const std::filesystem::path& path, const std::string& fix) {
  try {
    read_token_file(path);
    ADD_FAILURE() << path << " accepted";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(fix), std::string::npos) << message;
  }
}

TEST(TokenFile, RefusesFilesOthersCanRead) {
  test::TempDir dir;
  expect_refused(write_file(dir.path() / "group", kToken, 0640), "chmod 600");
  expect_refused(write_file(dir.path() / "world", kToken, 0604), "chmod 600");
}

TEST(TokenFile, RefusesEmptyAndMissingFiles) {
  test::TempDir dir;
  expect_refused(write_file(dir.path() / "empty", "", 0600), "no token");
  expect_refused(write_file(dir.path() / "blank", "   \nsecond\n", 0600), "no token");
  expect_refused(dir.path() / "absent", "does not exist");
}

using test::ScopedEnv;

TEST(ClientToken, EnvironmentVariableThenFileThenNone) {
  test::TempDir dir;
  const auto file = write_file(dir.path() / "token", "from-file\n", 0600);
  {
    ScopedEnv token("KERNTUNE_TOKEN", std::nullopt),
        token_file("KERNTUNE_TOKEN_FILE", std::nullopt);
    EXPECT_EQ(access_token_from_environment(), "");
  }
  {
    ScopedEnv token("KERNTUNE_TOKEN", std::nullopt),
        token_file("KERNTUNE_TOKEN_FILE", file.string());
    EXPECT_EQ(access_token_from_environment(), "from-file");
  }
  {
    ScopedEnv token("KERNTUNE_TOKEN", " from-env\n"),
        token_file("KERNTUNE_TOKEN_FILE", file.string());
    EXPECT_EQ(access_token_from_environment(), "from-env");
  }
  {
    ScopedEnv token("KERNTUNE_TOKEN", std::nullopt),
        token_file("KERNTUNE_TOKEN_FILE", (dir.path() / "absent").string());
    EXPECT_THROW(access_token_from_environment(), ClientError);
  }
}

TEST(ClientToken, RefusesControlCharactersAndEmptyFiles) {
  test::TempDir dir;
  EXPECT_THROW(read_access_token_file(write_file(dir.path() / "empty", "\n", 0600)), ClientError);
  ScopedEnv token("KERNTUNE_TOKEN",
                  "abc\x01"
                  "def");
  EXPECT_THROW(access_token_from_environment(), ClientError);
}

}  // namespace
}  // namespace kt
