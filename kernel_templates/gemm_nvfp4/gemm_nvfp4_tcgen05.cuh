// C[M,N] = gsa gsb (A sfa)(B sfb)^T for Blackwell (sm_100a): A[M,K] and B[N,K] e2m1 packed two per
// byte (K-contiguous), sfa and sfb one ue4m3 factor per 16 k-elements of each row (the atom layout
// of nvfp4_block_scale.cuh), gsa and gsb per-tensor fp32 scales, fp32 accumulation in tensor
// memory, C bf16. The shared tcgen05 core (tcgen05_gemm_kernel.cuh) with tcgen05.mma
// kind::mxf4nvf4.block_scale.scale_vec::4X (K = 64 per op), the factors copied from shared memory
// into TMEM by tcgen05.cp. Written from the PTX ISA and compiled in CI for sm_100a; never run on a
// GPU (no Blackwell machine): the scale-factor TMEM layout and the pair's tcgen05.cp are
// unverified.
//
// Launch: grid (CTAs, 1, 1), CTAs a multiple of CTA_GROUP*MULTICAST (the cluster size), 192
// threads, STAGES*((128 + BN/CTA_GROUP)*BK/2 + 8*BK*(1 + BN/128)) + 2048 bytes of dynamic shared
// memory. A and B arrive as byte tensor maps over [1][M][K/2] and [1][N][K/2] with boxes
// {128, 128, 1} and {128, BN/(CTA_GROUP*MULTICAST), 1}, 128B swizzle; SFA and SFB as byte maps
// over [cdiv(M,128)][2*cdiv(K,64)][256] and [cdiv(N,128)][2*cdiv(K,64)][256] (an atom is two rows)
// with boxes {256, BK/32, 1} and {256, BK/32, BN/128}, no swizzle.

// The output is bf16: the shared epilogue stores elem_t.
#define KT_DTYPE_BF16 1

#include "gemm_nvfp4_config.cuh"
#include "tcgen05_gemm_kernel.cuh"

#if defined(KT_NVFP4_CONFIG_DEFINED)
// Entry point; parameters in the order of the template's "args" in manifest.json.
extern "C" __global__ void __launch_bounds__(KtGemmNvfp4Chosen::THREADS, 1)
    kt_gemm_nvfp4_tcgen05(unsigned short* __restrict__ C, const __grid_constant__ KtTensorMap tma_a,
                          const __grid_constant__ KtTensorMap tma_b,
                          const __grid_constant__ KtTensorMap tma_sfa,
                          const __grid_constant__ KtTensorMap tma_sfb,
                          const float* __restrict__ GSA, const float* __restrict__ GSB, int M,
                          int N, int K) {
  kt_tcgen05::BlockScaleMaps scales;
  scales.sfa = &tma_sfa;
  scales.sfb0 = &tma_sfb;
  // K / 2: the core counts bytes of a row (two e2m1 each).
  kt_tcgen05::Tcgen05Kernel<KtGemmNvfp4Chosen>::run(C, &tma_a, &tma_b, &tma_b, 1, M, N, K / 2,
                                                    __ldg(GSA) * __ldg(GSB), scales);
}
#endif
