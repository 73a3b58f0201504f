// The router alone, with handlers that echo what they were given: path captures, decoded query
// parameters, 404 / 405 (always with Allow), HEAD served by GET routes, errors thrown by handlers
// and messages that quote only a prefix of a client's target.
#include <gtest/gtest.h>

#include <stdexcept>

#include "server/router.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

ApiResponse echo(const ApiRequest& request, AppContext&) {
  return json_response(HttpStatus::ok, {{"path", request.path_params}, {"query", request.query}});
}

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    router_.add(http::verb::get, "/v1/jobs/{id}", echo);
    router_.add(http::verb::delete_, "/v1/jobs/{id}", echo);
    router_.add(http::verb::get, "/v1/jobs/{id}/variants", echo);
    router_.add(http::verb::post, "/v1/submit", echo);
    router_.add(http::verb::get, "/v1/refuse", [](const ApiRequest&, AppContext&) -> ApiResponse {
      throw ApiError(HttpStatus::conflict, "busy", "not now");
    });
    router_.add(http::verb::get, "/v1/broken", [](const ApiRequest&, AppContext&) -> ApiResponse {
      throw std::runtime_error("disk on fire");
    });
  }

  ApiResponse call(http::verb method, const std::string& target) {
    HttpRequest request{method, target, 11};
    // No handler here touches the context: a null reference would never be read.
    return router_.dispatch(request, *context_);
  }

  Router router_;
  AppContext* context_ = nullptr;
};

TEST_F(RouterTest, CapturesSegmentsAndDecodesQuery) {
  const auto response = call(http::verb::get, "/v1/jobs/42/variants?log=1&status=measured&x=a%20b");
  ASSERT_EQ(response.status, HttpStatus::ok);
  const auto body = response.json();
  EXPECT_EQ(body["path"]["id"], "42");
  EXPECT_EQ(body["query"]["log"], "1");
  EXPECT_EQ(body["query"]["x"], "a b");
  EXPECT_EQ(call(http::verb::get, "/v1/jobs/7").json()["path"]["id"], "7");
}

TEST_F(RouterTest, UnknownPathIs404AndWrongMethodIs405) {
  const auto missing = call(http::verb::get, "/v1/jobs");
  EXPECT_EQ(missing.status, HttpStatus::not_found);
  EXPECT_EQ(missing.json()["error"]["code"], "not_found");
  EXPECT_EQ(call(http::verb::get, "/v1/jobs/7/variants/extra").status, HttpStatus::not_found);

  const auto wrong = call(http::verb::post, "/v1/jobs/7");
  EXPECT_EQ(wrong.status, HttpStatus::method_not_allowed);
  EXPECT_EQ(wrong.json()["error"]["code"], "method_not_allowed");
  ASSERT_EQ(wrong.headers.size(), 1u);
  EXPECT_EQ(wrong.headers[0].first, "Allow");
  EXPECT_EQ(wrong.headers[0].second, "GET, HEAD, DELETE");
}

TEST_F(RouterTest, HeadIsServedByTheGetRoute) {
  const auto head = call(http::verb::head, "/v1/jobs/9/variants?log=1");
  ASSERT_EQ(head.status, HttpStatus::ok) << head.body;
  // The handler ran as for GET (the session leaves the body out on the wire).
  EXPECT_EQ(head.json()["path"]["id"], "9");
  EXPECT_EQ(head.json()["query"]["log"], "1");
}

TEST_F(RouterTest, HeadWithoutAGetRouteIs405WithAllow) {
  const auto head = call(http::verb::head, "/v1/submit");
  EXPECT_EQ(head.status, HttpStatus::method_not_allowed);
  ASSERT_EQ(head.headers.size(), 1u);
  EXPECT_EQ(head.headers[0], std::make_pair(std::string("Allow"), std::string("POST")));
  EXPECT_EQ(call(http::verb::post, "/v1/submit").status, HttpStatus::ok);
}

TEST_F(RouterTest, HandlerErrorsBecomeJsonErrors) {
  const auto refused = call(http::verb::get, "/v1/refuse");
  EXPECT_EQ(refused.status, HttpStatus::conflict);
  EXPECT_EQ(refused.json()["error"]["code"], "busy");
  EXPECT_EQ(refused.json()["error"]["message"], "not now");

  const auto broken = call(http::verb::get, "/v1/broken");
  EXPECT_EQ(broken.status, HttpStatus::internal_server_error);
  EXPECT_EQ(broken.json()["error"]["code"], "internal");
}

TEST_F(RouterTest, MalformedTargetIs400) {
  const auto response = call(http::verb::get, "no-leading-slash");
  EXPECT_EQ(response.status, HttpStatus::bad_request);
  EXPECT_EQ(response.json()["error"]["code"], "bad_target");
}

TEST_F(RouterTest, MessagesQuoteOnlyAPrefixOfTheTarget) {
  const std::string long_segment(6000, 'z');
  const auto missing = call(http::verb::get, "/v1/" + long_segment);
  EXPECT_EQ(missing.status, HttpStatus::not_found);
  const std::string message = missing.json()["error"]["message"];
  EXPECT_LT(message.size(), 120u) << message;
  EXPECT_NE(message.find("bytes)"), std::string::npos) << message;

  const auto malformed = call(http::verb::get, "no-slash-" + long_segment);
  EXPECT_EQ(malformed.status, HttpStatus::bad_request);
  EXPECT_LT(malformed.json()["error"]["message"].get<std::string>().size(), 200u);
}

}  // namespace
}  // namespace kt
