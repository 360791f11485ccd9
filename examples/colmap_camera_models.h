// COLMAP's camera models: their ids, names and parameter layouts as COLMAP
// stores them (src/colmap/sensor/models.h), and their projections from camera
// coordinates to pixels, templated on the scalar so that Ceres' autodiff can
// differentiate them.
//
// Every model maps a point (x, y, z) in the camera frame to the normalized
// plane (a, b) = (x / z, y / z), distorts it, and scales and shifts it into
// pixels. The fisheye models first replace (a, b) by its equidistant image
// (a, b) * atan(r) / r, r = |(a, b)|, and distort in terms of that angle.
// Pixel (0, 0) is the upper left corner of the image. A point with z below
// machine epsilon does not project (Project returns false), as in COLMAP.
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_CAMERA_MODELS_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_CAMERA_MODELS_H_

#include <cmath>
#include <limits>
#include <string>

#include "ceres/jet.h"

namespace ceres_sqrtba {
namespace examples {
namespace colmap_models {

// COLMAP's numeric model ids (cameras.bin stores them as int32).
enum ModelId : int {
  kSimplePinhole = 0,
  kPinhole = 1,
  kSimpleRadial = 2,
  kRadial = 3,
  kOpenCV = 4,
  kOpenCVFisheye = 5,
  kFullOpenCV = 6,
  kSimpleRadialFisheye = 8,
  kRadialFisheye = 9,
};

// Where each group of a model's parameters lies in its parameter vector.
struct ModelInfo {
  ModelId id;
  const char* name;         // as in cameras.txt
  int num_params;
  int num_focal;            // focal lengths first: f, or fx fy
  int principal_point[2];   // indices of cx, cy
  int first_extra;          // extra (distortion) parameters: first_extra..num_params-1
  const char* params_info;  // parameter names in order
};

inline const ModelInfo* AllModels(int* count) {
  static const ModelInfo kModels[] = {
      {kSimplePinhole, "SIMPLE_PINHOLE", 3, 1, {1, 2}, 3, "f, cx, cy"},
      {kPinhole, "PINHOLE", 4, 2, {2, 3}, 4, "fx, fy, cx, cy"},
      {kSimpleRadial, "SIMPLE_RADIAL", 4, 1, {1, 2}, 3, "f, cx, cy, k"},
      {kRadial, "RADIAL", 5, 1, {1, 2}, 3, "f, cx, cy, k1, k2"},
      {kOpenCV, "OPENCV", 8, 2, {2, 3}, 4, "fx, fy, cx, cy, k1, k2, p1, p2"},
      {kOpenCVFisheye, "OPENCV_FISHEYE", 8, 2, {2, 3}, 4, "fx, fy, cx, cy, k1, k2, k3, k4"},
      {kFullOpenCV, "FULL_OPENCV", 12, 2, {2, 3}, 4,
       "fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6"},
      {kSimpleRadialFisheye, "SIMPLE_RADIAL_FISHEYE", 4, 1, {1, 2}, 3, "f, cx, cy, k"},
      {kRadialFisheye, "RADIAL_FISHEYE", 5, 1, {1, 2}, 3, "f, cx, cy, k1, k2"},
  };
  *count = static_cast<int>(sizeof(kModels) / sizeof(kModels[0]));
  return kModels;
}

// The model with this id or name; null for one this program does not know.
inline const ModelInfo* FindModel(int id) {
  int count = 0;
  const ModelInfo* models = AllModels(&count);
  for (int i = 0; i < count; ++i) {
    if (models[i].id == id) return &models[i];
  }
  return nullptr;
}
inline const ModelInfo* FindModel(const std::string& name) {
  int count = 0;
  const ModelInfo* models = AllModels(&count);
  for (int i = 0; i < count; ++i) {
    if (name == models[i].name) return &models[i];
  }
  return nullptr;
}

// Names of every supported model, for messages.
inline std::string SupportedModelNames() {
  int count = 0;
  const ModelInfo* models = AllModels(&count);
  std::string names;
  for (int i = 0; i < count; ++i) {
    if (i > 0) names += ", ";
    names += models[i].name;
  }
  return names;
}

namespace internal {

// The normalized image coordinates a = x/z, b = y/z of a point in front of
// the camera; false (no projection) for a point on or behind its plane.
template <typename T>
bool ToImagePlane(const T* xyz, T* a, T* b) {
  if (xyz[2] < T(std::numeric_limits<double>::epsilon())) return false;
  *a = xyz[0] / xyz[2];
  *b = xyz[1] / xyz[2];
  return true;
}

using std::atan;
using std::sqrt;
using ceres::atan;
using ceres::sqrt;

// The equidistant fisheye mapping of a point (a, b) of the normalized plane.
template <typename T>
void Equidistant(const T& a, const T& b, T* ea, T* eb) {
  const T r = sqrt(a * a + b * b);
  if (r > T(std::numeric_limits<double>::epsilon())) {
    const T scale = atan(r) / r;
    *ea = a * scale;
    *eb = b * scale;
  } else {
    *ea = a;
    *eb = b;
  }
}

// Pixels from distorted normalized coordinates.
template <typename T>
void ToPixels(const T& fx, const T& fy, const T& cx, const T& cy, const T& a,
              const T& b, T* px, T* py) {
  *px = fx * a + cx;
  *py = fy * b + cy;
}

}  // namespace internal

// One struct per model: kId, kNumParams and
//   template <typename T> static bool Project(const T* params, const T* xyz, T* pixel);
struct SimplePinhole {
  static constexpr ModelId kId = kSimplePinhole;
  static constexpr int kNumParams = 3;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    T a, b;
    if (!internal::ToImagePlane(xyz, &a, &b)) return false;
    internal::ToPixels(p[0], p[0], p[1], p[2], a, b, &pixel[0], &pixel[1]);
    return true;
  }
};

struct Pinhole {
  static constexpr ModelId kId = kPinhole;
  static constexpr int kNumParams = 4;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    T a, b;
    if (!internal::ToImagePlane(xyz, &a, &b)) return false;
    internal::ToPixels(p[0], p[1], p[2], p[3], a, b, &pixel[0], &pixel[1]);
    return true;
  }
};

struct SimpleRadial {
  static constexpr ModelId kId = kSimpleRadial;
  static constexpr int kNumParams = 4;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    T a, b;
    if (!internal::ToImagePlane(xyz, &a, &b)) return false;
    const T r2 = a * a + b * b;
    const T gain = T(1) + p[3] * r2;
    internal::ToPixels(p[0], p[0], p[1], p[2], a * gain, b * gain, &pixel[0], &pixel[1]);
    return true;
  }
};

struct Radial {
  static constexpr ModelId kId = kRadial;
  static constexpr int kNumParams = 5;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    T a, b;
    if (!internal::ToImagePlane(xyz, &a, &b)) return false;
    const T r2 = a * a + b * b;
    const T gain = T(1) + p[3] * r2 + p[4] * r2 * r2;
    internal::ToPixels(p[0], p[0], p[1], p[2], a * gain, b * gain, &pixel[0], &pixel[1]);
    return true;
  }
};

struct OpenCV {
  static constexpr ModelId kId = kOpenCV;
  static constexpr int kNumParams = 8;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    T a, b;
    if (!internal::ToImagePlane(xyz, &a, &b)) return false;
    const T& k1 = p[4];
    const T& k2 = p[5];
    const T& p1 = p[6];
    const T& p2 = p[7];
    const T r2 = a * a + b * b;
    const T gain = T(1) + k1 * r2 + k2 * r2 * r2;
    const T da = T(2) * p1 * a * b + p2 * (r2 + T(2) * a * a);
    const T db = T(2) * p2 * a * b + p1 * (r2 + T(2) * b * b);
    internal::ToPixels(p[0], p[1], p[2], p[3], a * gain + da, b * gain + db, &pixel[0],
                       &pixel[1]);
    return true;
  }
};

struct FullOpenCV {
  static constexpr ModelId kId = kFullOpenCV;
  static constexpr int kNumParams = 12;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    T a, b;
    if (!internal::ToImagePlane(xyz, &a, &b)) return false;
    const T& k1 = p[4];
    const T& k2 = p[5];
    const T& p1 = p[6];
    const T& p2 = p[7];
    const T& k3 = p[8];
    const T& k4 = p[9];
    const T& k5 = p[10];
    const T& k6 = p[11];
    const T r2 = a * a + b * b;
    const T r4 = r2 * r2;
    const T r6 = r4 * r2;
    const T gain = (T(1) + k1 * r2 + k2 * r4 + k3 * r6) / (T(1) + k4 * r2 + k5 * r4 + k6 * r6);
    const T da = T(2) * p1 * a * b + p2 * (r2 + T(2) * a * a);
    const T db = T(2) * p2 * a * b + p1 * (r2 + T(2) * b * b);
    internal::ToPixels(p[0], p[1], p[2], p[3], a * gain + da, b * gain + db, &pixel[0],
                       &pixel[1]);
    return true;
  }
};

struct OpenCVFisheye {
  static constexpr ModelId kId = kOpenCVFisheye;
  static constexpr int kNumParams = 8;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    if (xyz[2] < T(std::numeric_limits<double>::epsilon())) return false;
    T a, b;
    internal::Equidistant(xyz[0] / xyz[2], xyz[1] / xyz[2], &a, &b);
    const T t2 = a * a + b * b;  // theta squared
    const T t4 = t2 * t2;
    const T gain = T(1) + p[4] * t2 + p[5] * t4 + p[6] * t4 * t2 + p[7] * t4 * t4;
    internal::ToPixels(p[0], p[1], p[2], p[3], a * gain, b * gain, &pixel[0], &pixel[1]);
    return true;
  }
};

struct SimpleRadialFisheye {
  static constexpr ModelId kId = kSimpleRadialFisheye;
  static constexpr int kNumParams = 4;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    if (xyz[2] < T(std::numeric_limits<double>::epsilon())) return false;
    T a, b;
    internal::Equidistant(xyz[0] / xyz[2], xyz[1] / xyz[2], &a, &b);
    const T gain = T(1) + p[3] * (a * a + b * b);
    internal::ToPixels(p[0], p[0], p[1], p[2], a * gain, b * gain, &pixel[0], &pixel[1]);
    return true;
  }
};

struct RadialFisheye {
  static constexpr ModelId kId = kRadialFisheye;
  static constexpr int kNumParams = 5;
  template <typename T>
  static bool Project(const T* p, const T* xyz, T* pixel) {
    if (xyz[2] < T(std::numeric_limits<double>::epsilon())) return false;
    T a, b;
    internal::Equidistant(xyz[0] / xyz[2], xyz[1] / xyz[2], &a, &b);
    const T t2 = a * a + b * b;
    const T gain = T(1) + p[3] * t2 + p[4] * t2 * t2;
    internal::ToPixels(p[0], p[0], p[1], p[2], a * gain, b * gain, &pixel[0], &pixel[1]);
    return true;
  }
};

// Calls f.template operator()<Model>() for the model with this id; false for
// an unknown id.
template <typename Visitor>
bool VisitModel(int id, Visitor&& visitor) {
  switch (id) {
    case kSimplePinhole: visitor.template operator()<SimplePinhole>(); return true;
    case kPinhole: visitor.template operator()<Pinhole>(); return true;
    case kSimpleRadial: visitor.template operator()<SimpleRadial>(); return true;
    case kRadial: visitor.template operator()<Radial>(); return true;
    case kOpenCV: visitor.template operator()<OpenCV>(); return true;
    case kOpenCVFisheye: visitor.template operator()<OpenCVFisheye>(); return true;
    case kFullOpenCV: visitor.template operator()<FullOpenCV>(); return true;
    case kSimpleRadialFisheye: visitor.template operator()<SimpleRadialFisheye>(); return true;
    case kRadialFisheye: visitor.template operator()<RadialFisheye>(); return true;
  }
  return false;
}

// The projection in double of any supported model (false: unknown model or
// the point does not project).
bool ProjectWithModel(int id, const double* params, const double* xyz, double* pixel);

}  // namespace colmap_models
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_CAMERA_MODELS_H_
