// Persistent tile scheduler over G independent problems of the same shape (grouped GEMMs; G = 1
// for a plain GEMM): which output tile, group and K slice a cluster computes, in which order.
//
// Each group's tile grid (cdiv(M,BM) x cdiv(N,BN)) is covered by cluster tiles of CLUSTER_M x
// CLUSTER_N tiles; where the cluster dims do not divide it, the last cluster tiles stick out and
// their CTAs past the matrix compute on zeros (TMA fills out-of-bounds boxes with zeros) but store
// nothing. A work unit is one cluster tile of one group and one of SPLIT_K slices of the K loop.
// Cluster c of the launch takes units c, c + clusters, c + 2*clusters, ...: every CTA of a
// cluster runs the same units with the same k-ranges, which a shared multicast pipeline needs. A
// grid of one cluster per unit makes the kernel non-persistent with the same code.
//
// Order of the units: the slices of a tile are consecutive (they finish close together, so the
// split-K reduction waits little); tiles go group by group (GROUP_ORDER 0: a group's B stays in L2
// while its tiles run) or round-robin over the groups (1: every group progresses at once); inside
// a group, RASTER 0 cuts the cluster-tile grid into bands of BAND cluster-tile rows walked column
// by column (consecutive units share A rows, a band's B columns stay in L2), RASTER 1 transposed.
#pragma once

namespace kt_sched {

__device__ __forceinline__ int cdiv(int a, int b) {
  return (a + b - 1) / b;
}

struct WorkTile {
  int group;  // which problem, 0..G-1
  int m;      // tile row (in BM units) of this CTA
  int n;      // tile column (in BN units) of this CTA
  int slice;  // K slice, 0..SPLIT_K-1
};

enum GroupOrder { kGroupMajor = 0, kGroupsInterleaved = 1 };
enum Raster { kRasterAlongN = 0, kRasterAlongM = 1 };

template <int BM, int BN, int CLUSTER_M, int CLUSTER_N, int RASTER, int BAND, int SPLIT_K,
          int GROUP_ORDER>
struct GroupedTileScheduler {
  static_assert(BM > 0 && BN > 0 && CLUSTER_M >= 1 && CLUSTER_N >= 1, "positive tile and cluster");
  static_assert(RASTER == kRasterAlongN || RASTER == kRasterAlongM, "RASTER is 0 or 1");
  static_assert(BAND >= 1, "BAND >= 1 cluster tiles per raster band");
  static_assert(SPLIT_K >= 1, "SPLIT_K >= 1");
  static_assert(GROUP_ORDER == kGroupMajor || GROUP_ORDER == kGroupsInterleaved,
                "GROUP_ORDER is 0 or 1");

  int groups = 0;
  int tiles_m = 0, tiles_n = 0;        // real tile grid of one group
  int clusters_m = 0, clusters_n = 0;  // cluster-tile grid of one group
  int per_group = 0;                   // cluster tiles per group
  int first = 0, stride = 0, total = 0;
  int rank_m = 0, rank_n = 0;  // this CTA's tile inside its cluster tile

  // `rank_m`/`rank_n`: this CTA's place in its cluster tile; `cluster`/`clusters`: its cluster's
  // index in the launch and how many clusters the launch has.
  __device__ __forceinline__ GroupedTileScheduler(int G, int M, int N, int rank_m_, int rank_n_,
                                                  int cluster, int clusters) {
    groups = G;
    tiles_m = cdiv(M, BM);
    tiles_n = cdiv(N, BN);
    clusters_m = cdiv(tiles_m, CLUSTER_M);
    clusters_n = cdiv(tiles_n, CLUSTER_N);
    per_group = clusters_m * clusters_n;
    total = groups * per_group * SPLIT_K;
    first = cluster;
    stride = clusters;
    rank_m = rank_m_;
    rank_n = rank_n_;
  }

  // The work of unit `u` (first, first + stride, ... while < total) for this CTA.
  __device__ __forceinline__ WorkTile work(int u) const {
    const int slice = u % SPLIT_K;
    const int t = u / SPLIT_K;
    const int group = GROUP_ORDER == kGroupMajor ? t / per_group : t % groups;
    const int c = GROUP_ORDER == kGroupMajor ? t % per_group : t / groups;
    const int bands_of = RASTER == kRasterAlongN ? clusters_m : clusters_n;
    const int sweep = RASTER == kRasterAlongN ? clusters_n : clusters_m;
    const int band_tiles = BAND * sweep;
    const int band = c / band_tiles;
    const int first_major = band * BAND;
    const int left = bands_of - first_major;
    const int width = left < BAND ? left : BAND;  // the last band may be narrower
    const int within = c - band * band_tiles;
    const int major = first_major + within % width;  // across the band
    const int minor = within / width;                // along the sweep
    const int cm = RASTER == kRasterAlongN ? major : minor;
    const int cn = RASTER == kRasterAlongN ? minor : major;
    return {group, cm * CLUSTER_M + rank_m, cn * CLUSTER_N + rank_n, slice};
  }

  // Whether the tile lies (at least partly) inside C; sticking-out tiles of a cluster do not.
  __device__ __forceinline__ bool inside(const WorkTile& w) const {
    return w.m < tiles_m && w.n < tiles_n;
  }

  // Dense index of an inside tile over all groups: its split-K partials and semaphore.
  __device__ __forceinline__ int linear_tile(const WorkTile& w) const {
    return (w.group * tiles_m + w.m) * tiles_n + w.n;
  }

  // K tiles [begin, end) of a slice: the k_tiles split as evenly as possible; a slice may be
  // empty when SPLIT_K > k_tiles (its partial is zero).
  static __device__ __forceinline__ int slice_begin(int slice, int k_tiles) {
    return static_cast<int>(static_cast<long long>(slice) * k_tiles / SPLIT_K);
  }
  static __device__ __forceinline__ int slice_end(int slice, int k_tiles) {
    return slice_begin(slice + 1, k_tiles);
  }
};

}  // namespace kt_sched
