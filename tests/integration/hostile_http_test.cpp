// A real kerntuned on loopback fed what an attacker would send, as raw bytes over a socket so that
// nothing in a client library tidies the request up: deep JSON nesting (once a SIGSEGV), numbers
// out of range, NUL padding, HEAD, HTTP/1.1 without Host, an over-size body and over-size headers,
// transfer codings the daemon does not decode (with a request hidden in the body), huge values
// where a message would quote them, HEAD on an event stream. Each gets its 4xx (or 501) and the
// daemon goes on answering /healthz.
#include <gtest/gtest.h>

#include <array>
#include <sstream>
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

  // After a response the server must close: nothing more arrives, only the end of the stream
  // (a second response here would be a request smuggled in the body).
  void expect_closed(tcp::socket& socket) {
    std::string rest(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    buffer_.consume(buffer_.size());
    std::array<char, 4096> chunk{};
    boost::system::error_code ec;
    socket.non_blocking(false);
    for (;;) {
      const std::size_t n = socket.read_some(boost::asio::buffer(chunk), ec);
      if (ec) break;
      rest.append(chunk.data(), n);
    }
    EXPECT_EQ(ec, boost::asio::error::eof) << ec.message();
    EXPECT_EQ(rest, "") << "bytes after the response";
  }

  // A JSON body with its chunked framing and the terminating empty chunk.
  static std::string chunked(const std::string& body) {
    std::ostringstream hex;
    hex << std::hex << body.size();
    return hex.str() + "\r\n" + body + "\r\n0\r\n\r\n";
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

// RFC 9112 6.1 and 6.3: a Transfer-Encoding whose last coding is not chunked cannot frame a body
// (400), a coding the server does not decode is 501, and either way the connection closes: what
// follows was meant as the body, and must not be read as the next request.
TEST_F(HostileHttpTest, TransferCodingsOtherThanChunkedAreRefusedAndTheConnectionCloses) {
  const std::string job = R"({"family":"gemm","dtype":"bf16","mode":"compile","arch":"sm_90a",)"
                          R"("shape":{"M":64,"N":64,"K":64}})";
  const std::string smuggled = get("/v1/jobs/1");
  const auto post = [&](const std::string& coding_fields, const std::string& body) {
    return "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
           coding_fields + "\r\n" + body;
  };
  struct Case {
    std::string what;
    std::string request;
    unsigned status;
    std::string code;
  };
  const std::vector<Case> cases{
      {"chunked then identity", post("Transfer-Encoding: chunked, identity\r\n", smuggled), 400,
       "bad_request"},
      {"identity alone", post("Transfer-Encoding: identity\r\n", smuggled), 400, "bad_request"},
      {"gzip then chunked", post("Transfer-Encoding: gzip, chunked\r\n", chunked(job) + smuggled),
       501, "unsupported_transfer_coding"},
      {"gzip and chunked in two fields",
       post("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", chunked(job) + smuggled),
       501, "unsupported_transfer_coding"},
      {"chunked twice", post("Transfer-Encoding: chunked, chunked\r\n", chunked(job) + smuggled),
       400, "bad_request"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    tcp::socket socket = connect();
    const RawResponse response = exchange(socket, c.request);
    EXPECT_EQ(response.status, c.status) << response.message.body();
    EXPECT_EQ(response.json()["error"]["code"], c.code) << response.message.body();
    EXPECT_EQ(response.message[http::field::connection], "close");
    expect_closed(socket);
  }
  EXPECT_EQ(job_count(), 0u);

  // Chunked alone is HTTP/1.1's framing, taken as before.
  tcp::socket socket = connect();
  const RawResponse plain = exchange(socket, post("Transfer-Encoding: chunked\r\n", chunked(job)));
  EXPECT_EQ(plain.status, 202u) << plain.message.body();
  EXPECT_EQ(job_count(), 1u);
  expect_healthy();
}

// HEAD is GET without the body, an event stream's too: its status and headers (no Content-Length:
// the stream's body ends when the server closes, which it then does, as after a stream).
TEST_F(HostileHttpTest, HeadOnAnEventStreamAnswersAsTheGetWouldWithoutTheBody) {
  NewJob job;
  job.family = "gemm";
  job.shape = {{"M", 64}, {"N", 64}, {"K", 64}};
  job.dtype = "bf16";
  job.arch = "sm_90a";
  const std::int64_t id = daemon_.store.create_job(job);
  daemon_.store.set_job_status(id, JobStatus::done);
  const std::string events = "/v1/jobs/" + std::to_string(id) + "/events";

  tcp::socket get_socket = connect();
  boost::asio::write(get_socket, boost::asio::buffer(get(events)));
  http::response_parser<http::string_body> get_parser;
  boost::system::error_code ec;
  http::read_header(get_socket, buffer_, get_parser, ec);
  ASSERT_FALSE(ec) << ec.message();
  const auto& streamed = get_parser.get();
  buffer_.consume(buffer_.size());

  tcp::socket socket = connect();
  const RawResponse head = exchange(socket, get(events, "HEAD"), true);
  EXPECT_EQ(head.status, streamed.result_int());
  EXPECT_EQ(head.status, 200u);
  for (const http::field field : {http::field::content_type, http::field::cache_control,
                                  http::field::connection, http::field::content_length})
    EXPECT_EQ(head.message[field], streamed[field]) << field;
  EXPECT_EQ(head.message[http::field::content_type], "text/event-stream");
  EXPECT_EQ(head.message.count(http::field::content_length), 0u);
  expect_closed(socket);

  // An unknown job: the GET's 404 headers, and the connection goes on as after any 404.
  tcp::socket unknown_socket = connect();
  const RawResponse missing = exchange(unknown_socket, get("/v1/jobs/99999/events", "HEAD"), true);
  EXPECT_EQ(missing.status, 404u);
  EXPECT_TRUE(missing.message.body().empty());
  const RawResponse missing_get = exchange(unknown_socket, get("/v1/jobs/99999/events"));
  EXPECT_EQ(missing_get.status, 404u);
  EXPECT_EQ(missing.message[http::field::content_length],
            std::to_string(missing_get.message.body().size()));
  EXPECT_EQ(missing_get.json()["error"]["code"], "unknown_job");
}

// A value a message would quote comes back as a short prefix and its size, whichever endpoint it
// reached: the whole answer stays small.
TEST_F(HostileHttpTest, HugeValuesAreQuotedAsAShortPrefix) {
  const std::string huge(400'000, 'w');
  const std::string compile = R"("mode":"compile","arch":"sm_90a")";
  const std::string shape = R"("shape":{"M":64,"N":64,"K":64})";
  const std::vector<std::string> bodies{
      R"({"family":")" + huge + R"(","dtype":"bf16",)" + shape + "," + compile + "}",
      R"({"family":"gemm","dtype":")" + huge + R"(",)" + shape + "," + compile + "}",
      R"({"family":"gemm","dtype":"bf16","shape":")" + huge + R"(",)" + compile + "}",
      R"({"family":"gemm","dtype":"bf16","shape":{")" + huge + R"(":64,"N":64,"K":64},)" + compile +
          "}",
      R"({"family":"gemm","dtype":"bf16",)" + shape + R"(,"mode":"compile","arch":")" + huge +
          R"("})",
      R"({"family":"gemm","dtype":"bf16",)" + shape + "," + compile + R"(,"configs":[{"BM":64,")" +
          huge + R"(":1}]})",
  };
  for (const std::string& body : bodies) {
    SCOPED_TRACE(body.substr(0, 120));
    const RawResponse response = exchange(post_jobs(body));
    EXPECT_GE(response.status, 400u);
    EXPECT_LT(response.status, 500u);
    EXPECT_LT(response.message.body().size(), 1024u) << response.message.body().substr(0, 2000);
    EXPECT_EQ(response.message.body().find(std::string(kQuotedPrefixChars + 1, 'w')),
              std::string::npos)
        << response.message.body().substr(0, 2000);
  }
  // Query strings are capped by the header limit; under it, a long value is quoted short too.
  const std::string long_value(6'000, 'q');
  for (const std::string& target :
       {"/v1/best?family=gemm&dtype=bf16&M=64&N=64&K=64&device=" + long_value,
        "/v1/best?family=" + long_value + "&dtype=bf16&M=64&N=64&K=64",
        "/v1/best?family=gemm&dtype=bf16&M=" + long_value + "&N=64&K=64",
        "/v1/history?status=" + long_value, "/v1/history?" + long_value + "=1",
        "/v1/jobs/" + long_value}) {
    SCOPED_TRACE(target.substr(0, 80));
    const RawResponse response = exchange(get(target));
    EXPECT_GE(response.status, 400u);
    EXPECT_LT(response.status, 500u);
    EXPECT_LT(response.message.body().size(), 1024u) << response.message.body().substr(0, 2000);
    EXPECT_EQ(response.message.body().find(std::string(kQuotedPrefixChars + 1, 'q')),
              std::string::npos);
  }
  EXPECT_EQ(job_count(), 0u);
}

// Shapes meet expressions that evaluate in doubles: a dim past 2^53 would be tuned as another
// shape (2^53 + 1 read as 2^53), so it is refused, saying why, from a body or a query.
TEST_F(HostileHttpTest, ShapeValuesOutsideTheExactIntegerRangeAre422) {
  for (const std::string m : {"9007199254740993", "9223372036854775808", "1e30"}) {
    SCOPED_TRACE(m);
    const RawResponse response =
        exchange(post_jobs(R"({"family":"gemm","dtype":"bf16","mode":"compile","arch":"sm_90a",)"
                           R"("shape":{"M":)" +
                           m + R"(,"N":64,"K":64}})"));
    EXPECT_EQ(response.status, 422u) << response.message.body();
    EXPECT_EQ(response.json()["error"]["code"], "invalid_shape");
    EXPECT_NE(response.message.body().find("exact integer range"), std::string::npos)
        << response.message.body();
  }
  const RawResponse query =
      exchange(get("/v1/best?family=gemm&dtype=bf16&M=9007199254740993&N=64&K=64"));
  EXPECT_EQ(query.status, 422u) << query.message.body();
  EXPECT_NE(query.message.body().find("exact integer range"), std::string::npos)
      << query.message.body();
  // 2^53 itself is exact: refused only as too large for the family, a different message.
  const RawResponse exact =
      exchange(post_jobs(R"({"family":"gemm","dtype":"bf16","mode":"compile","arch":"sm_90a",)"
                         R"("shape":{"M":9007199254740992,"N":64,"K":64}})"));
  EXPECT_EQ(exact.status, 422u);
  EXPECT_EQ(exact.message.body().find("exact integer range"), std::string::npos)
      << exact.message.body();
  EXPECT_EQ(job_count(), 0u);
}

}  // namespace
}  // namespace kt
