// Persistent tile scheduler of the wgmma GEMM: which output tiles a CTA computes, in which order.
//
// The tile grid (cdiv(M,BM) x cdiv(N,BN)) is covered by cluster tiles of CLUSTER_M x CLUSTER_N
// tiles; where the cluster dims do not divide it, the last cluster tiles stick out, and their
// CTAs past the matrix still load (zeros, multicast to peers that need their slices) and compute
// but store nothing (the epilogue checks bounds). Cluster c of the
// launch (CTAs c*CLUSTER_SIZE .. +CLUSTER_SIZE-1 along x) takes cluster tiles c, c + clusters,
// c + 2*clusters, ... in a grouped raster order; every CTA of a cluster therefore runs the same
// number of tiles and k-steps, which the shared multicast pipeline relies on. A grid of one CTA
// per tile makes the kernel non-persistent with the same code. Within a cluster tile, the CTA of
// rank r takes tile row r % CLUSTER_M and column r / CLUSTER_M.
//
// Raster: kRasterAlongN cuts the cluster-tile grid into bands of GROUP cluster-tile rows and
// walks each band column by column (GROUP rows at a time), so consecutive CTAs share A rows and
// a band's B columns stay in L2; kRasterAlongM is the transpose.
#pragma once

#include "gemm_wgmma_config.cuh"

namespace kt_wgmma {

__device__ __forceinline__ int cdiv_int(int a, int b) {
  return (a + b - 1) / b;
}

struct TileIndex {
  int m;  // tile row (of C, in BM units)
  int n;  // tile column (in BN units)
};

template <class Cfg>
struct TileScheduler {
  int clusters_m = 0, clusters_n = 0;  // cluster-tile grid
  int first = 0, stride = 0, total = 0;
  int rank_m = 0, rank_n = 0;  // this CTA's place inside its cluster tile

  __device__ __forceinline__ TileScheduler(int M, int N, unsigned cta_rank) {
    clusters_m = cdiv_int(cdiv_int(M, Cfg::BM), Cfg::CLUSTER_M);
    clusters_n = cdiv_int(cdiv_int(N, Cfg::BN), Cfg::CLUSTER_N);
    total = clusters_m * clusters_n;
    first = static_cast<int>(blockIdx.x) / Cfg::CLUSTER_SIZE;
    stride = static_cast<int>(gridDim.x) / Cfg::CLUSTER_SIZE;
    rank_m = static_cast<int>(cta_rank) % Cfg::CLUSTER_M;
    rank_n = static_cast<int>(cta_rank) / Cfg::CLUSTER_M;
  }

  // The tile of the linear cluster-tile index `t` (first, first + stride, ... while < total).
  __device__ __forceinline__ TileIndex tile(int t) const {
    const int bands_of = Cfg::RASTER == kRasterAlongN ? clusters_m : clusters_n;
    const int sweep = Cfg::RASTER == kRasterAlongN ? clusters_n : clusters_m;
    const int band_tiles = Cfg::GROUP * sweep;
    const int band = t / band_tiles;
    const int first_major = band * Cfg::GROUP;
    const int left = bands_of - first_major;
    const int width = left < Cfg::GROUP ? left : Cfg::GROUP;  // the last band may be narrower
    const int within = t - band * band_tiles;
    const int major = first_major + within % width;  // across the band
    const int minor = within / width;                // along the sweep
    const int cm = Cfg::RASTER == kRasterAlongN ? major : minor;
    const int cn = Cfg::RASTER == kRasterAlongN ? minor : major;
    return {cm * Cfg::CLUSTER_M + rank_m, cn * Cfg::CLUSTER_N + rank_n};
  }
};

}  // namespace kt_wgmma
