// Work list of one CTA (cluster) of the persistent wgmma GEMMs: which tiles, and which k-tiles of
// them, it computes, in order. Producer and consumers walk the same list (in the ping-pong GEMM
// item j goes to consumer j % 2; in the cooperative one every consumer takes every item).
//
// Data-parallel part: cluster g of G takes cluster tiles g, g + G, ... of the raster order
// (gemm_wgmma_scheduler.cuh), each over the whole K.
//
// Stream-K (STREAM_K): when the cluster tiles do not fill whole waves of G, the tiles of the
// last one or two waves (between G and 2G - 1 of them, or all tiles if there are fewer than G)
// are not dealt out whole: their k-iterations (tile-major) are cut into G equal contiguous
// ranges, one per cluster, taken after its data-parallel tiles. A range covers the tail of one
// tile, whole tiles and the head of another. The cluster that computed a tile's first k-tile
// finalises it: it waits until the clusters holding the tile's later k-tiles have stored their
// fp32 partials (each range's first item, so each CTA stores at most one, in its own workspace
// slot), adds them in cluster order and writes C; its k-head is the last item of its range, the
// partials are the first items of the later ranges, so the wait is short and cannot deadlock
// when every CTA is resident (a persistent grid of at most one CTA per SM, no clusters).
#pragma once

#include "gemm_wgmma_scheduler.cuh"

namespace kt_wgmma {

struct WorkItem {
  TileIndex tile;  // this CTA's tile of C
  int k_begin;     // k-tiles [k_begin, k_end) of it
  int k_end;
  int linear;  // index of the cluster tile in raster order (stream-K bookkeeping)
};

template <class Cfg>
struct WorkList {
  TileScheduler<Cfg> raster;
  int k_tiles = 0;
  int dp_items = 0;  // data-parallel tiles of this cluster
  int dp_tiles = 0;  // tiles done data-parallel by all clusters (a multiple of G)
  // Stream-K counts fit 32 bits (U < 2 * clusters * k_tiles); their products are formed in 64.
  int sk_iterations = 0;  // k-iterations shared out by stream-K (U)
  int sk_begin = 0;       // this cluster's range [sk_begin, sk_end) of them
  int sk_end = 0;
  int count = 0;  // items of this cluster: dp_items, then those of its stream-K range
  // Kept to a few registers: the consumers hold 128 accumulators beside them.

  __device__ __forceinline__ WorkList(int M, int N, int K, unsigned cta_rank)
      : raster(M, N, cta_rank) {
    k_tiles = cdiv_int(K, Cfg::BK);
    const int total = raster.total, clusters = raster.stride, g = raster.first;
    dp_tiles = total;
    if (Cfg::STREAM_K && total % clusters != 0) {
      const int full_waves = total / clusters;
      dp_tiles = (full_waves > 0 ? full_waves - 1 : 0) * clusters;
      sk_iterations = (total - dp_tiles) * k_tiles;
      sk_begin = range_end(g - 1);
      sk_end = range_end(g);
    }
    dp_items = g < dp_tiles ? (dp_tiles - g + clusters - 1) / clusters : 0;
    count = dp_items + (sk_end > sk_begin ? (sk_end - 1) / k_tiles - sk_begin / k_tiles + 1 : 0);
  }

  __device__ __forceinline__ int items() const { return count; }

  __device__ __forceinline__ WorkItem item(int j) const {
    WorkItem w;
    if (j < dp_items) {
      w.linear = raster.first + j * raster.stride;
      w.k_begin = 0;
      w.k_end = k_tiles;
    } else {
      const int sk_tile = sk_begin / k_tiles + (j - dp_items);  // relative to dp_tiles
      const int tile_begin = sk_tile * k_tiles;
      const int begin = sk_begin > tile_begin ? sk_begin : tile_begin;
      const int end = sk_end < tile_begin + k_tiles ? sk_end : tile_begin + k_tiles;
      w.linear = dp_tiles + sk_tile;
      w.k_begin = begin - tile_begin;
      w.k_end = end - tile_begin;
    }
    w.tile = raster.tile(w.linear);
    return w;
  }

  // The cluster whose stream-K range holds iteration i (0-based within the stream-K part), and
  // the end of cluster h's range. With fewer iterations than clusters some ranges are empty:
  // owners of consecutive iterations need not be neighbours.
  __device__ __forceinline__ int owner(int i) const {
    return static_cast<int>((static_cast<long long>(i + 1) * raster.stride - 1) / sk_iterations);
  }
  __device__ __forceinline__ int range_end(int h) const {
    return static_cast<int>(static_cast<long long>(sk_iterations) * (h + 1) / raster.stride);
  }

  // Calls visit(h) for each cluster h that holds a later part of a finalising item's tile
  // (k_begin == 0, k_end < k_tiles), in k order; returns how many there are.
  template <class Visit>
  __device__ __forceinline__ int for_each_partial(const WorkItem& w, Visit&& visit) const {
    const int tile_begin = (w.linear - dp_tiles) * k_tiles;
    const int stop = tile_begin + k_tiles;
    int count = 0;
    for (int i = tile_begin + w.k_end; i < stop; ++count) {
      const int h = owner(i);
      visit(h);
      i = range_end(h);
    }
    return count;
  }
};

}  // namespace kt_wgmma
