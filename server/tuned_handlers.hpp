// GET /v1/tuned: the shape browser's index. Every tuned problem (family, dtype, shape, GPU
// model) with its best variant, so a client can list what is tuned without knowing the shapes.
#pragma once

#include "server/router.hpp"

namespace kt {

// Query: family= (must be known), device= (a GPU model, or anything /v1/best accepts), limit=
// (1..1000, default 100). Answers {"count", "problems": [{"family", "dtype", "shape",
// "shape_key", "device", "front_size", "best": variant}]}.
ApiResponse get_tuned(const ApiRequest& request, AppContext& context);

}  // namespace kt
