// Clusters of cameras by what they see, for the visibility-based
// preconditioners CLUSTER_JACOBI and CLUSTER_TRIDIAGONAL (Kushal & Agarwal,
// "Visibility Based Preconditioning for Bundle Adjustment", CVPR 2012), built
// as Ceres builds them so that a pipeline that asks for them gets the
// preconditioner it knows (direct/visibility_based_preconditioner.h forms and
// factors it in square-root form).
//
// "Cameras" are the variable blocks that are not eliminated (a pose, a shared
// intrinsics block), as Ceres' f-blocks; camera c sees the set V_c of the
// landmarks of the residual blocks it takes part in.
//
// 1. The Schur complement graph: one vertex per camera, an edge (i, j) where
//    V_i and V_j meet, weighted by their normalized overlap
//        w_ij = |V_i n V_j| / sqrt(|V_i| |V_j|),
//    and a self edge of weight 1 at every camera.
// 2. Clustering (Solver::Options::visibility_clustering_type):
//    CANONICAL_VIEWS  the greedy canonical views of Simon, Snavely & Seitz
//                     with Ceres' weights: starting from no centre, repeatedly
//                     make centre the camera that most raises
//                         sum over cameras i of (max over centres k of w_ik)
//                     less a size penalty of 3 per centre, while that gain is
//                     positive or there are fewer than 3 centres. Each camera
//                     joins the centre it is most similar to; a camera that
//                     shares nothing with any centre joins centre
//                     (camera index mod number of centres), as in Ceres.
//    SINGLE_LINKAGE   the connected components of the edges of weight at
//                     least 0.9.
// 3. Which blocks of the reduced camera matrix S the preconditioner keeps:
//    CLUSTER_JACOBI       the blocks of cameras of the same cluster (S's
//                         block diagonal over clusters);
//    CLUSTER_TRIDIAGONAL  also those between clusters joined in a degree-2
//                         maximum spanning forest of the cluster graph (an
//                         edge between clusters weighted by the number of
//                         landmarks both see; Kruskal's greedy order by
//                         decreasing weight, an edge skipped when it closes a
//                         cycle or gives a cluster a third neighbour).
//
// Ties are broken by camera index (Ceres breaks them in the order of its hash
// sets), so the clusters can differ from Ceres' where two choices score the
// same; the preconditioner is of the same kind either way.
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_VISIBILITY_CLUSTERING_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_VISIBILITY_CLUSTERING_H_

#include <array>
#include <vector>

#include "ceres/types.h"
#include "ceres_sqrtba/internal/common/process_group.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

struct CameraClusters {
  int num_clusters = 0;
  std::vector<int> cluster;  // per camera (camera_index order)
  // CLUSTER_TRIDIAGONAL: the clusters joined to each cluster in the forest
  // (-1: none); CLUSTER_JACOBI: all -1.
  std::vector<std::array<int, 2>> neighbours;

  // Block (c1, c2) of S is in the preconditioner.
  bool Keeps(int c1, int c2) const {
    const int a = cluster[c1], b = cluster[c2];
    return a == b || neighbours[a][0] == b || neighbours[a][1] == b;
  }
  // The block joins two clusters (CLUSTER_TRIDIAGONAL's off-diagonal cells).
  bool Joins(int c1, int c2) const { return cluster[c1] != cluster[c2]; }
};

// Per camera, the sorted landmark indices it sees (step 1's V_c).
std::vector<std::vector<int>> CameraVisibility(const ProblemStructure& s);
// The same over the landmarks of every process of a solve spread over
// processes (each landmark on one of them, numbered after the landmarks of
// the processes before it), the same on every process: each process sends
// its (camera, landmark) pairs to all, once per solve. The clusters depend
// only on how many landmarks cameras share, so they are the one-process
// solve's.
std::vector<std::vector<int>> CameraVisibility(const ProblemStructure& s, const ProcessGroup& processes);

// type: ceres::CLUSTER_JACOBI or ceres::CLUSTER_TRIDIAGONAL.
CameraClusters ClusterCameras(const std::vector<std::vector<int>>& visibility,
                              ceres::VisibilityClusteringType clustering, ceres::PreconditionerType type);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_VISIBILITY_CLUSTERING_H_
