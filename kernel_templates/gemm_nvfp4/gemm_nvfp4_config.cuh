// The gemm_nvfp4 tcgen05 variant chosen by the -DKT_* axes: the shared NVFP4 config of the tcgen05
// core with one B operand.
#pragma once

#include "tcgen05_nvfp4_config.cuh"

#if defined(KT_NVFP4_CONFIG_DEFINED)
using KtGemmNvfp4Chosen = kt_nvfp4::Tcgen05Nvfp4Config<1>;
static_assert(KtGemmNvfp4Chosen::NUM_B == 1, "one B operand");
#endif
