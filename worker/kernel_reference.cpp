#include "worker/kernel_reference.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "worker/cuda_module.hpp"
#include "worker/driver_api.hpp"

namespace kt {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw std::invalid_argument("kernel reference: " + field + " " + what);
}

const nlohmann::json& field(const nlohmann::json& params, const std::string& name) {
  if (!params.is_object() || !params.contains(name)) bad("'" + name + "'", "is missing");
  return params[name];
}

std::string text_field(const nlohmann::json& params, const std::string& name) {
  const nlohmann::json& value = field(params, name);
  if (!value.is_string() || value.get<std::string>().empty()) bad("'" + name + "'", "must be text");
  return value.get<std::string>();
}

std::array<std::uint32_t, 3> extents(const nlohmann::json& launch, const std::string& name) {
  const nlohmann::json& value = field(launch, name);
  if (!value.is_array() || value.size() != 3) bad("launch." + name, "must hold 3 extents");
  std::array<std::uint32_t, 3> out{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!value[i].is_number_integer() || value[i].get<std::int64_t>() < 1 ||
        value[i].get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
      bad("launch." + name + "[" + std::to_string(i) + "]", "must be a positive integer");
    out[i] = value[i].get<std::uint32_t>();
  }
  return out;
}

template <typename Int>
Int integer(const nlohmann::json& arg, const std::string& where) {
  const nlohmann::json& value = field(arg, "value");
  if (!value.is_number_integer()) bad(where, "must be an integer");
  const auto v = value.get<std::int64_t>();
  if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max())
    bad(where, "= " + std::to_string(v) + " does not fit its type");
  return static_cast<Int>(v);
}

class KernelReference final : public Reference {
 public:
  KernelReference(const ProblemInstance& problem, const ProblemBuffers& buffers)
      : params_(problem.reference.params),
        output_(text_field(params_, "output")),
        module_(cuda::read_binary_file(text_field(params_, "cubin_path"))),
        function_(module_.function(text_field(params_, "kernel"))) {
    output_elements_ = buffers.spec(output_).elements;
    const nlohmann::json& launch = field(params_, "launch");
    grid_ = extents(launch, "grid");
    block_ = extents(launch, "block");
    const nlohmann::json& smem = field(launch, "dynamic_smem");
    if (!smem.is_number_integer() || smem.get<std::int64_t>() < 0)
      bad("launch.dynamic_smem", "must be a non-negative integer");
    dynamic_smem_ = smem.get<std::uint32_t>();

    const nlohmann::json& args = field(params_, "args");
    if (!args.is_array()) bad("'args'", "must be a list");
    slots_.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string where = "args[" + std::to_string(i) + "]";
      const std::string kind = text_field(args[i], "kind");
      auto store = [&](const auto& value) {
        static_assert(sizeof(value) <= sizeof(std::uint64_t));
        std::memcpy(&slots_[i], &value, sizeof(value));
      };
      if (kind == "reference_output") {
        if (output_slot_) bad(where, "is a second reference_output");
        output_slot_ = i + 1;
      } else if (kind == "buffer") {
        store(buffers.pointer(text_field(args[i], "buffer")));  // throws for an unknown buffer
      } else if (kind == "i32") {
        store(integer<std::int32_t>(args[i], where));
      } else if (kind == "i64") {
        store(integer<std::int64_t>(args[i], where));
      } else if (kind == "f32") {
        const nlohmann::json& value = field(args[i], "value");
        if (!value.is_number() || !std::isfinite(value.get<double>()))
          bad(where, "must be a finite number");
        store(static_cast<float>(value.get<double>()));
      } else {
        bad(where, "has unknown kind '" + kind + "'");
      }
    }
    if (!output_slot_) bad("'args'", "has no reference_output");
    for (auto& slot : slots_) pointers_.push_back(&slot);
    if (params_.contains("magnitude")) read_magnitude(field(params_, "magnitude"));
    for (CUfunction function : {function_, magnitude_function_})
      if (function != nullptr && dynamic_smem_ > 48 * 1024)
        KT_CU(cuFuncSetAttribute, function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              static_cast<int>(dynamic_smem_));
  }

  const std::string& output_buffer() const override { return output_; }
  std::int64_t output_elements() const override { return output_elements_; }

  void compute_f32(CUdeviceptr out, CUstream stream) override { launch(function_, out, stream); }

  void run_native(CUstream) override {
    throw std::logic_error("a kernel reference writes fp32 only: it has no run in the dtype");
  }

  std::optional<Magnitude> magnitude() const override { return magnitude_; }

  // The magnitude kernel takes the reference's arguments and launch, writing m where the
  // reference writes its output.
  void compute_magnitude_f32(CUdeviceptr out, CUstream stream) override {
    if (magnitude_function_ == nullptr) return Reference::compute_magnitude_f32(out, stream);
    launch(magnitude_function_, out, stream);
    KT_CU(cuStreamSynchronize, stream);
  }

 private:
  void launch(CUfunction function, CUdeviceptr out, CUstream stream) {
    std::memcpy(&slots_[*output_slot_ - 1], &out, sizeof(out));
    KT_CU(cuLaunchKernel, function, grid_[0], grid_[1], grid_[2], block_[0], block_[1], block_[2],
          dynamic_smem_, stream, pointers_.data(), nullptr);
  }

  // {"kernel": entry point in the same cubin, "reduction": K >= 1, "description": what m is}.
  void read_magnitude(const nlohmann::json& spec) {
    const nlohmann::json& reduction = field(spec, "reduction");
    if (!reduction.is_number_integer() || reduction.get<std::int64_t>() < 1)
      bad("magnitude.reduction", "must be a positive integer");
    magnitude_ = Magnitude{reduction.get<std::int64_t>(), text_field(spec, "description")};
    magnitude_function_ = module_.function(text_field(spec, "kernel"));
  }

  nlohmann::json params_;
  std::string output_;
  std::int64_t output_elements_ = 0;
  cuda::Module module_;
  CUfunction function_ = nullptr;
  std::array<std::uint32_t, 3> grid_{}, block_{};
  std::uint32_t dynamic_smem_ = 0;
  std::vector<std::uint64_t> slots_;  // one 8-byte slot per argument
  std::vector<void*> pointers_;
  std::optional<std::size_t> output_slot_;  // 1-based
  std::optional<Magnitude> magnitude_;
  CUfunction magnitude_function_ = nullptr;
};

}  // namespace

std::unique_ptr<Reference> make_kernel_reference(const ProblemInstance& problem,
                                                 const ProblemBuffers& buffers) {
  return std::make_unique<KernelReference>(problem, buffers);
}

}  // namespace kt
