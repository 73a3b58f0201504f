// The tcgen05 core's config for an NVFP4 variant from the KT_* axes both NVFP4 families share
// (BM, BN, BK, STAGES, CTA_GROUP, MULTICAST, ACC_STAGES, TMEM_COLS, RASTER, GROUP, GRID; and
// GROUP_ORDER where a family has groups, else 0): BK and
// K count k-elements in the manifests and become bytes here (two e2m1 per byte), the only unit the
// core's TMA and descriptors know. kt_tcgen05::Tcgen05Config checks the rest.
#pragma once

#include "tcgen05_gemm_config.cuh"

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) && \
    defined(KT_CTA_GROUP) && defined(KT_MULTICAST) && defined(KT_ACC_STAGES) && \
    defined(KT_TMEM_COLS) && defined(KT_RASTER) && defined(KT_GROUP) && defined(KT_GRID)
#define KT_NVFP4_CONFIG_DEFINED 1

static_assert(KT_BK % 256 == 0,
              "BK % 256 == 0: a stage holds whole 128-byte swizzled panels of 256 e2m1 elements");
static_assert(KT_GRID >= 0, "GRID >= 0 (0: one cluster per tile; k: k CTAs per SM, launch only)");

#if !defined(KT_GROUP_ORDER)
#define KT_GROUP_ORDER 0
#endif

namespace kt_nvfp4 {

template <int NUM_B>
using Tcgen05Nvfp4Config =
    kt_tcgen05::Tcgen05Config<NUM_B, KT_BM, KT_BN, KT_BK / 2, KT_STAGES, KT_CTA_GROUP, KT_MULTICAST,
                              KT_ACC_STAGES, KT_TMEM_COLS, KT_RASTER, KT_GROUP, KT_GROUP_ORDER,
                              kt_tcgen05::kForward, 1, 16>;

}  // namespace kt_nvfp4
#endif
