// The landmark batches (landmark_batches.h) and the lane-parallel thin QR
// (batched_thin_qr.h) against the one-landmark code (thin_qr.h):
// - in double a lane's Q1 and R^ equal ThinQrOfSize's bit for bit, whatever
//   the other lanes hold, with padding rows, unused lanes and zero columns;
// - in float the factorization is backward stable: [Jl; S] = Q^_1 R^ and
//   Q^_1^T Q^_1 = I to a small multiple of n u_float (Higham, "Accuracy and
//   Stability of Numerical Algorithms", thm. 19.4: Householder QR's computed
//   factors satisfy A + dA = Q R with |dA| <= gamma~_{nd} |A|, and the
//   formed Q is orthonormal to the same order), so any wrong index or sign
//   fails by O(1);
// - the layout's shape order sorts each chunk and places its storage in that
//   order; every group is in exactly one batch of its chunk, batches hold one
//   shape and are neighbours in storage;
// - ProjectedLandmarkBlocks::Damp batched and one landmark at a time write
//   the same Q1 and R^ (double: bit for bit) and the same right-hand side
//   (summed in another order: to 1e-13 in double, to float's accuracy in
//   float).
#include "ceres_sqrtba/internal/projected/batched_thin_qr.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/projected/landmark_batches.h"
#include "ceres_sqrtba/internal/projected/thin_qr.h"
#include "fused_multiply_add.h"
#include "gtest/gtest.h"
#include "linear_solver_fixture.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using Mat = Eigen::MatrixXd;

// One landmark: its m x d columns (row-major, as the cold rows hold them) and
// its damping.
struct Landmark {
  int m = 0;
  std::vector<double> jl;
  std::vector<double> s;
};

Landmark RandomLandmark(int m, int d, std::mt19937* rng, bool zero_column = false) {
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  Landmark l;
  l.m = m;
  l.jl.resize(m * d);
  for (double& v : l.jl) v = n(*rng);
  l.s.resize(d);
  for (double& v : l.s) v = 0.1 + std::abs(n(*rng));
  if (zero_column) {
    for (int i = 0; i < m; ++i) l.jl[i * d] = 0.0;
    l.s[0] = 0.0;
  }
  return l;
}

// Runs the batched QR on `landmarks` (at most kBatchLanes) at `rows` rows;
// returns per lane Q^_1 (n x d, the first `rows` rows being Q1) and R^.
template <int kD, typename Scalar>
void RunBatched(const std::vector<Landmark>& landmarks, int rows, int d, std::vector<Mat>* q,
                std::vector<Mat>* r) {
  using V = LaneVector<Scalar>;
  const int n = rows + d;
  std::vector<V, Eigen::aligned_allocator<V>> work(BatchedThinQrWorkSize(rows, d) + d * d);
  V* a = work.data();
  V* qq = a + n * d;
  V* beta = qq + n * d;
  V* rr = beta + d;
  for (int i = 0; i < n * d; ++i) a[i] = V::Zero();
  for (size_t l = 0; l < landmarks.size(); ++l) {
    const Landmark& lm = landmarks[l];
    for (int i = 0; i < lm.m; ++i) {
      for (int k = 0; k < d; ++k) a[k * n + i][l] = static_cast<Scalar>(lm.jl[i * d + k]);
    }
    for (int k = 0; k < d; ++k) a[k * n + rows + k][l] = static_cast<Scalar>(lm.s[k]);
  }
  BatchedThinQrOfSize<kD>(rows, d, a, qq, beta, rr);
  q->assign(kBatchLanes<Scalar>, Mat(n, d));
  r->assign(kBatchLanes<Scalar>, Mat(d, d));
  for (int l = 0; l < kBatchLanes<Scalar>; ++l) {
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < d; ++k) (*q)[l](i, k) = qq[k * n + i][l];
    }
    for (int i = 0; i < d; ++i) {
      for (int k = 0; k < d; ++k) (*r)[l](i, k) = rr[i * d + k][l];
    }
  }
}

// ThinQrOfSize on one landmark: Q1 (m x d) and R^.
void RunSingle(const Landmark& lm, int d, Mat* q1, Mat* r) {
  std::vector<double> scratch(ThinQrScratchSize(lm.m, d));
  std::vector<double> rr(d * d);
  q1->resize(lm.m, d);
  ThinQr(lm.m, d, lm.jl.data(), d, lm.s.data(), scratch.data(), rr.data(),
         [&](int i, int k, double v) { (*q1)(i, k) = v; });
  r->resize(d, d);
  for (int i = 0; i < d; ++i) {
    for (int k = 0; k < d; ++k) (*r)(i, k) = rr[i * d + k];
  }
}

template <int kD>
void ExpectDoubleLanesEqualThinQr(int d, int rows, const std::vector<int>& ms) {
  std::mt19937 rng(7 + d + rows);
  std::vector<Landmark> landmarks;
  for (size_t l = 0; l < ms.size() && static_cast<int>(l) < kBatchLanes<double>; ++l) {
    landmarks.push_back(RandomLandmark(ms[l], d, &rng, l == 1));
  }
  std::vector<Mat> q, r;
  RunBatched<kD, double>(landmarks, rows, d, &q, &r);
  for (size_t l = 0; l < landmarks.size(); ++l) {
    Mat q1, r1;
    RunSingle(landmarks[l], d, &q1, &r1);
    const int m = landmarks[l].m;
    // Bit for bit, or with fused multiply-adds (fused_multiply_add.h) to the
    // rounding of a Householder QR of n rows: Q1's entries are at most 1, R's
    // at most the columns' norms.
    const double u = std::numeric_limits<double>::epsilon() / 2;
    const double q_tolerance = testing::kFusedMultiplyAdd ? 20.0 * (rows + d) * d * u : 0.0;
    const double r_tolerance = q_tolerance * std::max(1.0, r1.cwiseAbs().maxCoeff());
    EXPECT_TRUE(((q[l].topRows(m) - q1).array().abs() <= q_tolerance).all())
        << "lane " << l << ", d = " << d << "\n" << q[l].topRows(m) - q1;
    EXPECT_TRUE(q[l].middleRows(m, rows - m).isZero(0.0)) << "padding rows of lane " << l;
    EXPECT_TRUE(((r[l] - r1).array().abs() <= r_tolerance).all())
        << "lane " << l << ", d = " << d << "\n" << r[l] - r1;
  }
  for (size_t l = landmarks.size(); l < static_cast<size_t>(kBatchLanes<double>); ++l) {
    EXPECT_TRUE(r[l].isZero(0.0)) << "unused lane " << l;
    EXPECT_TRUE(q[l].allFinite()) << "unused lane " << l;
  }
}

// Lanes of different row counts in one batch of 20 rows, the shorter ones
// padded (as LandmarkBatches pads: only landmarks with at least d rows, so
// that every reflector's pivot row is one of the landmark's own rows); one
// lane with a zero column; unused lanes left at the end. And batches of
// fewer rows than columns, unpadded.
TEST(BatchedThinQr, DoubleLanesEqualThinQrBitForBit) {
  for (int d : {1, 3, 4}) {
    ExpectDoubleLanesEqualThinQr<kDynamic>(d, 20, {20, 17, 12, 5});
    ExpectDoubleLanesEqualThinQr<kDynamic>(d, 2, {2, 2});
  }
  ExpectDoubleLanesEqualThinQr<3>(3, 20, {20, 17, 12, 5});
  ExpectDoubleLanesEqualThinQr<3>(3, 1, {1, 1, 1});
}

TEST(BatchedThinQr, FloatLanesAreBackwardStable) {
  std::mt19937 rng(11);
  for (int d : {1, 3, 4}) {
    for (int rows : {2, 9, 64}) {
      std::vector<Landmark> landmarks;
      for (int l = 0; l < kBatchLanes<float>; ++l) landmarks.push_back(RandomLandmark(rows - l % 2, d, &rng));
      std::vector<Mat> q, r;
      RunBatched<kDynamic, float>(landmarks, rows, d, &q, &r);
      const int n = rows + d;
      const double u = std::numeric_limits<float>::epsilon() / 2;
      for (int l = 0; l < kBatchLanes<float>; ++l) {
        Mat a = Mat::Zero(n, d);
        for (int i = 0; i < landmarks[l].m; ++i) {
          for (int k = 0; k < d; ++k) a(i, k) = static_cast<float>(landmarks[l].jl[i * d + k]);
        }
        for (int k = 0; k < d; ++k) a(rows + k, k) = static_cast<float>(landmarks[l].s[k]);
        const double bound = 10.0 * n * d * u;
        EXPECT_LT((a - q[l] * r[l]).norm() / a.norm(), bound) << rows << " x " << d << ", lane " << l;
        EXPECT_LT((q[l].transpose() * q[l] - Mat::Identity(d, d)).norm(), bound) << rows << " x " << d;
        EXPECT_TRUE(r[l].triangularView<Eigen::StrictlyLower>().toDenseMatrix().isZero(0.0));
      }
    }
  }
}

TEST(LandmarkBatches, BatchRowsPadsByAtMostAnEighth) {
  for (int m = 1; m <= 5000; ++m) {
    const int rows = LandmarkBatches::BatchRows(m);
    EXPECT_GE(rows, m);
    if (m <= 16) EXPECT_EQ(rows, m);
    EXPECT_LE(rows - m, m / 8) << m;
    EXPECT_LE(LandmarkBatches::BatchRows(m - 1 > 0 ? m - 1 : 1), rows) << "monotone at " << m;
  }
}

testing::RandomProblem ProblemOfManyShapes(int num_landmarks) {
  testing::RandomProblemConfig config;
  config.num_cameras = 12;
  config.camera_size = 9;
  config.num_landmarks = num_landmarks;
  config.landmark_sizes = {3, 3, 3, 4};
  config.min_observations = 2;
  config.max_observations = 12;
  return testing::MakeRandomProblem(config);
}

TEST(LandmarkBatches, ShapeOrderSortsEachChunkAndPlacesItsStorageInThatOrder) {
  testing::RandomProblem problem = ProblemOfManyShapes(600);
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*problem.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  ProjectedBlockLayout layout(s);
  const int n = static_cast<int>(s.groups.size());
  // Built in group order: the offsets are the running sums of the extents.
  auto hot_extent = [&](int g) { return static_cast<int64_t>(layout.rows[g]) * layout.hot_stride(g); };
  auto cold_extent = [&](int g) { return static_cast<int64_t>(layout.rows[g]) * layout.cold_stride(g); };
  for (int g = 0; g < n; ++g) {
    ASSERT_EQ(layout.order[g], g);
    ASSERT_EQ(layout.hot_offset[g] + hot_extent(g), layout.hot_offset[g + 1]);
  }
  const WorkPartition partition(n, layout.work, 5, 1);
  ASSERT_EQ(partition.num_chunks(), 5);
  layout.PlaceInShapeOrder(partition);
  for (int c = 0; c < partition.num_chunks(); ++c) {
    std::vector<int> groups(layout.order.begin() + partition.begin(c), layout.order.begin() + partition.end(c));
    // The chunk's own groups, by shape, then by index.
    for (int p = partition.begin(c); p + 1 < partition.end(c); ++p) {
      const int g = layout.order[p], h = layout.order[p + 1];
      const int kg = LandmarkBatches::ShapeKey(layout, g), kh = LandmarkBatches::ShapeKey(layout, h);
      EXPECT_TRUE(kg < kh || (kg == kh && g < h)) << "positions " << p << ", " << p + 1;
    }
    std::sort(groups.begin(), groups.end());
    for (int i = 0; i < static_cast<int>(groups.size()); ++i) ASSERT_EQ(groups[i], partition.begin(c) + i);
  }
  // Storage back to back in that order: chunk c's storage is the same range
  // as before, each group's extent unchanged.
  int64_t hot = 0, cold = 0, r = 0;
  for (int p = 0; p < n; ++p) {
    const int g = layout.order[p];
    EXPECT_EQ(layout.hot_offset[g], hot);
    EXPECT_EQ(layout.cold_offset[g], cold);
    EXPECT_EQ(layout.r_offset[g], r);
    hot += hot_extent(g);
    cold += cold_extent(g);
    r += static_cast<int64_t>(layout.landmark_size[g]) * layout.landmark_size[g];
  }
  EXPECT_EQ(hot, layout.hot_scalars);
  EXPECT_EQ(layout.hot_offset[n], layout.hot_scalars);
  EXPECT_EQ(cold, layout.cold_scalars);
  EXPECT_EQ(r, layout.r_scalars);
  // The segments and items in storage order too, still each group's own, and
  // every camera entry's items found through entry_items.
  int next_segment = 0, next_item = 0;
  for (int p = 0; p < n; ++p) {
    const int g = layout.order[p];
    EXPECT_EQ(layout.segment_begin[g], next_segment);
    int row = 0;
    for (int sg = layout.segment_begin[g]; sg < layout.segment_end[g]; ++sg) {
      const ProjectedBlockLayout::Segment& seg = layout.segments[sg];
      EXPECT_EQ(seg.row, row);
      EXPECT_EQ(seg.item_begin, next_item);
      for (int it = seg.item_begin; it < seg.item_end; ++it) {
        EXPECT_GE(layout.items[it].entry, s.groups[g].camera_begin);
        EXPECT_LT(layout.items[it].entry, s.groups[g].camera_end);
        EXPECT_EQ(layout.items[it].row, seg.row);
      }
      next_item = seg.item_end;
      row += seg.rows;
    }
    EXPECT_EQ(row, layout.rows[g]);
    next_segment = layout.segment_end[g];
  }
  EXPECT_EQ(next_segment, static_cast<int>(layout.segments.size()));
  EXPECT_EQ(next_item, static_cast<int>(layout.items.size()));
  for (size_t e = 0; e + 1 < layout.entry_item_begin.size(); ++e) {
    for (int i = layout.entry_item_begin[e]; i < layout.entry_item_begin[e + 1]; ++i) {
      EXPECT_EQ(layout.items[layout.entry_items[i]].entry, static_cast<int>(e));
      if (i > layout.entry_item_begin[e]) {
        EXPECT_LT(layout.items[layout.entry_items[i - 1]].row, layout.items[layout.entry_items[i]].row);
      }
    }
  }
  // Idempotent.
  const std::vector<int> order = layout.order;
  layout.PlaceInShapeOrder(partition);
  EXPECT_EQ(layout.order, order);
}

TEST(LandmarkBatches, EveryGroupOnceInABatchOfOneShapeOfNeighboursInStorage) {
  testing::RandomProblem problem = ProblemOfManyShapes(600);
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*problem.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  ProjectedBlockLayout layout(s);
  const WorkPartition partition(static_cast<int>(s.groups.size()), layout.work, 5, 1);
  layout.PlaceInShapeOrder(partition);
  for (int lanes : {1, 4, 8}) {
    LandmarkBatches batches(layout, partition, lanes);
    std::vector<int> seen(s.groups.size(), 0);
    for (int c = 0; c < partition.num_chunks(); ++c) {
      // Per shape of the chunk: groups batched alone (at most one, the end of
      // the shape's run).
      std::map<int, int> alone;
      int position = partition.begin(c);
      for (int b = batches.batch_begin[c]; b < batches.batch_begin[c + 1]; ++b) {
        const LandmarkBatches::Batch& batch = batches.batches[b];
        ASSERT_GE(batch.count, 1);
        ASSERT_LE(batch.count, lanes);
        ASSERT_EQ(batch.first, position) << "batches follow the storage order";
        position += batch.count;
        const int g0 = layout.order[batch.first];
        if (batch.count == 1) ++alone[LandmarkBatches::ShapeKey(layout, g0)];
        for (int l = 0; l < batch.count; ++l) {
          const int g = layout.order[batch.first + l];
          ++seen[g];
          EXPECT_GE(g, partition.begin(c));
          EXPECT_LT(g, partition.end(c));
          if (batch.count > 1) {
            EXPECT_EQ(layout.landmark_size[g], batch.d);
            EXPECT_EQ(LandmarkBatches::BatchRows(layout.rows[g]), batch.rows);
            // Neighbours in storage: lane l + 1 starts where lane l ends.
            if (l > 0) {
              const int prev = layout.order[batch.first + l - 1];
              EXPECT_EQ(layout.cold_offset[g],
                        layout.cold_offset[prev] + layout.rows[prev] * layout.cold_stride(prev));
              EXPECT_EQ(layout.hot_offset[g], layout.hot_offset[prev] + layout.rows[prev] * layout.hot_stride(prev));
            }
          }
        }
      }
      EXPECT_EQ(position, partition.end(c));
      for (const auto& [key, count] : alone) {
        if (lanes > 1 && key != LandmarkBatches::kNumShapeKeys - 1) EXPECT_EQ(count, 1) << "shape " << key;
      }
    }
    for (size_t g = 0; g < seen.size(); ++g) EXPECT_EQ(seen[g], 1) << "group " << g;
    if (lanes == 1) EXPECT_EQ(batches.batched_groups, 0);
    if (lanes > 1) EXPECT_GT(batches.batched_groups, 0);
  }
}

// The damping tests' problem: 300 landmarks of sizes 3 and 4, each seen by 2
// to 9 of 10 cameras, stored in shape order over 4 chunks, evaluated on 2
// threads.
struct DampScene {
  DampScene() : problem(testing::MakeRandomProblem(Config())) {
    ok = BuildProblemStructure(*problem.problem, nullptr, &s, &error) == StructureStatus::kOk;
    if (!ok) return;
    layout = std::make_unique<ProjectedBlockLayout>(s);
    partition = std::make_unique<WorkPartition>(static_cast<int>(s.groups.size()), layout->work, 4, 1);
    layout->PlaceInShapeOrder(*partition);
    evaluator = std::make_unique<Evaluator>(s, *partition, &context);
  }
  static testing::RandomProblemConfig Config() {
    testing::RandomProblemConfig config;
    config.num_cameras = 10;
    config.camera_size = 9;
    config.num_landmarks = 300;
    config.landmark_sizes = {3, 3, 4};
    config.min_observations = 2;
    config.max_observations = 9;
    return config;
  }
  // The Jacobian at the problem's state, into blocks.
  template <typename Scalar>
  bool Evaluate(ProjectedLandmarkBlocks<Scalar>* blocks) {
    std::vector<double> x = StateFromUser(s), g(s.num_effective_parameters);
    double cost;
    return evaluator->EvaluateJacobian(x.data(), true, &cost, g.data(), blocks);
  }
  template <typename Scalar>
  std::unique_ptr<ProjectedLandmarkBlocks<Scalar>> Blocks(LandmarkQr qr) {
    return std::make_unique<ProjectedLandmarkBlocks<Scalar>>(s, *layout, *partition, &context, qr);
  }

  testing::RandomProblem problem;
  ProblemStructure s;
  std::string error;
  bool ok = false;
  std::unique_ptr<ProjectedBlockLayout> layout;
  std::unique_ptr<WorkPartition> partition;
  ParallelContext context{2};
  std::unique_ptr<Evaluator> evaluator;
};

// Damp with and without batches on the same Jacobian.
template <typename Scalar>
void CompareDamp(double rhs_tolerance, bool bitwise) {
  DampScene scene;
  ASSERT_TRUE(scene.ok) << scene.error;
  const ProblemStructure& s = scene.s;
  const ProjectedBlockLayout& layout = *scene.layout;
  const auto batched_blocks = scene.Blocks<Scalar>(LandmarkQr::kBatchedInScalar);
  const auto single_blocks = scene.Blocks<Scalar>(LandmarkQr::kOneAtATime);
  ProjectedLandmarkBlocks<Scalar>& batched = *batched_blocks;
  ProjectedLandmarkBlocks<Scalar>& single = *single_blocks;
  ASSERT_GT(batched.batches().batched_groups, 0);
  ASSERT_TRUE(scene.Evaluate(&batched));
  ASSERT_TRUE(scene.Evaluate(&single));
  std::vector<double> d(s.num_effective_parameters);
  std::mt19937 rng(5);
  ::ceres_sqrtba::testing::UniformRealDistribution u(0.05, 2.0);
  for (double& v : d) v = u(rng);
  std::vector<double> rhs_b(s.num_camera_parameters), rhs_s(s.num_camera_parameters);
  batched.Damp(d.data(), rhs_b.data());
  single.Damp(d.data(), rhs_s.data());
  double max_diff = 0.0, scale = 0.0;
  for (int i = 0; i < s.num_camera_parameters; ++i) {
    max_diff = std::max(max_diff, std::abs(rhs_b[i] - rhs_s[i]));
    scale = std::max(scale, std::abs(rhs_s[i]));
  }
  EXPECT_LE(max_diff, rhs_tolerance * scale);
  double q_diff = 0.0;
  for (size_t gi = 0; gi < s.groups.size(); ++gi) {
    const int cw = layout.camera_width[gi], dd = layout.landmark_size[gi], hs = layout.hot_stride(gi);
    for (int i = 0; i < layout.rows[gi]; ++i) {
      for (int k = 0; k < dd; ++k) {
        const double a = batched.hot_rows(gi)[i * hs + cw + k], b = single.hot_rows(gi)[i * hs + cw + k];
        if (bitwise) {
          ASSERT_EQ(a, b) << "group " << gi << " row " << i;
        }
        q_diff = std::max(q_diff, std::abs(a - b));
      }
    }
  }
  // Float: Q1 entries (at most 1) to a few hundred units of float's rounding.
  EXPECT_LE(q_diff, bitwise ? 0.0 : 1e-4);
  // And the steps that back substitution computes from them.
  std::vector<double> y_b(s.num_effective_parameters, 0.0), y_s(s.num_effective_parameters, 0.0);
  for (int i = 0; i < s.num_camera_parameters; ++i) {
    y_b[s.camera_tangent_begin + i] = y_s[s.camera_tangent_begin + i] = 0.01 * (i % 7);
  }
  const double jy_b = batched.BackSubstitute(y_b.data()), jy_s = single.BackSubstitute(y_s.data());
  EXPECT_NEAR(jy_b, jy_s, (bitwise ? 1e-13 : 1e-4) * std::abs(jy_s));
  for (int i = 0; i < s.camera_tangent_begin; ++i) {
    if (bitwise) {
      ASSERT_EQ(y_b[i], y_s[i]) << "landmark step entry " << i;
    } else {
      EXPECT_NEAR(y_b[i], y_s[i], 1e-3 * (1.0 + std::abs(y_s[i]))) << "landmark step entry " << i;
    }
  }
}

// With fused multiply-adds (fused_multiply_add.h) the values to the float
// tolerances of CompareDamp, which bound any rounding difference in double
// too (the right-hand side stays at 1e-13).
TEST(ProjectedDamp, BatchedEqualsOneLandmarkAtATimeInDouble) {
  CompareDamp<double>(1e-13, !testing::kFusedMultiplyAdd);
}
TEST(ProjectedDamp, BatchedMatchesOneLandmarkAtATimeInFloat) { CompareDamp<float>(1e-4, false); }

// The visitor of Damp: every group once, from its own chunk, after its Q1 is
// in the hot rows; q1 is that Q1 in double (the hot rows hold it rounded to
// Scalar) when the visitor uses it and nullptr when it says it reads the hot
// rows only; visiting changes nothing that Damp writes.
template <typename Scalar>
class RecordingVisitor : public ProjectedLandmarkBlocks<Scalar>::Visitor {
 public:
  RecordingVisitor(const ProjectedLandmarkBlocks<Scalar>& blocks, const ProjectedBlockLayout& layout,
                   const WorkPartition& partition, bool uses_q1)
      : blocks_(blocks), layout_(layout), partition_(partition), uses_q1_(uses_q1),
        visits_(partition.num_chunks()) {}
  bool UsesQ1() const override { return uses_q1_; }
  void BeginChunk(int chunk) override { visits_[chunk].clear(); }
  void Visit(int chunk, int g, const double* q1) override {
    visits_[chunk].push_back(g);
    if (g < partition_.begin(chunk) || g >= partition_.end(chunk)) ++wrong_chunk_;
    if (!uses_q1_) {
      if (q1 != nullptr) ++unexpected_q1_;
      return;
    }
    if (q1 == nullptr) {
      ++missing_q1_;
      return;
    }
    const int cw = layout_.camera_width[g], d = layout_.landmark_size[g], hs = layout_.hot_stride(g);
    for (int i = 0; i < layout_.rows[g]; ++i) {
      for (int k = 0; k < d; ++k) {
        if (static_cast<Scalar>(q1[i * d + k]) != blocks_.hot_rows(g)[i * hs + cw + k]) ++q1_differs_;
      }
    }
  }
  std::vector<int> VisitedGroups() const {
    std::vector<int> all;
    for (const std::vector<int>& v : visits_) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    return all;
  }
  int wrong_chunk_ = 0, unexpected_q1_ = 0, missing_q1_ = 0, q1_differs_ = 0;

 private:
  const ProjectedLandmarkBlocks<Scalar>& blocks_;
  const ProjectedBlockLayout& layout_;
  const WorkPartition& partition_;
  const bool uses_q1_;
  std::vector<std::vector<int>> visits_;  // per chunk: written by its thread only
};

template <typename Scalar>
void CheckDampVisitor(LandmarkQr qr) {
  DampScene scene;
  ASSERT_TRUE(scene.ok) << scene.error;
  const ProblemStructure& s = scene.s;
  const ProjectedBlockLayout& layout = *scene.layout;
  const WorkPartition& partition = *scene.partition;
  const auto owned = scene.Blocks<Scalar>(qr);
  ProjectedLandmarkBlocks<Scalar>& blocks = *owned;
  ASSERT_TRUE(scene.Evaluate(&blocks));
  std::vector<double> d(s.num_effective_parameters, 0.3);
  std::vector<double> plain(s.num_camera_parameters);
  blocks.Damp(d.data(), plain.data());
  // The whole hot storage (hot_offset: per group in storage order, the
  // last entry its end).
  const Scalar* hot_begin = blocks.hot_rows(0) - layout.hot_offset[0];
  const std::vector<Scalar> hot(hot_begin, hot_begin + layout.hot_offset.back());
  std::vector<int> every(s.groups.size());
  for (size_t gi = 0; gi < every.size(); ++gi) every[gi] = static_cast<int>(gi);
  for (const bool uses_q1 : {true, false}) {
    RecordingVisitor<Scalar> visitor(blocks, layout, partition, uses_q1);
    std::vector<double> rhs(s.num_camera_parameters);
    blocks.Damp(d.data(), rhs.data(), &visitor);
    EXPECT_EQ(visitor.VisitedGroups(), every) << "uses_q1 " << uses_q1;
    EXPECT_EQ(visitor.wrong_chunk_, 0);
    EXPECT_EQ(visitor.unexpected_q1_, 0);
    EXPECT_EQ(visitor.missing_q1_, 0);
    EXPECT_EQ(visitor.q1_differs_, 0);
    EXPECT_EQ(rhs, plain) << "uses_q1 " << uses_q1;
    EXPECT_TRUE(std::equal(hot.begin(), hot.end(), hot_begin)) << "uses_q1 " << uses_q1;
  }
}

TEST(ProjectedDamp, VisitorGetsQ1InDoubleOnlyWhenItUsesIt) {
  CheckDampVisitor<float>(LandmarkQr::kBatchedInScalar);
  CheckDampVisitor<float>(LandmarkQr::kBatchedInDouble);
  CheckDampVisitor<float>(LandmarkQr::kOneAtATime);
  CheckDampVisitor<double>(LandmarkQr::kBatchedInScalar);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
