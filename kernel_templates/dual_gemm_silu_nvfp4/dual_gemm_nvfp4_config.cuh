// The dual_gemm_silu_nvfp4 tcgen05 variant chosen by the -DKT_* axes: the shared NVFP4 config of
// the tcgen05 core with two B operands (B1 the gate projection, B2 the up projection) sharing each
// A tile and its scale atoms.
#pragma once

#include "tcgen05_nvfp4_config.cuh"

#if defined(KT_NVFP4_CONFIG_DEFINED)
using KtDualNvfp4Chosen = kt_nvfp4::Tcgen05Nvfp4Config<2>;
static_assert(KtDualNvfp4Chosen::NUM_B == 2, "two B operands: gate and up");
#endif
