// EliminationIndependentSet on small graphs worked by hand and on random
// hypergraphs against the definition (independent, maximal) and against a
// direct transcription of the rule (increasing degree, ties by index).
#include "ceres_sqrtba/internal/problem/independent_set.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

struct Hypergraph {
  int num_vertices = 0;
  std::vector<bool> is_constant;
  std::vector<int> edge_begin{0};
  std::vector<int> edge_vertices;

  explicit Hypergraph(int n) : num_vertices(n), is_constant(n, false) {}
  Hypergraph& Edge(std::initializer_list<int> vertices) {
    edge_vertices.insert(edge_vertices.end(), vertices.begin(), vertices.end());
    edge_begin.push_back(static_cast<int>(edge_vertices.size()));
    return *this;
  }
  std::vector<int> Set() const {
    const std::vector<bool> in =
        EliminationIndependentSet(num_vertices, is_constant, edge_begin, edge_vertices);
    EXPECT_EQ(in.size(), static_cast<size_t>(num_vertices));
    std::vector<int> set;
    for (int v = 0; v < num_vertices; ++v) {
      if (in[v]) set.push_back(v);
    }
    return set;
  }
};

using Set = std::vector<int>;

TEST(EliminationIndependentSet, BundleAdjustmentPicksThePoints) {
  // Cameras 0-3 first, so that a tie would go to a camera; points 4-23, each
  // seen by two cameras (degree 2), every camera seeing 10 points.
  Hypergraph g(24);
  for (int p = 0; p < 20; ++p) g.Edge({p % 4, 4 + p}).Edge({(p + 1) % 4, 4 + p});
  Set points;
  for (int p = 4; p < 24; ++p) points.push_back(p);
  EXPECT_EQ(g.Set(), points);

  // Snavely-style residual blocks (pose, intrinsics, point), pose and
  // intrinsics blocks first: still the points.
  Hypergraph h(3 + 3 + 6);  // poses 0-2, intrinsics 3-5, points 6-11
  for (int p = 0; p < 6; ++p) {
    for (int c : {p % 3, (p + 1) % 3}) h.Edge({c, 3 + c, 6 + p});
  }
  EXPECT_EQ(h.Set(), (Set{6, 7, 8, 9, 10, 11}));
}

TEST(EliminationIndependentSet, StarPicksTheLeaves) {
  Hypergraph g(6);  // centre 0
  for (int leaf = 1; leaf < 6; ++leaf) g.Edge({0, leaf});
  EXPECT_EQ(g.Set(), (Set{1, 2, 3, 4, 5}));
  Hypergraph h(6);  // centre 5, last in index order
  for (int leaf = 0; leaf < 5; ++leaf) h.Edge({leaf, 5});
  EXPECT_EQ(h.Set(), (Set{0, 1, 2, 3, 4}));
}

TEST(EliminationIndependentSet, Paths) {
  // 0-1-2-3-4: the ends (degree 1) first, then 2, the only interior vertex
  // left with no chosen neighbour.
  EXPECT_EQ(Hypergraph(5).Edge({0, 1}).Edge({1, 2}).Edge({2, 3}).Edge({3, 4}).Set(),
            (Set{0, 2, 4}));
  // 0-1-2-3: both ends, then nothing is left.
  EXPECT_EQ(Hypergraph(4).Edge({0, 1}).Edge({1, 2}).Edge({2, 3}).Set(), (Set{0, 3}));
  // Labels permuted, 2-0-3-1: degree decides, not the label.
  EXPECT_EQ(Hypergraph(4).Edge({2, 0}).Edge({0, 3}).Edge({3, 1}).Set(), (Set{1, 2}));
}

TEST(EliminationIndependentSet, TiesGoByIndex) {
  // A 6-cycle: all degrees 2, so 0, then 2 and 4.
  Hypergraph cycle(6);
  for (int v = 0; v < 6; ++v) cycle.Edge({v, (v + 1) % 6});
  EXPECT_EQ(cycle.Set(), (Set{0, 2, 4}));
  // One hyperedge over 4 vertices (a clique): the first.
  EXPECT_EQ(Hypergraph(4).Edge({3, 1, 2, 0}).Set(), (Set{0}));
  // The same clique given as 6 edges, in another order, repeated.
  EXPECT_EQ(Hypergraph(4).Edge({2, 3}).Edge({1, 3}).Edge({1, 2}).Edge({0, 3}).Edge({0, 2})
                .Edge({0, 1}).Edge({3, 2}).Set(),
            (Set{0}));
}

TEST(EliminationIndependentSet, ConstantVerticesAreLeftOut) {
  // 0-1 plus a constant vertex 2 in a hyperedge with 0. Counted, 2 would make
  // 0's degree 2 and 1 would be chosen; left out, 0 and 1 tie and 0 is.
  Hypergraph g(3);
  g.Edge({0, 1}).Edge({0, 2}).Edge({2, 0});
  g.is_constant[2] = true;
  EXPECT_EQ(g.Set(), (Set{0}));
  // A constant centre of a star is never chosen; its leaves are isolated.
  Hypergraph star(4);
  star.Edge({3, 0}).Edge({3, 1}).Edge({3, 2});
  star.is_constant[3] = true;
  EXPECT_EQ(star.Set(), (Set{0, 1, 2}));
  // All constant: nothing.
  Hypergraph all(3);
  all.Edge({0, 1, 2});
  all.is_constant.assign(3, true);
  EXPECT_EQ(all.Set(), Set{});
}

TEST(EliminationIndependentSet, IsolatedVerticesAndNoEdges) {
  EXPECT_EQ(Hypergraph(3).Set(), (Set{0, 1, 2}));  // edge_begin = {0}
  Hypergraph empty(2);
  empty.edge_begin.clear();  // no hyperedges at all
  EXPECT_EQ(empty.Set(), (Set{0, 1}));
  // A residual block on one parameter block adds no edge.
  EXPECT_EQ(Hypergraph(3).Edge({1}).Edge({0, 2}).Set(), (Set{0, 1}));
}

// The rule written out directly: neighbour sets, a full sort by (degree,
// index), then the greedy pass.
std::vector<bool> Reference(const Hypergraph& g) {
  std::vector<std::set<int>> neighbours(g.num_vertices);
  for (size_t e = 0; e + 1 < g.edge_begin.size(); ++e) {
    for (int i = g.edge_begin[e]; i < g.edge_begin[e + 1]; ++i) {
      for (int j = g.edge_begin[e]; j < g.edge_begin[e + 1]; ++j) {
        const int p = g.edge_vertices[i], q = g.edge_vertices[j];
        if (p != q && !g.is_constant[p] && !g.is_constant[q]) neighbours[p].insert(q);
      }
    }
  }
  std::vector<int> order;
  for (int v = 0; v < g.num_vertices; ++v) {
    if (!g.is_constant[v]) order.push_back(v);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return neighbours[a].size() != neighbours[b].size() ? neighbours[a].size() < neighbours[b].size()
                                                        : a < b;
  });
  std::vector<bool> in(g.num_vertices, false), blocked(g.num_vertices, false);
  for (int v : order) {
    if (blocked[v]) continue;
    in[v] = true;
    blocked[v] = true;
    for (int w : neighbours[v]) blocked[w] = true;
  }
  return in;
}

TEST(EliminationIndependentSet, RandomHypergraphsGetAMaximalIndependentSet) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 40)(rng);
    Hypergraph g(n);
    std::bernoulli_distribution constant(0.15);
    for (int v = 0; v < n; ++v) g.is_constant[v] = constant(rng);
    const int num_edges = std::uniform_int_distribution<int>(0, 3 * n)(rng);
    std::uniform_int_distribution<int> vertex(0, n - 1), size(1, 4);
    for (int e = 0; e < num_edges; ++e) {
      std::vector<int> vertices;
      for (int k = size(rng); k > 0; --k) {
        const int v = vertex(rng);
        // Ceres rejects a residual block naming a parameter block twice.
        if (std::find(vertices.begin(), vertices.end(), v) == vertices.end()) {
          vertices.push_back(v);
        }
      }
      g.edge_vertices.insert(g.edge_vertices.end(), vertices.begin(), vertices.end());
      g.edge_begin.push_back(static_cast<int>(g.edge_vertices.size()));
    }
    const std::vector<bool> in =
        EliminationIndependentSet(n, g.is_constant, g.edge_begin, g.edge_vertices);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << ", " << n << " vertices");
    EXPECT_EQ(in, Reference(g));
    // The definition, checked on the hyperedges themselves.
    std::vector<bool> covered(n, false);
    for (int e = 0; e + 1 < static_cast<int>(g.edge_begin.size()); ++e) {
      int chosen = 0;
      for (int i = g.edge_begin[e]; i < g.edge_begin[e + 1]; ++i) chosen += in[g.edge_vertices[i]];
      EXPECT_LE(chosen, 1) << "two chosen vertices share hyperedge " << e;
      for (int i = g.edge_begin[e]; chosen > 0 && i < g.edge_begin[e + 1]; ++i) {
        covered[g.edge_vertices[i]] = true;
      }
    }
    for (int v = 0; v < n; ++v) {
      if (g.is_constant[v]) {
        EXPECT_FALSE(in[v]) << "constant vertex " << v << " chosen";
      } else {
        EXPECT_TRUE(covered[v] || in[v]) << "vertex " << v << " could be added: not maximal";
      }
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
