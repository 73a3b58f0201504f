// A real kerntuned on loopback fed what an attacker would send, as raw bytes over a socket so that
// nothing in a client library tidies the request up: deep JSON nesting (once a SIGSEGV), numbers
// out of range, NUL padding, HEAD, HTTP/1.1 without Host, an over-size body and over-size headers.
// Each gets its 4xx and the daemon goes on answering /healthz.
#include <gtest/gtest.h>

#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "server/request_parsing.hpp"
#include "server/session.hpp"
#include "support/in_process_daemon.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

struct RawResponse {
  unsigned status = 0;  // the status code as a number
  http::response<http::string_body> message;
  nlohmann::json json() const { return nlohmann::json::parse(message.body(), nullptr, false); }
};

class HostileHttpTest : public ::testing::Test {
 protected:
  tcp::socket connect() {
    tcp::socket socket(io_);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), daemon_.server.port()});
    return socket;
  }

  // Writes the bytes as they are (a write the server cuts short is not an error here: it may
  // answer before reading everything) and reads one response.
  RawResponse exchange(tcp::socket& socket, const std::string& bytes, bool head = false) {
    boost::system::error_code ignored;
    boost::asio::write(socket, boost::asio::buffer(bytes), ignored);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    parser.skip(head);  // a response to HEAD has headers only
    boost::system::error_code ec;
    http::read(socket, buffer_, parser, ec);
    EXPECT_FALSE(ec) << ec.message() << " for " << bytes.substr(0, 80);
    RawResponse response;
    response.message = parser.release();
    response.status = response.message.result_int();
    return response;
  }
  RawResponse exchange(const std::string& bytes, bool head = false) {
    tcp::socket socket = connect();
    return exchange(socket, bytes, head);
  }

  static std::string post_jobs(const std::string& body) {
    return "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Content-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  static std::string get(const std::string& target, const std::string& method = "GET") {
    return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  }

  // The daemon still answers, on a new connection.
  void expect_healthy() {
    const RawResponse health = exchange(get("/healthz"));
    EXPECT_EQ(health.status, 200u);
    EXPECT_EQ(health.json()["status"], "ok") << health.message.body();
  }

  std::size_t job_count() {
    JobFilter filter;
    filter.limit = 1000;
    return daemon_.store.jobs(filter).size();
  }

  test::InProcessDaemon daemon_;
  boost::asio::io_context io_;
  boost::beast::flat_buffer buffer_;
};

TEST_F(HostileHttpTest, DeeplyNestedArraysAre400AndTheDaemonGoesOn) {
  const RawResponse open_brackets = exchange(post_jobs(std::string(200 * 1024, '[')));
  EXPECT_EQ(open_brackets.status, 400u) << open_brackets.message.body();
  EXPECT_EQ(open_brackets.json()["error"]["code"], "nesting_too_deep");
  EXPECT_NE(open_brackets.json()["error"]["message"].get<std::string>().find(
                std::to_string(kMaxJsonDepth)),
            std::string::npos);
  expect_healthy();

  // The shape that once crashed the daemon: a deep value inside a field whose error message
  // dumped it.
  const std::string deep_field = R"({"family":"gemm","dtype":"bf16","shape":{"m":)" +
                                 std::string(60'000, '[') + std::string(60'000, ']') + "}}";
  const RawResponse in_field = exchange(post_jobs(deep_field));
  EXPECT_EQ(in_field.status, 400u);
  EXPECT_EQ(in_field.json()["error"]["code"], "nesting_too_deep");
  expect_healthy();
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(HostileHttpTest, NumberOutOfRangeIs4xxNamingTheField) {
  const RawResponse response =
      exchange(post_jobs(R"({"family":"gemm","dtype":"bf16","mode":"compile","arch":"sm_90a",)"
                         R"("shape":{"m":1e99999,"n":64,"k":64}})"));
  EXPECT_GE(response.status, 400u);
  EXPECT_LT(response.status, 500u);
  EXPECT_EQ(response.json()["error"]["code"], "invalid_field") << response.message.body();
  EXPECT_NE(response.json()["error"]["message"].get<std::string>().find("shape.m"),
            std::string::npos)
      << response.message.body();
  expect_healthy();
}

TEST_F(HostileHttpTest, NulPaddingAfterTheBodyIs400) {
  // A tune job: without a GPU a well-formed one gets 503 no_device, and nothing runs.
  const std::string good = R"({"family":"gemm","dtype":"bf16","shape":{"m":64,"n":64,"k":64}})";
  const RawResponse padded = exchange(post_jobs(good + std::string(4096, '\0')));
  EXPECT_EQ(padded.status, 400u) << padded.message.body();
  EXPECT_EQ(padded.json()["error"]["code"], "invalid_json");
  const RawResponse trailing = exchange(post_jobs(good + " {}"));
  EXPECT_EQ(trailing.status, 400u) << trailing.message.body();
  EXPECT_EQ(trailing.json()["error"]["code"], "invalid_json");
  // The same body without the padding gets past the parser: the padding alone was refused.
  const RawResponse plain = exchange(post_jobs(good));
  EXPECT_EQ(plain.status, 503u) << plain.message.body();
  EXPECT_EQ(plain.json()["error"]["code"], "no_device");
  EXPECT_EQ(job_count(), 0u);
}

TEST_F(HostileHttpTest, HeadIsGetWithoutTheBody) {
  tcp::socket socket = connect();
  const RawResponse head = exchange(socket, get("/healthz", "HEAD"), true);
  EXPECT_EQ(head.status, 200u);
  EXPECT_TRUE(head.message.body().empty());
  EXPECT_EQ(head.message[http::field::content_type], "application/json");
  // On the same connection: had a body followed the HEAD response, this read would see it.
  const RawResponse full = exchange(socket, get("/healthz"));
  EXPECT_EQ(full.status, 200u);
  EXPECT_EQ(full.json()["status"], "ok") << full.message.body();
  EXPECT_EQ(head.message[http::field::content_length], std::to_string(full.message.body().size()));

  // A path without GET: 405 and an Allow header that lists what is allowed.
  const RawResponse head_jobs = exchange(get("/v1/jobs", "HEAD"), true);
  EXPECT_EQ(head_jobs.status, 405u);
  EXPECT_EQ(head_jobs.message[http::field::allow], "POST");
  const RawResponse put_job = exchange(get("/v1/jobs/1", "PUT"));
  EXPECT_EQ(put_job.status, 405u);
  EXPECT_EQ(put_job.message[http::field::allow], "GET, HEAD, DELETE");
}

TEST_F(HostileHttpTest, Http11WithoutHostIs400ButHttp10IsServed) {
  const RawResponse no_host = exchange("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(no_host.status, 400u) << no_host.message.body();
  EXPECT_EQ(no_host.json()["error"]["code"], "bad_request");
  EXPECT_NE(no_host.json()["error"]["message"].get<std::string>().find("Host"), std::string::npos);

  const RawResponse two_hosts = exchange("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
  EXPECT_EQ(two_hosts.status, 400u);

  const RawResponse http10 = exchange("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(http10.status, 200u);
  EXPECT_EQ(http10.json()["status"], "ok");
}

TEST_F(HostileHttpTest, ThreeMegabyteBodyIs413) {
  const RawResponse response = exchange(post_jobs(std::string(3 << 20, ' ')));
  EXPECT_EQ(response.status, 413u);
  EXPECT_EQ(response.json()["error"]["code"], "body_too_large");
  EXPECT_EQ(job_count(), 0u);
  expect_healthy();
}

TEST_F(HostileHttpTest, SixtyFourKilobytesOfHeadersIs431) {
  ASSERT_LT(kMaxRequestHeaderBytes, 64u * 1024);
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + std::string(64 * 1024, 'h') +
      "\r\n\r\n";
  const RawResponse response = exchange(request);
  EXPECT_EQ(response.status, 431u) << response.message.body();
  EXPECT_EQ(response.json()["error"]["code"], "headers_too_large");

  // Many small fields count the same as one long one.
  std::string many = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (int i = 0; i < 2000; ++i) many += "X-F" + std::to_string(i) + ": 0123456789abcdef\r\n";
  EXPECT_EQ(exchange(many + "\r\n").status, 431u);
  expect_healthy();
}

}  // namespace
}  // namespace kt
