#include "ceres_sqrtba/internal/cameras/camera_gram.h"

#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

CameraGram::CameraGram(const ProblemStructure& s, const WorkPartition& partition)
    : s_(s), sum_(s, partition) {
  data_.resize(std::max(1, sum_.size()));
}

// The blocks added their lower triangles; mirror them once per camera.
void CameraGram::Symmetrize() {
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const int n = s_.parameter_blocks[s_.cameras[c]].tangent_size;
    double* g = block(static_cast<int>(c));
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < i; ++k) g[k * n + i] = g[i * n + k];
    }
  }
}

void CameraGram::Scale(const double* scale) {
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
    const int n = pb.tangent_size;
    const double* sc = scale + pb.tangent_offset;
    double* g = block(static_cast<int>(c));
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) g[i * n + k] *= sc[i] * sc[k];
    }
  }
}

}  // namespace internal
}  // namespace ceres_sqrtba
