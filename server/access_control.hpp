// Who may call the API. On loopback the daemon is open, as it always was; on any other address it
// needs a bearer token (--token-file) or an explicit --insecure. With a token configured, every
// request but /healthz and the history page's static files (GET /, /ui/...) must carry "Authorization: Bearer <token>": mutating methods always, GET
// and HEAD unless --public-reads. The check is a pure function of the request and the policy, run
// before routing, so it is unit-tested without sockets and an unauthenticated client cannot even
// learn which paths exist.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "server/api_response.hpp"
#include "server/router.hpp"

namespace kt {

struct AccessPolicy {
  std::optional<std::string> token;  // nullopt: no token required (loopback or --insecure)
  bool public_reads = false;         // GET and HEAD need no token even when one is configured
};

// nullopt when the request may proceed; otherwise the 401 to send (standard error body,
// WWW-Authenticate: Bearer).
std::optional<ApiResponse> check_access(const HttpRequest& request, const AccessPolicy& policy);

// Equal length and equal bytes, in a time that depends only on the lengths: every byte is looked
// at, with no early exit, so the answer time does not tell how much of a guess was right.
// (Hand-written: kt_server does not link OpenSSL's libcrypto, whose CRYPTO_memcmp would do.)
bool constant_time_equal(std::string_view a, std::string_view b);

// True for IP literals in 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104; false for everything else,
// host names (even "localhost", which the resolver may map anywhere) and the any-address included.
bool is_loopback_host(const std::string& host);

// The token of --token-file: the file's first line without surrounding whitespace. Throws
// std::runtime_error naming the path and the fix when the file cannot be read, is readable by
// group or others, or holds no token.
std::string read_token_file(const std::filesystem::path& path);

}  // namespace kt
