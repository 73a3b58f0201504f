#include "worker/cuda_graph.hpp"

#include <utility>

#include "worker/driver_api.hpp"

namespace kt::cuda {
namespace {

// The captured (not yet instantiated) graph.
class Graph {
 public:
  Graph() = default;
  ~Graph() {
    if (graph_ != nullptr) driver().cuGraphDestroy(graph_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  CUgraph* out() { return &graph_; }
  CUgraph get() const { return graph_; }

 private:
  CUgraph graph_ = nullptr;
};

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

  void end(Graph& graph) {
    ended_ = true;
    KT_CU(cuStreamEndCapture, stream_, graph.out());
  }

 private:
  CUstream stream_;
  bool ended_ = false;
};

}  // namespace

GraphExec::~GraphExec() {
  destroy();
}

GraphExec::GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    destroy();
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

void GraphExec::launch(CUstream stream) const {
  KT_CU(cuGraphLaunch, exec_, stream);
}

void GraphExec::destroy() noexcept {
  if (exec_ == nullptr) return;
  driver().cuGraphExecDestroy(exec_);
  exec_ = nullptr;
}

GraphExec capture_graph(CUstream stream, const std::function<void(CUstream)>& enqueue,
                        int launches) {
  Graph graph;
  {
    CaptureScope capture(stream);
    for (int i = 0; i < launches; ++i) enqueue(stream);
    capture.end(graph);
  }
  CUgraphExec exec = nullptr;
  KT_CU(cuGraphInstantiateWithFlags, &exec, graph.get(), 0);
  GraphExec owner(exec);
  KT_CU(cuGraphUpload, exec, stream);  // the first launch is not the one that pays for upload
  return owner;
}

}  // namespace kt::cuda
