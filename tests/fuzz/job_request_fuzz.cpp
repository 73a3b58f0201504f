// libFuzzer target: the body of POST /v1/jobs through plan_job_request (parse_json_body with its
// depth limit, every field's checks, the family's shape and pinned-config validation, the target
// resolved against the fake GPUs of fuzz_app.hpp). ApiError is the only exception it documents.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_app.hpp"
#include "fuzz/unexpected_exception.hpp"
#include "server/job_request.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const kt::AppContext& context = kt::fuzz::app_context();
  const std::string body(reinterpret_cast<const char*>(data), size);
  try {
    (void)kt::plan_job_request(body, context);
  } catch (const kt::ApiError&) {
    // A refusal with its status and code: what a bad body should get.
  } catch (const std::exception& error) {
    kt::fuzz::abort_unexpected("job_request", error);
  } catch (...) {
    kt::fuzz::abort_unexpected("job_request");
  }
  return 0;
}
