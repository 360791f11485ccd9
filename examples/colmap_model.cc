// COLMAP models (colmap_model.h): the model's methods (indexes, equality),
// rigid transforms and the images' poses in rig models, format detection,
// reading a folder's files and writing them.
//
// Each file is read whole into memory (its size checked against the memory
// available first), then parsed (colmap_text_reader.cc,
// colmap_binary_reader.cc) in COLMAP's order: cameras, rigs, frames, images,
// points3D; then the ids are cross-checked (colmap_model_checks.cc). Writing
// serializes every file first (colmap_model_writer.cc), writes each under a
// temporary name in the folder and renames them into place at the end.
#include "colmap_model.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "colmap_model_internal.h"

namespace ceres_sqrtba {
namespace examples {

using namespace colmap_internal;  // NOLINT: the readers' shared parts

// ------------------------------------------------------------- poses ----

namespace {

// v rotated by the unit quaternion q (w, x, y, z), as Eigen rotates it:
// v + w t + u x t with t = 2 u x v, u the vector part.
void Rotate(const double* q, const double* v, double* out) {
  const double t[3] = {2.0 * (q[2] * v[2] - q[3] * v[1]), 2.0 * (q[3] * v[0] - q[1] * v[2]),
                       2.0 * (q[1] * v[1] - q[2] * v[0])};
  out[0] = v[0] + q[0] * t[0] + (q[2] * t[2] - q[3] * t[1]);
  out[1] = v[1] + q[0] * t[1] + (q[3] * t[0] - q[1] * t[2]);
  out[2] = v[2] + q[0] * t[2] + (q[1] * t[1] - q[2] * t[0]);
}

}  // namespace

ColmapRigid3 operator*(const ColmapRigid3& a, const ColmapRigid3& b) {
  const double* p = a.qvec;
  const double* q = b.qvec;
  // The Hamilton product p q (w, x, y, z), normalized.
  double r[4] = {p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
                 p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
                 p[0] * q[2] + p[2] * q[0] + p[3] * q[1] - p[1] * q[3],
                 p[0] * q[3] + p[3] * q[0] + p[1] * q[2] - p[2] * q[1]};
  const double norm = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
  ColmapRigid3 c;
  for (int k = 0; k < 4; ++k) c.qvec[k] = r[k] / norm;
  Rotate(p, b.tvec, c.tvec);
  for (int k = 0; k < 3; ++k) c.tvec[k] += a.tvec[k];
  return c;
}

ColmapRigid3 Inverse(const ColmapRigid3& a) {
  const double* q = a.qvec;
  const double norm2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  ColmapRigid3 inverse;
  inverse.qvec[0] = q[0] / norm2;
  for (int k = 1; k < 4; ++k) inverse.qvec[k] = -q[k] / norm2;
  const double minus_t[3] = {-a.tvec[0], -a.tvec[1], -a.tvec[2]};
  Rotate(inverse.qvec, minus_t, inverse.tvec);
  return inverse;
}

const char* ColmapSensorTypeName(ColmapSensorType type) {
  switch (type) {
    case ColmapSensorType::kCamera:
      return "CAMERA";
    case ColmapSensorType::kImu:
      return "IMU";
    case ColmapSensorType::kInvalid:
      break;
  }
  return "INVALID";
}

ColmapRigid3 ColmapCamFromWorld(const ColmapModel& model, int image) {
  const int f = model.ImageFrameIndex(image);
  if (f < 0) {
    ColmapRigid3 pose;
    std::copy(model.images[image].qvec, model.images[image].qvec + 4, pose.qvec);
    std::copy(model.images[image].tvec, model.images[image].tvec + 3, pose.tvec);
    return pose;
  }
  const ColmapFrame& frame = model.frames[f];
  const int s = model.ImageSensorIndex(image);
  if (s < 0) return frame.rig_from_world;
  const ColmapRig& rig = model.rigs[model.RigIndex(frame.rig_id)];
  return rig.sensors[s].sensor_from_rig * frame.rig_from_world;
}

// ------------------------------------------------------------- model ----

int64_t ColmapModel::NumTrackElements() const {
  int64_t total = 0;
  for (const ColmapPoint3D& point : points3D) total += static_cast<int64_t>(point.track.size());
  return total;
}

namespace {

template <typename Record>
void IndexById(const std::vector<Record>& records, std::vector<std::pair<uint32_t, int>>* index) {
  index->clear();
  index->reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) index->emplace_back(records[i].id, i);
  std::sort(index->begin(), index->end());
}

int Lookup(const std::vector<std::pair<uint32_t, int>>& index, uint32_t id) {
  const auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(id, -1));
  if (it == index.end() || it->first != id) return -1;
  return it->second;
}

}  // namespace

void ColmapModel::BuildIndex() {
  IndexById(cameras, &camera_index_);
  IndexById(images, &image_index_);
  IndexById(rigs, &rig_index_);
  IndexById(frames, &frame_index_);
  image_frame_.assign(images.size(), -1);
  image_sensor_.assign(images.size(), -1);
  if (!has_rigs_and_frames) return;
  // Each image's frame: the first that lists it as data of its camera, a
  // sensor of the frame's rig (the reader checked that there is one).
  for (size_t f = 0; f < frames.size(); ++f) {
    const int r = RigIndex(frames[f].rig_id);
    if (r < 0) continue;
    for (const ColmapDataId& data_id : frames[f].data_ids) {
      if (data_id.sensor.type != ColmapSensorType::kCamera || data_id.id > UINT32_MAX) continue;
      const int i = ImageIndex(static_cast<uint32_t>(data_id.id));
      if (i < 0 || image_frame_[i] >= 0 || images[i].camera_id != data_id.sensor.id) continue;
      const int s = FindRigSensor(rigs[r], data_id.sensor);
      if (s == kNotInRig) continue;
      image_frame_[i] = static_cast<int>(f);
      image_sensor_[i] = s;
    }
  }
}

int ColmapModel::CameraIndex(uint32_t id) const { return Lookup(camera_index_, id); }
int ColmapModel::ImageIndex(uint32_t id) const { return Lookup(image_index_, id); }
int ColmapModel::RigIndex(uint32_t id) const { return Lookup(rig_index_, id); }
int ColmapModel::FrameIndex(uint32_t id) const { return Lookup(frame_index_, id); }

int ColmapModel::ImageFrameIndex(int image) const {
  if (image < 0 || static_cast<size_t>(image) >= image_frame_.size()) return -1;
  return image_frame_[image];
}

int ColmapModel::ImageSensorIndex(int image) const {
  if (image < 0 || static_cast<size_t>(image) >= image_sensor_.size()) return -1;
  return image_sensor_[image];
}

namespace {

bool Same(double x, double y) { return std::memcmp(&x, &y, sizeof(double)) == 0; }

bool SamePose(const ColmapRigid3& a, const ColmapRigid3& b) {
  for (int k = 0; k < 4; ++k) {
    if (!Same(a.qvec[k], b.qvec[k])) return false;
  }
  for (int k = 0; k < 3; ++k) {
    if (!Same(a.tvec[k], b.tvec[k])) return false;
  }
  return true;
}

bool SameSensor(const ColmapSensorId& a, const ColmapSensorId& b) {
  return a.type == b.type && a.id == b.id;
}

bool SameRigsAndFrames(const ColmapModel& a, const ColmapModel& b) {
  if (a.has_rigs_and_frames != b.has_rigs_and_frames || a.rigs.size() != b.rigs.size() ||
      a.frames.size() != b.frames.size()) {
    return false;
  }
  for (size_t r = 0; r < a.rigs.size(); ++r) {
    const ColmapRig& x = a.rigs[r];
    const ColmapRig& y = b.rigs[r];
    if (x.id != y.id || x.has_ref_sensor != y.has_ref_sensor ||
        !SameSensor(x.ref_sensor, y.ref_sensor) || x.sensors.size() != y.sensors.size()) {
      return false;
    }
    for (size_t k = 0; k < x.sensors.size(); ++k) {
      if (!SameSensor(x.sensors[k].sensor, y.sensors[k].sensor) ||
          x.sensors[k].has_sensor_from_rig != y.sensors[k].has_sensor_from_rig ||
          !SamePose(x.sensors[k].sensor_from_rig, y.sensors[k].sensor_from_rig)) {
        return false;
      }
    }
  }
  for (size_t f = 0; f < a.frames.size(); ++f) {
    const ColmapFrame& x = a.frames[f];
    const ColmapFrame& y = b.frames[f];
    if (x.id != y.id || x.rig_id != y.rig_id || !SamePose(x.rig_from_world, y.rig_from_world) ||
        x.data_ids.size() != y.data_ids.size()) {
      return false;
    }
    for (size_t d = 0; d < x.data_ids.size(); ++d) {
      if (!SameSensor(x.data_ids[d].sensor, y.data_ids[d].sensor) ||
          x.data_ids[d].id != y.data_ids[d].id) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

bool operator==(const ColmapModel& a, const ColmapModel& b) {
  if (a.cameras.size() != b.cameras.size() || a.images.size() != b.images.size() ||
      a.points3D.size() != b.points3D.size() || !SameRigsAndFrames(a, b)) {
    return false;
  }
  for (size_t i = 0; i < a.cameras.size(); ++i) {
    const ColmapCamera& x = a.cameras[i];
    const ColmapCamera& y = b.cameras[i];
    if (x.id != y.id || x.model_id != y.model_id || x.width != y.width ||
        x.height != y.height || x.params.size() != y.params.size()) {
      return false;
    }
    for (size_t k = 0; k < x.params.size(); ++k) {
      if (!Same(x.params[k], y.params[k])) return false;
    }
  }
  for (size_t i = 0; i < a.images.size(); ++i) {
    const ColmapImage& x = a.images[i];
    const ColmapImage& y = b.images[i];
    if (x.id != y.id || x.camera_id != y.camera_id || x.name != y.name ||
        x.points2D.size() != y.points2D.size()) {
      return false;
    }
    for (int k = 0; k < 4; ++k) if (!Same(x.qvec[k], y.qvec[k])) return false;
    for (int k = 0; k < 3; ++k) if (!Same(x.tvec[k], y.tvec[k])) return false;
    for (size_t k = 0; k < x.points2D.size(); ++k) {
      if (!Same(x.points2D[k].x, y.points2D[k].x) || !Same(x.points2D[k].y, y.points2D[k].y) ||
          x.points2D[k].point3D_id != y.points2D[k].point3D_id) {
        return false;
      }
    }
  }
  for (size_t i = 0; i < a.points3D.size(); ++i) {
    const ColmapPoint3D& x = a.points3D[i];
    const ColmapPoint3D& y = b.points3D[i];
    if (x.id != y.id || !Same(x.error, y.error) || x.track.size() != y.track.size()) return false;
    for (int k = 0; k < 3; ++k) {
      if (!Same(x.xyz[k], y.xyz[k]) || x.color[k] != y.color[k]) return false;
    }
    for (size_t k = 0; k < x.track.size(); ++k) {
      if (x.track[k].image_id != y.track[k].image_id ||
          x.track[k].point2D_idx != y.track[k].point2D_idx) {
        return false;
      }
    }
  }
  return true;
}

// ------------------------------------------------------------- reading ----

std::string ColmapFileName(const char* stem, ColmapFormat format) {
  return std::string(stem) + (format == ColmapFormat::kText ? ".txt" : ".bin");
}

namespace {

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

bool ReadWholeFile(const std::string& path, const ColmapReadOptions& options,
                   std::string* data, std::string* error) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat info;
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file);
    *error = path + ": not a regular file";
    return false;
  }
  const int64_t limit = MemoryLimit(options);
  if (limit > 0 && static_cast<double>(info.st_size) > static_cast<double>(limit) / 3.0) {
    std::fclose(file);
    *error = path + ": the file (" + MiB(static_cast<double>(info.st_size)) +
             ") needs more than the " + MiB(static_cast<double>(limit)) +
             " of memory available to be read";
    return false;
  }
  data->resize(static_cast<size_t>(info.st_size));
  const size_t got = data->empty() ? 0 : std::fread(&(*data)[0], 1, data->size(), file);
  const bool failed = got != data->size() || std::ferror(file);
  std::fclose(file);
  if (failed) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  return true;
}

// Parses the files in COLMAP's order, then checks them across.
bool Parse(ReadContext* context, const ColmapFiles& files, const ColmapReadOptions& options,
           ColmapModel* model) {
  if (files.rigs.has_value() != files.frames.has_value()) {
    const char* there = files.rigs.has_value() ? kRigs : kFrames;
    const char* missing = files.rigs.has_value() ? kFrames : kRigs;
    context->SetFile(there);
    return context->Fail(-1, "there is no " + context->Name(missing) +
                                 " beside it (COLMAP reads rigs and frames together: both "
                                 "files, or neither in a model without rigs)");
  }
  const int64_t limit = MemoryLimit(options);
  double file_bytes = static_cast<double>(files.cameras.size()) +
                      static_cast<double>(files.images.size()) +
                      static_cast<double>(files.points3D.size());
  if (files.rigs.has_value()) {
    file_bytes +=
        static_cast<double>(files.rigs->size()) + static_cast<double>(files.frames->size());
  }
  if (limit > 0 && 3.0 * file_bytes > static_cast<double>(limit)) {
    // The model takes about as much memory as its files, and the files are
    // held while it is built.
    context->SetFile(kImages);
    return context->Fail(-1, "the model's files (" + MiB(file_bytes) + ") need more than the " +
                                 MiB(static_cast<double>(limit)) +
                                 " of memory available to be read");
  }
  model->has_rigs_and_frames = files.rigs.has_value();
  const bool text = context->format() == ColmapFormat::kText;
  if (!(text ? ParseCamerasText : ParseCamerasBinary)(files.cameras, context, model)) return false;
  if (model->has_rigs_and_frames) {
    if (!(text ? ParseRigsText : ParseRigsBinary)(*files.rigs, context, model) ||
        !(text ? ParseFramesText : ParseFramesBinary)(*files.frames, context, model)) {
      return false;
    }
  }
  if (!(text ? ParseImagesText : ParseImagesBinary)(files.images, context, model) ||
      !(text ? ParsePoints3DText : ParsePoints3DBinary)(files.points3D, context, model) ||
      !CheckPointReferences(context, model)) {
    return false;
  }
  if (model->has_rigs_and_frames && !CheckRigsAndFrames(context, model)) return false;
  const double observations = static_cast<double>(model->NumTrackElements());
  const double need = observations * static_cast<double>(options.solve_bytes_per_observation);
  if (limit > 0 && options.solve_bytes_per_observation > 0 && need > static_cast<double>(limit)) {
    context->SetFile(kPoints3D);
    return context->Fail(-1, "the model's " + std::to_string(model->NumTrackElements()) +
                                 " observations need " + MiB(need) +
                                 " to solve, more than the " + MiB(static_cast<double>(limit)) +
                                 " of memory available");
  }
  return true;
}

}  // namespace

bool DetectColmapFormat(const std::string& folder, ColmapFormat* format, std::string* error) {
  for (const ColmapFormat candidate : {ColmapFormat::kBinary, ColmapFormat::kText}) {
    if (Exists(Join(folder, ColmapFileName(kCameras, candidate))) &&
        Exists(Join(folder, ColmapFileName(kImages, candidate))) &&
        Exists(Join(folder, ColmapFileName(kPoints3D, candidate)))) {
      *format = candidate;
      return true;
    }
  }
  struct stat info;
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    *error = folder + ": not a folder";
  } else {
    *error = folder + ": no COLMAP model (expected cameras.bin, images.bin and points3D.bin, "
                      "or cameras.txt, images.txt and points3D.txt)";
  }
  return false;
}

bool ReadColmapModelFromMemory(ColmapFormat format, const std::string& folder,
                               const ColmapFiles& files, const ColmapReadOptions& options,
                               ColmapModel* model, std::string* error) {
  *model = ColmapModel();
  ReadContext context(folder, format, error);
  if (!Parse(&context, files, options, model)) {
    *model = ColmapModel();
    return false;
  }
  return true;
}

bool ReadColmapModelFromMemory(ColmapFormat format, const std::string& folder,
                               const std::string& cameras, const std::string& images,
                               const std::string& points3D, const ColmapReadOptions& options,
                               ColmapModel* model, std::string* error) {
  ColmapFiles files;
  files.cameras = cameras;
  files.images = images;
  files.points3D = points3D;
  return ReadColmapModelFromMemory(format, folder, files, options, model, error);
}

bool ReadColmapModel(const std::string& folder, const ColmapReadOptions& options,
                     ColmapModel* model, ColmapFormat* format, std::string* error) {
  *model = ColmapModel();
  if (!DetectColmapFormat(folder, format, error)) return false;
  ColmapFiles files;
  const std::pair<const char*, std::string*> required[3] = {
      {kCameras, &files.cameras}, {kImages, &files.images}, {kPoints3D, &files.points3D}};
  for (const auto& [stem, data] : required) {
    if (!ReadWholeFile(Join(folder, ColmapFileName(stem, *format)), options, data, error)) {
      return false;
    }
  }
  // rigs.* and frames.* of the model's format, when there (the parser
  // refuses one without the other).
  for (std::optional<std::string>* data : {&files.rigs, &files.frames}) {
    const char* stem = data == &files.rigs ? kRigs : kFrames;
    const std::string path = Join(folder, ColmapFileName(stem, *format));
    if (!Exists(path)) continue;
    data->emplace();
    if (!ReadWholeFile(path, options, &**data, error)) return false;
  }
  return ReadColmapModelFromMemory(*format, folder, files, options, model, error);
}

// ------------------------------------------------------------- writing ----

namespace {

constexpr const char* kStems[5] = {kCameras, kImages, kPoints3D, kRigs, kFrames};

// "a", "a and b", "a, b and c".
std::string List(const std::vector<std::string>& names) {
  std::string out;
  for (size_t k = 0; k < names.size(); ++k) {
    if (k > 0) out += k + 1 == names.size() ? " and " : ", ";
    out += names[k];
  }
  return out;
}

}  // namespace

bool CheckColmapOutputFolder(const ColmapModel& model, const std::string& folder,
                             ColmapFormat format, std::string* error) {
  const bool text = format == ColmapFormat::kText;
  const ColmapFormat other = text ? ColmapFormat::kBinary : ColmapFormat::kText;
  std::vector<std::string> found;
  for (const char* stem : kStems) {
    const std::string name = ColmapFileName(stem, other);
    if (Exists(Join(folder, name))) found.push_back(name);
  }
  if (!found.empty()) {
    if (text) {
      *error = folder + " holds " + List(found) +
               ", which COLMAP would read instead of the text model written here (binary "
               "files win), or which would disagree with it; use a folder without a binary model";
    } else {
      *error = folder + " holds " + List(found) +
               ", a text model that would disagree with the binary model written here; use a "
               "folder without a text model";
    }
    return false;
  }
  if (!model.has_rigs_and_frames) {
    for (const char* stem : {kRigs, kFrames}) {
      const std::string name = ColmapFileName(stem, format);
      if (Exists(Join(folder, name))) found.push_back(name);
    }
    if (!found.empty()) {
      *error = folder + " holds " + List(found) +
               ", which a model without rigs and frames does not replace: COLMAP would take the "
               "images' poses from the old frames; use a folder without rigs and frames";
      return false;
    }
  }
  return true;
}

bool WriteColmapModel(const ColmapModel& model, const std::string& folder, ColmapFormat format,
                      std::string* error) {
  const std::string images_path = Join(folder, ColmapFileName(kImages, format));
  if (format == ColmapFormat::kText) {
    for (const ColmapImage& image : model.images) {
      if (image.name.empty() || image.name.find_first_of(" \t\r\n\v\f") != std::string::npos) {
        *error = images_path + ": image " + std::to_string(image.id) + "'s name " +
                 Quote(image.name) +
                 " cannot be written in text form (empty, or holds white space)";
        return false;
      }
    }
  }
  if (model.has_rigs_and_frames) {
    for (size_t i = 0; i < model.images.size(); ++i) {
      if (model.ImageFrameIndex(static_cast<int>(i)) < 0) {
        *error = images_path + ": image " + std::to_string(model.images[i].id) +
                 " is in no frame of the model, and a rig model's images take their poses from "
                 "their frames (BuildIndex after changing frames)";
        return false;
      }
    }
  }
  if (!CheckColmapOutputFolder(model, folder, format, error)) return false;
  ColmapFiles files;
  SerializeColmapModel(model, format, &files);
  // COLMAP's order of writing; absent rigs and frames are not written.
  const std::pair<const char*, const std::string*> outputs[5] = {
      {kRigs, files.rigs.has_value() ? &*files.rigs : nullptr},
      {kCameras, &files.cameras},
      {kFrames, files.frames.has_value() ? &*files.frames : nullptr},
      {kImages, &files.images},
      {kPoints3D, &files.points3D}};
  // Every file under its temporary name first; the old files stay until all
  // are written.
  std::vector<std::pair<std::string, std::string>> written;  // (temporary, final)
  auto remove_written = [&written]() {
    for (const auto& paths : written) std::remove(paths.first.c_str());
  };
  for (const auto& [stem, data] : outputs) {
    if (data == nullptr) continue;
    const std::string path = Join(folder, ColmapFileName(stem, format));
    const std::string temporary = path + ".tmp";
    FILE* file = std::fopen(temporary.c_str(), "wb");
    if (file == nullptr) {
      *error = path + ": cannot write: " + std::strerror(errno) + " (nothing replaced)";
      remove_written();
      return false;
    }
    written.emplace_back(temporary, path);
    const bool wrote = std::fwrite(data->data(), 1, data->size(), file) == data->size();
    const int write_errno = errno;
    const bool closed = std::fclose(file) == 0;
    if (!wrote || !closed) {
      *error = path + ": cannot write: " + std::strerror(wrote ? errno : write_errno) +
               " (nothing replaced)";
      remove_written();
      return false;
    }
  }
  for (size_t k = 0; k < written.size(); ++k) {
    if (std::rename(written[k].first.c_str(), written[k].second.c_str()) != 0) {
      *error = written[k].second + ": cannot replace it: " + std::strerror(errno);
      for (size_t j = k; j < written.size(); ++j) std::remove(written[j].first.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
