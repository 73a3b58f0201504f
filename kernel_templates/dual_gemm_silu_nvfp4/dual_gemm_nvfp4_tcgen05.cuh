// Grouped dual GEMM with SiLU in NVFP4 for Blackwell (sm_100a): for each group g,
// C_g = silu(gsa gsb1 (A_g sfa)(B1_g sfb1)^T) * (gsa gsb2 (A_g sfa)(B2_g sfb2)^T), A_g, B1_g, B2_g
// e2m1 packed two per byte (K-contiguous), one ue4m3 factor per 16 k-elements of each row (atom
// layout of nvfp4_block_scale.cuh, groups one after another), fp32 accumulation in TMEM, C bf16.
// The shared tcgen05 core with two block-scaled accumulators per tile (kind::mxf4nvf4,
// scale_vec::4X) and the gemm_nvfp4 family's scale path. Compiled for sm_100a in CI; never run
// on a GPU (no Blackwell machine).
//
// Launch: grid (CTAs, 1, 1), CTAs a multiple of CTA_GROUP*MULTICAST, 192 threads,
// STAGES*((128 + 2*BN/CTA_GROUP)*BK/2 + 8*BK*(1 + 2*BN/128)) + 2048 bytes of dynamic shared
// memory. A, B1, B2 arrive as byte tensor maps over [G][M][K/2], [G][N][K/2], [G][N][K/2] (boxes
// {128, 128, 1} and {128, BN/(CTA_GROUP*MULTICAST), 1}, 128B swizzle), SFA, SFB1, SFB2 as byte
// maps over [G*cdiv(M,128)][2*cdiv(K,64)][256] and [G*cdiv(N,128)][2*cdiv(K,64)][256] (boxes
// {256, BK/32, 1} and {256, BK/32, BN/128}, no swizzle).

// The output is bf16: the shared epilogue stores elem_t.
#define KT_DTYPE_BF16 1

#include "dual_gemm_nvfp4_config.cuh"
#include "tcgen05_gemm_kernel.cuh"

#if defined(KT_NVFP4_CONFIG_DEFINED)
// Entry point; parameters in the order of the template's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtDualNvfp4Chosen::THREADS, 1)
    kt_dual_gemm_silu_nvfp4_tcgen05(unsigned short* __restrict__ C,
                                    const __grid_constant__ KtTensorMap tma_a,
                                    const __grid_constant__ KtTensorMap tma_b1,
                                    const __grid_constant__ KtTensorMap tma_b2,
                                    const __grid_constant__ KtTensorMap tma_sfa,
                                    const __grid_constant__ KtTensorMap tma_sfb1,
                                    const __grid_constant__ KtTensorMap tma_sfb2,
                                    const float* __restrict__ GSA, const float* __restrict__ GSB1,
                                    const float* __restrict__ GSB2, int G, int M, int N, int K) {
  const float gsa = __ldg(GSA);
  kt_tcgen05::BlockScaleMaps scales;
  scales.sfa = &tma_sfa;
  scales.sfb0 = &tma_sfb1;
  scales.sfb1 = &tma_sfb2;
  scales.second_scale = gsa * __ldg(GSB2);
  // K / 2: the core counts bytes of a row (two e2m1 each).
  kt_tcgen05::Tcgen05Kernel<KtDualNvfp4Chosen>::run(C, &tma_a, &tma_b1, &tma_b2, G, M, N, K / 2,
                                                    gsa * __ldg(GSB1), scales);
}
#endif
