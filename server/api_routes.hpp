// The kerntune HTTP API: every endpoint of docs/api.md bound to its handler.
#pragma once

#include "server/router.hpp"

namespace kt {

Router make_api_router();

}  // namespace kt
