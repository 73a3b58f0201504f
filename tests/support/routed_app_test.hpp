// A fixture for handler tests: a real store in a temporary folder, the shipped families, a
// scheduler that is built but never started (handlers only enqueue) and the API's router, called
// without sockets.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/api_routes.hpp"
#include "server/app_context.hpp"
#include "support/shipped_family.hpp"
#include "support/test_paths.hpp"
#include "support/test_scheduler_options.hpp"

namespace kt::test {

class RoutedAppTest : public ::testing::Test {
 protected:
  explicit RoutedAppTest(std::vector<DeviceInfo> devices = {},
                         std::string device_error = "libcuda.so.1 not found")
      : store_(dir_.path() / "kerntune.db"),
        families_(shipped_families()),
        scheduler_(store_, families_, test_scheduler_options(), devices),
        context_{store_, families_, scheduler_, std::move(devices), std::move(device_error)},
        router_(make_api_router()) {}

  ApiResponse call(boost::beast::http::verb method, const std::string& target,
                   const std::string& body = "") {
    HttpRequest request{method, target, 11};
    request.body() = body;
    request.prepare_payload();
    return router_.dispatch(request, context_);
  }
  std::size_t job_count() {
    JobFilter filter;
    filter.limit = 1000;
    return store_.jobs(filter).size();
  }

  TempDir dir_;
  Store store_;
  FamilyRegistry families_;
  JobScheduler scheduler_;
  AppContext context_;
  Router router_;
};

}  // namespace kt::test
