#include "ceres_sqrtba/internal/problem/independent_set.h"

#include <algorithm>
#include <numeric>

namespace ceres_sqrtba {
namespace internal {

std::vector<bool> EliminationIndependentSet(int num_vertices, const std::vector<bool>& is_constant,
                                            const std::vector<int>& edge_begin,
                                            const std::vector<int>& edge_vertices) {
  const int n = num_vertices;
  const int num_edges = edge_begin.empty() ? 0 : static_cast<int>(edge_begin.size()) - 1;
  // Adjacency as CSR: for every occurrence of a variable vertex p in a
  // hyperedge, the other variable vertices of that hyperedge (repeats are
  // removed per vertex below).
  std::vector<int> count(n + 1, 0);
  for (int e = 0; e < num_edges; ++e) {
    for (int i = edge_begin[e]; i < edge_begin[e + 1]; ++i) {
      const int p = edge_vertices[i];
      if (is_constant[p]) continue;
      for (int j = edge_begin[e]; j < edge_begin[e + 1]; ++j) {
        const int q = edge_vertices[j];
        if (q != p && !is_constant[q]) ++count[p + 1];
      }
    }
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<int> adj(count[n]);
  std::vector<int> fill(count.begin(), count.end() - 1);
  for (int e = 0; e < num_edges; ++e) {
    for (int i = edge_begin[e]; i < edge_begin[e + 1]; ++i) {
      const int p = edge_vertices[i];
      if (is_constant[p]) continue;
      for (int j = edge_begin[e]; j < edge_begin[e + 1]; ++j) {
        const int q = edge_vertices[j];
        if (q != p && !is_constant[q]) adj[fill[p]++] = q;
      }
    }
  }
  // Degree = number of distinct neighbours, which are moved to the front of
  // each vertex's list.
  std::vector<int> degree(n, 0);
  for (int p = 0; p < n; ++p) {
    auto b = adj.begin() + count[p], e = adj.begin() + count[p + 1];
    std::sort(b, e);
    degree[p] = static_cast<int>(std::unique(b, e) - b);
  }
  std::vector<int> order;
  for (int p = 0; p < n; ++p) {
    if (!is_constant[p]) order.push_back(p);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return degree[a] < degree[b]; });
  enum Color { kWhite, kGrey, kBlack };
  std::vector<Color> color(n, kWhite);
  std::vector<bool> in_set(n, false);
  for (int p : order) {
    if (color[p] != kWhite) continue;
    color[p] = kBlack;
    in_set[p] = true;
    for (int i = count[p]; i < count[p] + degree[p]; ++i) {
      if (color[adj[i]] == kWhite) color[adj[i]] = kGrey;
    }
  }
  return in_set;
}

}  // namespace internal
}  // namespace ceres_sqrtba
