// C[M,N] = (A[M,K] sa) (B[N,K] sb)^T for Blackwell (sm_100a) on tcgen05 with per-tensor scales:
// the shared tcgen05 core (tcgen05_gemm_kernel.cuh) with 1-byte operands, tcgen05.mma
// kind::f8f6f4 (K = 32 per op; A e4m3 or e5m2, B e4m3), fp32 accumulators in tensor memory, and
// sa * sb applied as the epilogue reads them; C bf16. Written for sm_100a and compiled in CI; not
// run on a GPU yet (no Blackwell machine). Block scales on Blackwell would use the MX block-scaled
// MMAs (ue8m0 scale factors in tensor memory), which this template does not implement.
//
// Launch: grid (CTAs, 1, 1) with CTAs a multiple of CTA_GROUP*MULTICAST (the cluster size), 192
// threads, STAGES*(128 + BN/CTA_GROUP)*BK + 2048 bytes of dynamic shared memory. A and B arrive
// as byte tensor maps over [1][M][K] and [1][N][K] with boxes {128, 128, 1} and
// {128, BN/(CTA_GROUP*MULTICAST), 1}, 128B swizzle.

// The output is bf16 whatever the fp8 input: the shared epilogue stores elem_t.
#define KT_DTYPE_BF16 1

#include "tcgen05_gemm_kernel.cuh"

#if defined(KT_BM) && defined(KT_BN) && defined(KT_BK) && defined(KT_STAGES) &&                \
    defined(KT_CTA_GROUP) && defined(KT_MULTICAST) && defined(KT_ACC_STAGES) &&                \
    defined(KT_TMEM_COLS) && defined(KT_RASTER) && defined(KT_GROUP) && defined(KT_K_ORDER) && \
    defined(KT_SPLIT_K) && defined(KT_GRID) && defined(KT_SCALING)
using KtTcgen05Fp8Chosen =
    kt_tcgen05::Tcgen05Config<1, KT_BM, KT_BN, KT_BK, KT_STAGES, KT_CTA_GROUP, KT_MULTICAST,
                              KT_ACC_STAGES, KT_TMEM_COLS, KT_RASTER, KT_GROUP, 0, KT_K_ORDER, 1>;
static_assert(KT_SPLIT_K == 1, "SPLIT_K == 1: this template does not split K");
static_assert(KT_SCALING == 0, "SCALING == 0: per-tensor scales only (see the header comment)");
static_assert(KT_GRID >= 0, "GRID >= 0 (0: one cluster per tile; k: k CTAs per SM, launch only)");

// Entry point; parameters in the order of the template's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtTcgen05Fp8Chosen::THREADS, 1)
    kt_gemm_fp8_tcgen05(unsigned short* __restrict__ C, const __grid_constant__ KtTensorMap tma_a,
                        const __grid_constant__ KtTensorMap tma_b, const float* __restrict__ SA,
                        const float* __restrict__ SB, int M, int N, int K,
                        float* __restrict__ workspace, unsigned* __restrict__ semaphores) {
  (void)workspace;
  (void)semaphores;
  const float scale = __ldg(SA) * __ldg(SB);
  kt_tcgen05::Tcgen05Kernel<KtTcgen05Fp8Chosen>::run(C, &tma_a, &tma_b, &tma_b, 1, M, N, K, scale);
}
#endif
