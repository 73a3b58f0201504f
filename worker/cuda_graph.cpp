#include "worker/cuda_graph.hpp"

#include "worker/driver_api.hpp"

namespace kt::cuda {
namespace {

// The captured (not yet instantiated) graph.
struct DestroyGraph {
  void operator()(CUgraph graph) const noexcept { driver().cuGraphDestroy(graph); }
};
using Graph = UniqueHandle<CUgraph, DestroyGraph>;

// Ends the capture on every path: a launch that throws mid-capture must not leave the stream
// capturing (every later call on it would fail).
class CaptureScope {
 public:
  explicit CaptureScope(CUstream stream) : stream_(stream) {
    KT_CU(cuStreamBeginCapture, stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  }
  ~CaptureScope() {
    if (!ended_) {
      CUgraph partial = nullptr;
      if (driver().cuStreamEndCapture(stream_, &partial) == CUDA_SUCCESS && partial != nullptr)
        driver().cuGraphDestroy(partial);
    }
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  Graph end() {
    ended_ = true;
    CUgraph graph = nullptr;
    KT_CU(cuStreamEndCapture, stream_, &graph);
    return Graph(graph);
  }

 private:
  CUstream stream_;
  bool ended_ = false;
};

}  // namespace

void GraphExec::launch(CUstream stream) const {
  KT_CU(cuGraphLaunch, exec_.get(), stream);
}

void GraphExec::Destroy::operator()(CUgraphExec exec) const noexcept {
  driver().cuGraphExecDestroy(exec);
}

GraphExec capture_graph(CUstream stream, const std::function<void(CUstream)>& enqueue,
                        int launches) {
  Graph graph;
  {
    CaptureScope capture(stream);
    for (int i = 0; i < launches; ++i) enqueue(stream);
    graph = capture.end();
  }
  CUgraphExec exec = nullptr;
  KT_CU(cuGraphInstantiateWithFlags, &exec, graph.get(), 0);
  GraphExec owner(exec);
  KT_CU(cuGraphUpload, exec, stream);  // the first launch is not the one that pays for upload
  return owner;
}

}  // namespace kt::cuda
