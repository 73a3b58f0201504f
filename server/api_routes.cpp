#include "server/api_routes.hpp"

#include "server/answer_cache.hpp"
#include "server/api_document.hpp"
#include "server/batch_handlers.hpp"
#include "server/family_handlers.hpp"
#include "server/job_handlers.hpp"
#include "server/metrics_text.hpp"
#include "server/query_handlers.hpp"
#include "server/static_files.hpp"
#include "server/tuned_handlers.hpp"

namespace kt {

Router make_api_router() {
  using boost::beast::http::verb;
  Router router;
  // Answers from memory: it must stay fast whatever the store is doing.
  router.add(verb::get, "/healthz", get_health, RunOn::io_thread);
  router.add(verb::post, "/v1/jobs", create_job);
  router.add(verb::get, "/v1/jobs/{id}", get_job);
  router.add(verb::delete_, "/v1/jobs/{id}", cancel_job);
  // Looks the job up on the query pool; the session then streams its events.
  router.add(verb::get, "/v1/jobs/{id}/events", get_job_events);
  router.add(verb::get, "/v1/jobs/{id}/variants", remembered(list_variants, AnswerScope::path_job),
             remembered_answer(AnswerScope::path_job));
  // Many problems as one request: checked and submitted on the query pool like POST /v1/jobs.
  router.add(verb::post, "/v1/batches", create_batch);
  router.add(verb::get, "/v1/batches", list_batches);
  router.add(verb::get, "/v1/batches/{id}", get_batch);
  router.add(verb::delete_, "/v1/batches/{id}", cancel_batch);
  router.add(verb::get, "/v1/jobs/{id}/variants.csv", list_variants_csv);
  router.add(verb::get, "/v1/variants/{id}", get_variant);
  router.add(verb::get, "/v1/variants/{id}/kernel", get_kernel);
  router.add(verb::get, "/v1/variants/{id}/launch", get_launch);
  // The hottest reads: answered on the I/O thread while nothing was written since.
  router.add(verb::get, "/v1/best", remembered(get_best, AnswerScope::fronts),
             remembered_answer(AnswerScope::fronts));
  router.add(verb::get, "/v1/pareto", get_pareto);
  router.add(verb::get, "/v1/history", remembered(get_history, AnswerScope::everything),
             remembered_answer(AnswerScope::everything));
  router.add(verb::get, "/v1/families", get_families);
  // Checks the upload on the query pool; the compile runs on the registrar's own thread.
  router.add(verb::post, "/v1/families", register_family);
  router.add(verb::get, "/v1/families/registrations/{id}", get_family_registration);
  router.add(verb::get, "/v1/devices", get_devices);
  router.add(verb::get, "/v1/tuned", get_tuned);
  // The history page (static files; the page itself reads the API above).
  router.add(verb::get, "/", get_ui_index);
  router.add(verb::get, "/ui", get_ui_index);
  router.add(verb::get, "/ui/{file}", get_ui_file);
  router.add(verb::get, "/ui/vendor/{file}", get_ui_vendor_file);
  router.add(verb::get, "/v1/openapi.json", get_openapi, RunOn::io_thread);  // from memory
  router.add(verb::get, "/metrics", get_metrics, RunOn::io_thread);          // in memory only
  return router;
}

}  // namespace kt
