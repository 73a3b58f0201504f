// The router alone, with handlers that echo what they were given: path captures, decoded query
// parameters, 404 / 405 and errors thrown by handlers.
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
  EXPECT_EQ(wrong.headers[0].second, "GET, DELETE");
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

}  // namespace
}  // namespace kt
