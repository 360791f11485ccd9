// Reading a ceres::Problem through Ceres' public API, once, before anything
// else: the parameter blocks (sizes, manifolds, constancy, bounds) and the
// residual blocks (cost and loss functions, sizes, parameter blocks).
//
// Every Ceres query is a lookup in Ceres' maps or a visit to a residual
// block's own heap object: the queries run in parallel, each residual block
// is visited once, and the order of the result depends on the problem only
// (never on addresses or thread count), so that the work partition and every
// sum built on it are the same in every run.
//
// Parameter blocks are numbered in order of first use by the residual blocks
// (Ceres' program order for blocks created by AddResidualBlock), then the
// unused ones in the order Problem::GetParameterBlocks lists them. Residual
// blocks whose parameter blocks are all constant only add to the fixed cost
// (ProblemStructure::fixed_residual_blocks), as Ceres removes them from its
// reduced program; variable blocks that no residual block uses are marked
// constant and keep their values, as Ceres removes them too.
#ifndef CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_READER_H_
#define CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_READER_H_

#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class ParallelContext;

// The bounds of the parameter blocks. Ceres answers a bound query with a
// lookup in its map of blocks and has no "has bounds" query, so finding that
// a block has none takes two lookups per value: for a BAL problem, 3 values
// per point, 60% of all the lookups reading the problem makes. Nothing but
// the trust-region loop's projection needs them, so they are read on one of
// the context's workers while the calling thread builds the structure from
// the rest (Start ... Finish), and are the same values, in the same order,
// as a serial read.
class BoundsReader {
 public:
  // context (optional): without one, Start reads the bounds itself.
  BoundsReader(const ceres::Problem& problem, ParallelContext* context);
  ~BoundsReader();  // waits for a reading still running
  BoundsReader(const BoundsReader&) = delete;
  BoundsReader& operator=(const BoundsReader&) = delete;

  // Starts reading the bounds of s's parameter blocks, as their values,
  // sizes and constancy are now.
  void Start(const ProblemStructure& s);

  // Waits for the reading and checks the boxes as Ceres does before it
  // solves: false, with Ceres' message, when one is infeasible. Else records
  // each bounded block's bounds in s (bounds_offset, lower_bounds,
  // upper_bounds).
  bool Finish(ProblemStructure* s, std::string* error);

 private:
  void Read();

  const ceres::Problem& problem_;
  ParallelContext* context_;
  bool running_ = false;
  // Per parameter block, copied by Start: the reading must not share them
  // with the structure being built.
  std::vector<const double*> values_;
  std::vector<int> sizes_;
  std::vector<char> constant_;
  // Results: per block, the offset of its bounds (-1 if none), and the bounds.
  std::vector<int> offsets_;
  std::vector<double> lower_, upper_;
};

// Fills s->parameter_blocks (all but the bounds), s->index_of,
// s->residual_parameters and s->fixed_residual_blocks, and returns the
// residual blocks with a variable parameter block; starts `bounds`. False,
// with Ceres' own message, when a parameter value is not finite (Ceres
// refuses such problems before it solves). context (optional): runs the
// queries in parallel.
bool ReadProblem(const ceres::Problem& problem, ParallelContext* context, ProblemStructure* s,
                 std::vector<ResidualBlockInfo>* residuals, BoundsReader* bounds, std::string* error);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_READER_H_
