#include "ceres_sqrtba/internal/cameras/visibility_clustering.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Ceres' weights for the two clusterings.
constexpr double kSizePenalty = 3.0;
constexpr int kMinCentres = 3;
constexpr double kMinSimilarity = 0.9;

struct Edge {
  int to;
  double weight;
};
// Adjacency lists by increasing neighbour, the self edge included.
using Graph = std::vector<std::vector<Edge>>;

// Pairs (i < j) of vertices with the number of items both hold, in
// increasing order, from each vertex's sorted items (sets) and each item's
// sorted vertices (holders). A dense counter per vertex: memory in the
// number of vertices, time in the sum over items of their holders squared.
std::vector<std::tuple<int, int, int>> SharedCounts(const std::vector<std::vector<int>>& sets,
                                                    const std::vector<std::vector<int>>& holders) {
  const int n = static_cast<int>(sets.size());
  std::vector<int> count(n, 0);
  std::vector<int> touched;
  std::vector<std::tuple<int, int, int>> counts;
  for (int i = 0; i < n; ++i) {
    touched.clear();
    for (int item : sets[i]) {
      const std::vector<int>& vs = holders[item];
      for (auto it = std::upper_bound(vs.begin(), vs.end(), i); it != vs.end(); ++it) {
        if (count[*it]++ == 0) touched.push_back(*it);
      }
    }
    std::sort(touched.begin(), touched.end());
    for (int j : touched) {
      counts.emplace_back(i, j, count[j]);
      count[j] = 0;
    }
  }
  return counts;
}

// Per item (landmark), the sorted distinct vertices whose sets hold it.
std::vector<std::vector<int>> Inverse(const std::vector<std::vector<int>>& sets, int num_items) {
  std::vector<std::vector<int>> inverse(num_items);
  for (int v = 0; v < static_cast<int>(sets.size()); ++v) {
    for (int item : sets[v]) {
      if (inverse[item].empty() || inverse[item].back() != v) inverse[item].push_back(v);
    }
  }
  return inverse;
}

int NumItems(const std::vector<std::vector<int>>& sets) {
  int n = 0;
  for (const std::vector<int>& set : sets) {
    if (!set.empty()) n = std::max(n, set.back() + 1);
  }
  return n;
}

Graph SchurComplementGraph(const std::vector<std::vector<int>>& visibility) {
  const int n = static_cast<int>(visibility.size());
  Graph graph(n);
  for (int v = 0; v < n; ++v) graph[v].push_back({v, 1.0});
  for (const auto& [i, j, count] : SharedCounts(visibility, Inverse(visibility, NumItems(visibility)))) {
    const double w = count / std::sqrt(static_cast<double>(visibility[i].size()) *
                                       static_cast<double>(visibility[j].size()));
    graph[i].push_back({j, w});
    graph[j].push_back({i, w});
  }
  for (std::vector<Edge>& edges : graph) {
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.to < b.to; });
  }
  return graph;
}

// Raw cluster id per vertex (-1: none) and the number of clusters.
std::pair<std::vector<int>, int> CanonicalViews(const Graph& graph) {
  const int n = static_cast<int>(graph.size());
  std::vector<double> similarity(n, 0.0);  // to the vertex's best centre so far
  std::vector<int> centre_of(n, -1);       // that centre's number
  std::vector<char> candidate(n, 1);
  int num_centres = 0;
  for (int remaining = n; remaining > 0; --remaining) {
    double best_gain = -std::numeric_limits<double>::max();
    int best = -1;
    for (int v = 0; v < n; ++v) {
      if (!candidate[v]) continue;
      double gain = -kSizePenalty;
      for (const Edge& e : graph[v]) gain += std::max(0.0, e.weight - similarity[e.to]);
      if (gain > best_gain) {
        best_gain = gain;
        best = v;
      }
    }
    if (best_gain <= 0.0 && num_centres >= kMinCentres) break;
    candidate[best] = 0;
    for (const Edge& e : graph[best]) {
      if (e.weight > similarity[e.to]) {
        similarity[e.to] = e.weight;
        centre_of[e.to] = num_centres;
      }
    }
    ++num_centres;
  }
  return {centre_of, num_centres};
}

int Root(std::vector<int>* parent, int v) {
  while ((*parent)[v] != v) {
    (*parent)[v] = (*parent)[(*parent)[v]];
    v = (*parent)[v];
  }
  return v;
}

// Joins the components of a and b under the smaller root; false when they
// already are one.
bool Join(std::vector<int>* parent, int a, int b) {
  int ra = Root(parent, a), rb = Root(parent, b);
  if (ra == rb) return false;
  if (rb < ra) std::swap(ra, rb);
  (*parent)[rb] = ra;
  return true;
}

std::pair<std::vector<int>, int> SingleLinkage(const Graph& graph) {
  const int n = static_cast<int>(graph.size());
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (int v = 0; v < n; ++v) {
    for (const Edge& e : graph[v]) {
      if (e.to > v && e.weight >= kMinSimilarity) Join(&parent, v, e.to);
    }
  }
  std::vector<int> root(n);
  int num_clusters = 0;
  for (int v = 0; v < n; ++v) {
    root[v] = Root(&parent, v);
    if (root[v] == v) ++num_clusters;
  }
  return {root, num_clusters};
}

// Degree-2 maximum spanning forest of the cluster graph, as each cluster's
// (at most two) neighbours.
std::vector<std::array<int, 2>> Degree2Forest(const std::vector<std::vector<int>>& visibility,
                                              const std::vector<int>& cluster, int num_clusters) {
  // Per cluster the landmarks its cameras see, per landmark the clusters
  // that see it; per pair of clusters, how many landmarks both see.
  std::vector<std::vector<int>> seen(num_clusters);
  for (size_t c = 0; c < visibility.size(); ++c) {
    seen[cluster[c]].insert(seen[cluster[c]].end(), visibility[c].begin(), visibility[c].end());
  }
  for (std::vector<int>& landmarks : seen) {
    std::sort(landmarks.begin(), landmarks.end());
    landmarks.erase(std::unique(landmarks.begin(), landmarks.end()), landmarks.end());
  }
  std::vector<std::tuple<int, int, int>> edges = SharedCounts(seen, Inverse(seen, NumItems(seen)));
  // Decreasing weight, then decreasing vertices (Ceres' order).
  std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(std::get<2>(a), std::get<0>(a), std::get<1>(a)) >
           std::make_tuple(std::get<2>(b), std::get<0>(b), std::get<1>(b));
  });
  std::vector<std::array<int, 2>> neighbours(num_clusters, {-1, -1});
  std::vector<int> parent(num_clusters);
  std::iota(parent.begin(), parent.end(), 0);
  auto degree = [&](int c) { return (neighbours[c][0] >= 0) + (neighbours[c][1] >= 0); };
  for (const auto& [a, b, count] : edges) {
    if (degree(a) == 2 || degree(b) == 2) continue;
    if (!Join(&parent, a, b)) continue;
    neighbours[a][degree(a)] = b;
    neighbours[b][degree(b)] = a;
  }
  return neighbours;
}

}  // namespace

std::vector<std::vector<int>> CameraVisibility(const ProblemStructure& s) {
  std::vector<std::vector<int>> visibility(s.cameras.size());
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    for (int slot = s.camera_group_begin[c]; slot < s.camera_group_begin[c + 1]; ++slot) {
      const Group& group = s.groups[s.camera_groups[slot]];
      if (group.landmark >= 0) visibility[c].push_back(s.parameter_blocks[group.landmark].landmark_index);
    }
    std::sort(visibility[c].begin(), visibility[c].end());
    visibility[c].erase(std::unique(visibility[c].begin(), visibility[c].end()), visibility[c].end());
  }
  return visibility;
}

std::vector<std::vector<int>> CameraVisibility(const ProblemStructure& s, const ProcessGroup& processes) {
  const std::vector<std::vector<int>> local = CameraVisibility(s);
  // Where this process's landmarks start in the common numbering.
  std::vector<double> counts(static_cast<size_t>(processes.size()), 0.0);
  counts[processes.rank()] = static_cast<double>(s.landmarks.size());
  processes.Sum(counts.data(), static_cast<int64_t>(counts.size()));
  int64_t offset = 0;
  for (int r = 0; r < processes.rank(); ++r) offset += static_cast<int64_t>(counts[r]);
  // (camera, landmark) in one word: 24 bits of camera, 40 of landmark.
  constexpr int kLandmarkBits = 40;
  CHECK_LT(local.size(), size_t{1} << (64 - kLandmarkBits));
  std::vector<uint64_t> mine;
  for (size_t c = 0; c < local.size(); ++c) {
    for (int l : local[c]) mine.push_back((static_cast<uint64_t>(c) << kLandmarkBits) | static_cast<uint64_t>(l + offset));
  }
  const std::vector<std::vector<uint64_t>> to(static_cast<size_t>(processes.size()), mine);
  std::vector<uint64_t> all;
  std::vector<int> from;
  processes.Exchange(to, &all, &from);
  std::vector<std::vector<int>> visibility(local.size());
  const uint64_t mask = (uint64_t{1} << kLandmarkBits) - 1;
  for (uint64_t pair : all) {
    const int64_t landmark = static_cast<int64_t>(pair & mask);
    CHECK_LT(landmark, int64_t{1} << 31);
    visibility[pair >> kLandmarkBits].push_back(static_cast<int>(landmark));
  }
  for (std::vector<int>& v : visibility) std::sort(v.begin(), v.end());
  return visibility;
}

CameraClusters ClusterCameras(const std::vector<std::vector<int>>& visibility,
                              ceres::VisibilityClusteringType clustering, ceres::PreconditionerType type) {
  const Graph graph = SchurComplementGraph(visibility);
  auto [raw, num_clusters] =
      clustering == ceres::SINGLE_LINKAGE ? SingleLinkage(graph) : CanonicalViews(graph);
  CameraClusters clusters;
  clusters.num_clusters = num_clusters;
  clusters.cluster.resize(raw.size());
  // Numbered in order of first camera; an unassigned camera (a canonical
  // view that shares nothing with any centre) joins centre c mod clusters.
  std::vector<int> number(std::max(1, static_cast<int>(raw.size())), -1);
  int next = 0;
  for (size_t c = 0; c < raw.size(); ++c) {
    const int id = raw[c] >= 0 ? raw[c] : static_cast<int>(c % static_cast<size_t>(num_clusters));
    if (number[id] < 0) number[id] = next++;
    clusters.cluster[c] = number[id];
  }
  CHECK_LE(next, num_clusters);
  // Every centre or root has a camera: the numbers are 0..num_clusters-1.
  clusters.num_clusters = next;
  clusters.neighbours = type == ceres::CLUSTER_TRIDIAGONAL
                            ? Degree2Forest(visibility, clusters.cluster, clusters.num_clusters)
                            : std::vector<std::array<int, 2>>(clusters.num_clusters, {-1, -1});
  return clusters;
}

}  // namespace internal
}  // namespace ceres_sqrtba
