// Grouped dual GEMM with SiLU for Blackwell (sm_100a) on tcgen05: the shared core
// (tcgen05_gemm_kernel.cuh) with two B operands sharing each A tile. Per CTA, TMEM holds
// ACC_STAGES x 2 accumulators of BN fp32 columns (silu(A*B1^T) and A*B2^T for 128 rows); the
// epilogue reads both with tcgen05.ld and writes silu(acc1)*acc2. Nothing else goes to global
// memory.
//
// Launch: grid (CTAs, 1, 1) with CTAs a multiple of CTA_GROUP*MULTICAST (the cluster size), 192
// threads, STAGES*(128 + 2*BN/CTA_GROUP)*BK*2 + 2048 bytes of dynamic shared memory. A, B1, B2
// arrive as tensor maps over [G][M][K], [G][N][K], [G][N][K] with boxes {64, 128, 1} and
// {64, BN/(CTA_GROUP*MULTICAST), 1}, 128B swizzle.

#include "tcgen05_gemm_kernel.cuh"

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&                   \
    defined(KT_CTA_GROUP) && defined(KT_MULTICAST) && defined(KT_ACC_STAGES) &&                   \
    defined(KT_TMEM_COLS) && defined(KT_RASTER) && defined(KT_BAND) && defined(KT_GROUP_ORDER) && \
    defined(KT_K_ORDER) && defined(KT_SPLIT_K) && defined(KT_GRID)
using KtDualTcgen05Chosen =
    kt_tcgen05::Tcgen05Config<2, KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CTA_GROUP, KT_MULTICAST,
                              KT_ACC_STAGES, KT_TMEM_COLS, KT_RASTER, KT_BAND, KT_GROUP_ORDER,
                              KT_K_ORDER>;
static_assert(KT_SPLIT_K == 1, "SPLIT_K == 1: this template does not split K");
static_assert(KT_GRID >= 0, "GRID >= 0 (0: one cluster per tile; k: k CTAs per SM, launch only)");

// Entry point; parameters in the order of the template's "args" in manifest.json. workspace and
// semaphores are the family's split-K buffers, unused here.
extern "C" __global__ void __launch_bounds__(KtDualTcgen05Chosen::THREADS, 1)
    kt_dual_gemm_silu_tcgen05(unsigned short* __restrict__ C,
                              const __grid_constant__ KtTensorMap tma_a,
                              const __grid_constant__ KtTensorMap tma_b1,
                              const __grid_constant__ KtTensorMap tma_b2, int G, int M, int N,
                              int K, float* __restrict__ workspace,
                              unsigned* __restrict__ semaphores) {
  (void)workspace;
  (void)semaphores;
  kt_tcgen05::Tcgen05Kernel<KtDualTcgen05Chosen>::run(C, &tma_a, &tma_b1, &tma_b2, G, M, N, K);
}
#endif
