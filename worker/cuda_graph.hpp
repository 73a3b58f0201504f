// A CUDA graph of repeated launches, captured from a stream and instantiated: launching it runs
// them back to back with a single launch's overhead. Owners destroy their handle.
#pragma once

#include <cuda.h>

#include <functional>

#include "worker/cuda_handle.hpp"

namespace kt::cuda {

class GraphExec {
 public:
  GraphExec() = default;
  explicit GraphExec(CUgraphExec exec) : exec_(exec) {}

  explicit operator bool() const { return static_cast<bool>(exec_); }
  // Enqueues the whole graph on stream.
  void launch(CUstream stream) const;

 private:
  struct Destroy {
    void operator()(CUgraphExec exec) const noexcept;
  };
  UniqueHandle<CUgraphExec, Destroy> exec_;
};

// Records `launches` calls of enqueue(stream) into a graph (stream capture, thread-local mode:
// an unsafe call such as an allocation during capture fails instead of racing), instantiates it
// and uploads it to the device. The stream leaves capture mode whatever happens. Throws
// CudaError when the launches cannot be captured, or what enqueue throws.
GraphExec capture_graph(CUstream stream, const std::function<void(CUstream)>& enqueue,
                        int launches);

}  // namespace kt::cuda
