// C[M,N] = A[M,K] * B[N,K]^T for Blackwell (sm_100a) on tcgen05: the shared core
// (tcgen05_gemm_kernel.cuh) with one B operand and one group. Accumulators live in tensor memory
// (TMEM_COLS columns allocated), MMAs are issued by one thread, 1-CTA or 2-CTA (cta_group::2)
// groups, optional B multicast between 1-CTA groups, 1 or 2 accumulator stages, persistent or one
// cluster per tile.
//
// Launch: grid (CTAs, 1, 1) with CTAs a multiple of CTA_GROUP*MULTICAST (the cluster size), 192
// threads, STAGES*(128 + BN/CTA_GROUP)*BK*2 + 2048 bytes of dynamic shared memory. A and B arrive
// as tensor maps over [1][M][K] and [1][N][K] with boxes {64, 128, 1} and
// {64, BN/(CTA_GROUP*MULTICAST), 1}, 128B swizzle.

#include "tcgen05_gemm_kernel.cuh"

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&                \
    defined(KT_CTA_GROUP) && defined(KT_MULTICAST) && defined(KT_ACC_STAGES) &&                \
    defined(KT_TMEM_COLS) && defined(KT_RASTER) && defined(KT_GROUP) && defined(KT_K_ORDER) && \
    defined(KT_SPLIT_K) && defined(KT_GRID)
using KtTcgen05GemmChosen =
    kt_tcgen05::Tcgen05Config<1, KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CTA_GROUP, KT_MULTICAST,
                              KT_ACC_STAGES, KT_TMEM_COLS, KT_RASTER, KT_GROUP, 0, KT_K_ORDER>;
static_assert(KT_SPLIT_K == 1, "SPLIT_K == 1: this template does not split K");
static_assert(KT_GRID >= 0, "GRID >= 0 (0: one cluster per tile; k: k CTAs per SM, launch only)");

// Entry point; parameters in the order of the template's "args" in manifest.json. workspace and
// semaphores are the family's split-K buffers, unused here.
extern "C" __global__ void __launch_bounds__(KtTcgen05GemmChosen::THREADS, 1)
    kt_gemm_tcgen05(unsigned short* __restrict__ C, const __grid_constant__ KtTensorMap tma_a,
                    const __grid_constant__ KtTensorMap tma_b, int M, int N, int K,
                    float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  (void)workspace;
  (void)semaphores;
  kt_tcgen05::Tcgen05Kernel<KtTcgen05GemmChosen>::run(C, &tma_a, &tma_b, &tma_b, 1, M, N, K);
}
#endif
