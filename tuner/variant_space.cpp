#include "tuner/variant_space.hpp"
#include "tuner/client_values.hpp"
#include "tuner/nearest_name.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>

namespace kt {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool axis_applies(const AxisSpec& axis, const std::string& arch) {
  return axis.archs.empty() || contains(axis.archs, arch);
}

// Evaluates one manifest expression for instantiate(), naming the field on failure.
class Evaluator {
 public:
  Evaluator(const Family& family, const TemplateSpec& tmpl, Bindings bindings)
      : context_("family " + quote_client_text(family.name) + ", template " +
                 quote_client_text(tmpl.name) + ", "),
        bindings_(std::move(bindings)) {}
  // Outside any template (the baseline's problem): only dims, elem_bytes and limits are bound.
  Evaluator(const Family& family, Bindings bindings)
      : context_("family " + quote_client_text(family.name) + ", "),
        bindings_(std::move(bindings)) {}

  double real(const std::string& field, const std::string& text) const {
    try {
      return shared_expression(text).evaluate(bindings_);
    } catch (const ExpressionError& e) {
      throw ExpressionError(context_ + field + ": " + e.what());
    }
  }

  long long integer(const std::string& field, const std::string& text, long long min,
                    long long max) const {
    long long value = 0;
    try {
      value = shared_expression(text).evaluate_integer(bindings_);
    } catch (const ExpressionError& e) {
      throw ExpressionError(context_ + field + ": " + e.what());
    }
    if (value < min || value > max)
      throw FamilyError(context_ + field + ": " + quote_client_text(text) + " = " +
                        std::to_string(value) + " is outside [" + std::to_string(min) + ", " +
                        std::to_string(max) + "]");
    return value;
  }

  // grid, block and cluster extents: positive and small enough for the driver's 32-bit fields.
  std::array<std::uint32_t, 3> extents(const std::string& field,
                                       const std::array<std::string, 3>& texts) const {
    std::array<std::uint32_t, 3> out{};
    for (std::size_t i = 0; i < 3; ++i)
      out[i] = static_cast<std::uint32_t>(integer(field + "[" + std::to_string(i) + "]", texts[i],
                                                  1, std::numeric_limits<std::uint32_t>::max()));
    return out;
  }

 private:
  std::string context_;
  Bindings bindings_;
};

// The first constraint the config violates (or cannot evaluate), if any.
std::optional<std::string> failing_constraint(const std::vector<Expression>& constraints,
                                              const Bindings& bindings) {
  for (const Expression& constraint : constraints) {
    try {
      if (constraint.evaluate(bindings) == 0) return constraint.text();
    } catch (const ExpressionError& e) {
      return constraint.text() + " (" + e.what() + ")";
    }
  }
  return std::nullopt;
}

// The template's axes that apply to the arch, in manifest order; empty when one of them has no
// value (such a template spans no variants; load_family forbids it).
std::vector<const AxisSpec*> arch_axes(const TemplateSpec& tmpl, const std::string& arch,
                                       bool& empty) {
  std::vector<const AxisSpec*> axes;
  empty = false;
  for (const AxisSpec& axis : tmpl.axes) {
    if (!axis_applies(axis, arch)) continue;
    if (axis.values.empty()) empty = true;
    axes.push_back(&axis);
  }
  return axes;
}

// Asks `stop` at most every kStopCheckInterval, reading the clock every 256 variants: cheap next
// to evaluating them, and often enough when each one has many constraints.
class StopPoll {
 public:
  explicit StopPoll(const StopCheck& stop) : stop_(stop) {}
  bool stopped() {
    if (!stop_ || ++count_ % 256 != 0) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return false;
    next_ = now + kStopCheckInterval;
    return stop_();
  }

 private:
  const StopCheck& stop_;
  std::uint64_t count_ = 0;
  std::chrono::steady_clock::time_point next_{};
};

bool enumerate_template(const TemplateSpec& tmpl, const Shape& shape, const std::string& dtype,
                        const DeviceLimits& limits,
                        const std::function<void(const VariantPlan&)>& visit, StopPoll& poll) {
  bool empty = false;
  const std::vector<const AxisSpec*> axes = arch_axes(tmpl, limits.arch, empty);
  if (empty) return true;
  std::vector<Expression> constraints;
  for (const std::string& text : tmpl.constraints) constraints.push_back(shared_expression(text));

  // The plan, its config and the bindings are built once; each variant only rewrites its axis
  // values in place, so a space of millions costs no allocation per variant.
  VariantPlan plan;
  plan.tmpl = &tmpl;
  for (const AxisSpec* axis : axes) plan.config[axis->name] = axis->values[0];
  Bindings bindings = make_bindings(shape, plan.config, dtype, limits);
  std::vector<double*> axis_slots;
  std::vector<std::int64_t*> config_slots;
  for (const AxisSpec* axis : axes) {
    axis_slots.push_back(&bindings[axis->name]);
    config_slots.push_back(&plan.config[axis->name]);
  }

  // An odometer over the axes' value indices: the last axis turns fastest.
  std::vector<std::size_t> index(axes.size(), 0);
  for (std::uint64_t at = 0;; ++at) {
    if (poll.stopped()) return false;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const std::int64_t value = axes[a]->values[index[a]];
      *config_slots[a] = value;
      *axis_slots[a] = static_cast<double>(value);
    }
    plan.index = at;
    plan.pruned_by = failing_constraint(constraints, bindings);
    visit(plan);

    std::size_t a = axes.size();
    while (a > 0 && ++index[a - 1] == axes[a - 1]->values.size()) index[--a] = 0;
    if (a == 0) return true;
  }
}

nlohmann::json kernel_reference_params(const Evaluator& eval, const ReferenceSpec& ref) {
  constexpr long long kInt64Max = std::numeric_limits<long long>::max();
  nlohmann::json args = nlohmann::json::array();
  for (std::size_t i = 0; i < ref.args.size(); ++i) {
    const ArgSpec& spec = ref.args[i];
    const std::string field = "reference.args[" + std::to_string(i) + "]";
    switch (spec.kind) {
      case ArgSpec::Kind::reference_output:
        args.push_back({{"kind", "reference_output"}});
        break;
      case ArgSpec::Kind::buffer:
        args.push_back({{"kind", "buffer"}, {"buffer", spec.value}});
        break;
      case ArgSpec::Kind::i32:
        args.push_back(
            {{"kind", "i32"},
             {"value", eval.integer(field, spec.value, std::numeric_limits<std::int32_t>::min(),
                                    std::numeric_limits<std::int32_t>::max())}});
        break;
      case ArgSpec::Kind::i64:
        args.push_back(
            {{"kind", "i64"}, {"value", eval.integer(field, spec.value, -kInt64Max, kInt64Max)}});
        break;
      case ArgSpec::Kind::f32:
        args.push_back({{"kind", "f32"}, {"value", eval.real(field, spec.value)}});
        break;
      case ArgSpec::Kind::tensor_map:
        throw FamilyError(field + ": a reference takes no tensor maps");
    }
  }
  const auto grid = eval.extents("reference.launch.grid", ref.launch.grid);
  const auto block = eval.extents("reference.launch.block", ref.launch.block);
  const auto smem = eval.integer("reference.launch.dynamic_smem", ref.launch.dynamic_smem, 0,
                                 std::numeric_limits<std::uint32_t>::max());
  nlohmann::json params = {{"source", ref.source},
                           {"kernel", ref.kernel},
                           {"output", ref.output},
                           {"args", args},
                           {"launch", {{"grid", grid}, {"block", block}, {"dynamic_smem", smem}}}};
  if (ref.magnitude)
    params["magnitude"] = {{"kernel", ref.magnitude->kernel},
                           {"reduction", eval.integer("reference.magnitude.reduction",
                                                      ref.magnitude->reduction, 1, kInt64Max)},
                           {"description", ref.magnitude->description}};
  return params;
}

// A reference's or baseline's params: strings that name a buffer stay names, other strings are
// dim expressions evaluated to integers, anything else is copied.
void evaluate_params(const Evaluator& eval, const Family& family, const nlohmann::json& params,
                     const std::string& where, nlohmann::json& out) {
  constexpr long long kInt64Max = std::numeric_limits<long long>::max();
  for (const auto& [key, value] : params.items()) {
    const bool names_buffer =
        value.is_string() && std::any_of(family.buffers.begin(), family.buffers.end(),
                                         [&text = value](const BufferSpec& b) {
                                           return b.name == text.get<std::string>();
                                         });
    if (value.is_string() && !names_buffer)
      out[key] = eval.integer(where + "." + key, value.get<std::string>(), -kInt64Max, kInt64Max);
    else
      out[key] = value;
  }
}

// The family's buffers evaluated for one problem; scratch buffers (sized by a variant's axes,
// e.g. a split-K workspace) only with_scratch.
void add_buffers(const Evaluator& eval, const Family& family, const std::string& dtype,
                 bool with_scratch, ProblemInstance& problem) {
  constexpr long long kInt64Max = std::numeric_limits<long long>::max();
  for (const BufferSpec& spec : family.buffers) {
    if (!with_scratch && spec.role == "scratch") continue;
    BufferInstance buffer;
    buffer.name = spec.name;
    buffer.role = spec.role;
    buffer.dtype = spec.dtype == "in" ? dtype : spec.dtype;
    buffer.range_low = spec.range_low;
    buffer.range_high = spec.range_high;
    buffer.elements = eval.integer("buffer " + spec.name + " elements", spec.elements, 1,
                                   kInt64Max / 8);  // the byte size must fit too
    problem.buffers.push_back(std::move(buffer));
  }
}

void add_reference_and_baseline(const Evaluator& eval, const Family& family,
                                ProblemInstance& problem) {
  problem.reference.kind = family.reference.kind;
  problem.reference.params = nlohmann::json::object();
  if (family.reference.kind == "kernel")
    problem.reference.params = kernel_reference_params(eval, family.reference);
  evaluate_params(eval, family, family.reference.params, "reference", problem.reference.params);
  if (family.baseline && family.baseline->kind != "external") {
    problem.baseline = ReferenceInstance{family.baseline->kind, nlohmann::json::object()};
    evaluate_params(eval, family, family.baseline->params, "baseline", problem.baseline->params);
  }
  problem.flops = eval.real("flops", family.flops);
  problem.bytes = eval.real("bytes", family.bytes);
}

}  // namespace

std::map<std::string, std::int64_t> template_resources(const Family& family,
                                                       const TemplateSpec& tmpl,
                                                       const Config& config, const Shape& shape,
                                                       const std::string& dtype,
                                                       const DeviceLimits& limits) {
  const Evaluator eval(family, tmpl, make_bindings(shape, config, dtype, limits));
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, text] : tmpl.resources)
    out[name] = eval.integer("resources." + name, text, std::numeric_limits<long long>::min(),
                             std::numeric_limits<long long>::max());
  return out;
}

Shape with_default_dims(const Family& family, Shape shape) {
  for (const DimSpec& dim : family.dims)
    if (dim.default_value && !shape.count(dim.name)) shape[dim.name] = *dim.default_value;
  return shape;
}

Shape smoke_shape_for(const Family& family, const Shape& job_shape) {
  Bindings bindings;
  for (const auto& [name, value] : job_shape) bindings[name] = static_cast<double>(value);
  Shape smoke;
  for (const auto& [name, text] : family.smoke_shape) {
    try {
      smoke[name] = shared_expression(text).evaluate_integer(bindings);
    } catch (const ExpressionError& e) {
      throw ExpressionError("family " + quote_client_text(family.name) + ", smoke_shape." + name +
                            ": " + e.what());
    }
  }
  return smoke;
}

Bindings make_bindings(const Shape& shape, const Config& config, const std::string& dtype,
                       const DeviceLimits& limits) {
  Bindings bindings;
  for (const auto& [name, value] : shape) bindings[name] = static_cast<double>(value);
  for (const auto& [name, value] : config) bindings[name] = static_cast<double>(value);
  bindings["elem_bytes"] = dtype_bytes(dtype);
  bindings["smem_optin"] = static_cast<double>(limits.smem_optin);
  bindings["smem_per_sm"] = static_cast<double>(limits.smem_per_sm);
  bindings["max_threads"] = limits.max_threads;
  bindings["regs_per_block"] = limits.regs_per_block;
  bindings["max_regs_per_thread"] = limits.max_regs_per_thread;
  bindings["sm_count"] = limits.sm_count;
  bindings["max_cluster"] = limits.max_cluster;
  bindings["l2_bytes"] = static_cast<double>(limits.l2_bytes);
  bindings["tmem_columns"] = limits.tmem_columns;
  bindings["sm"] = limits.sm;
  return bindings;
}

bool for_each_variant(const Family& family, const Shape& shape, const std::string& dtype,
                      const DeviceLimits& limits,
                      const std::function<void(const VariantPlan&)>& visit, const StopCheck& stop) {
  StopPoll poll(stop);
  for (const TemplateSpec& tmpl : family.templates) {
    if (!tmpl.archs.empty() && !contains(tmpl.archs, limits.arch)) {
      VariantPlan plan;
      plan.tmpl = &tmpl;
      plan.unsupported_arch = true;
      plan.pruned_by = "template " + quote_client_text(tmpl.name) + " targets " + join(tmpl.archs) +
                       ", not " + (limits.arch.empty() ? "an unknown arch" : limits.arch);
      visit(plan);
      continue;
    }
    if (!enumerate_template(tmpl, shape, dtype, limits, visit, poll)) return false;
  }
  return true;
}

std::vector<VariantPlan> enumerate_variants(const Family& family, const Shape& shape,
                                            const std::string& dtype, const DeviceLimits& limits) {
  std::vector<VariantPlan> plans;
  for_each_variant(family, shape, dtype, limits,
                   [&plans](const VariantPlan& plan) { plans.push_back(plan); });
  return plans;
}

Config variant_config(const TemplateSpec& tmpl, const std::string& arch, std::uint64_t index) {
  bool empty = false;
  const std::vector<const AxisSpec*> axes = arch_axes(tmpl, arch, empty);
  Config config;
  if (empty) return config;
  // The odometer's digits, last axis first (it turns fastest).
  for (std::size_t a = axes.size(); a > 0; --a) {
    const std::vector<std::int64_t>& values = axes[a - 1]->values;
    config[axes[a - 1]->name] = values[index % values.size()];
    index /= values.size();
  }
  return config;
}

std::vector<std::string> variant_defines(const TemplateSpec& tmpl, const Config& config,
                                         const std::string& dtype, const DeviceLimits& limits) {
  std::vector<std::string> options;
  for (const AxisSpec& axis : tmpl.axes)
    if (auto value = config.find(axis.name); value != config.end())
      options.push_back("-DKT_" + axis.name + "=" + std::to_string(value->second));
  for (const auto& [name, value] : config)
    if (std::none_of(tmpl.axes.begin(), tmpl.axes.end(),
                     [&axis_name = name](const AxisSpec& axis) { return axis.name == axis_name; }))
      throw FamilyError("config names " + quote_client_text(name) +
                        ", which is not an axis of template " + quote_client_text(tmpl.name));
  std::string dtype_macro = dtype;
  std::transform(dtype_macro.begin(), dtype_macro.end(), dtype_macro.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  options.push_back("-DKT_DTYPE_" + dtype_macro);
  options.push_back("-DKT_SM=" + std::to_string(limits.sm));
  options.insert(options.end(), tmpl.options.begin(), tmpl.options.end());
  return options;
}

CompileRequest compile_request(const Family& family, const TemplateSpec& tmpl, const Config& config,
                               const std::string& dtype, const DeviceLimits& limits) {
  CompileRequest request;
  request.source_name = tmpl.source;
  for (const auto& [name, text] : family.sources) {
    if (name != tmpl.source) continue;
    request.source = text;
    break;
  }
  request.headers = family.sources;
  request.kernel = tmpl.kernel;
  request.arch = limits.arch;
  request.options = variant_defines(tmpl, config, dtype, limits);
  return request;
}

namespace {

constexpr long long kMinTensorMapRowBytes = 16;

// The TMA view must stay inside its buffer and within the copy engine's limits; a variant that
// breaks them is a manifest error, caught here rather than as a launch failure on the GPU.
ArgInstance tensor_map_instance(const Evaluator& eval, const ArgSpec& spec,
                                const std::string& field,
                                const std::vector<BufferInstance>& buffers) {
  ArgInstance arg;
  arg.kind = ArgInstance::Kind::tensor_map;
  arg.buffer = spec.value;
  long long elements = 1;
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    const std::string at = field + ".dims[" + std::to_string(d) + "]";
    arg.dims.push_back(eval.integer(at, spec.dims[d], 1, 1ll << 40));
    elements = arg.dims.back() > (1ll << 62) / elements ? (1ll << 62) : elements * arg.dims.back();
    arg.box.push_back(static_cast<std::uint32_t>(
        eval.integer(field + ".box[" + std::to_string(d) + "]", spec.box[d], 1, 256)));
  }
  const long long swizzle = eval.integer(field + ".swizzle", spec.swizzle, 0, 128);
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    throw FamilyError(field + ".swizzle: " + std::to_string(swizzle) +
                      " is not 0, 32, 64 or 128 bytes");
  arg.swizzle = static_cast<std::uint32_t>(swizzle);
  const auto buffer = std::find_if(buffers.begin(), buffers.end(),
                                   [&](const BufferInstance& b) { return b.name == spec.value; });
  const int elem_bytes = buffer == buffers.end() ? 0 : dtype_bytes(buffer->dtype);
  if (swizzle != 0 && arg.box[0] * elem_bytes > swizzle)
    throw FamilyError(field + ": an inner box of " + std::to_string(arg.box[0] * elem_bytes) +
                      " bytes is wider than its " + std::to_string(swizzle) + "-byte swizzle");
  // The copy engine's smallest row is 16 bytes, so an output smaller than that (a 1x2 bf16 C)
  // still gets one 16-byte row: the worker keeps a guard after every output, so a kernel that
  // wrote past the output through it fails its guard check. Nothing else may reach past a buffer.
  const long long holds =
      buffer == buffers.end() ? 0
      : buffer->role == "output" && elem_bytes > 0
          ? std::max<long long>(buffer->elements, kMinTensorMapRowBytes / elem_bytes)
          : buffer->elements;
  if (buffer != buffers.end() && elements > holds)
    throw FamilyError(field + ": the tensor map covers " + std::to_string(elements) +
                      " elements, more than buffer " + spec.value + " holds (" +
                      std::to_string(buffer->elements) + ")");
  return arg;
}

LaunchDims launch_of(const Evaluator& eval, const TemplateSpec& tmpl) {
  LaunchDims launch;
  launch.grid = eval.extents("launch.grid", tmpl.launch.grid);
  launch.block = eval.extents("launch.block", tmpl.launch.block);
  launch.cluster = eval.extents("launch.cluster", tmpl.launch.cluster);
  launch.dynamic_smem =
      static_cast<std::uint32_t>(eval.integer("launch.dynamic_smem", tmpl.launch.dynamic_smem, 0,
                                              std::numeric_limits<std::uint32_t>::max()));
  return launch;
}

}  // namespace

LaunchDims evaluate_launch(const Family& family, const TemplateSpec& tmpl, const Config& config,
                           const Shape& shape, const std::string& dtype,
                           const DeviceLimits& limits) {
  return launch_of(Evaluator(family, tmpl, make_bindings(shape, config, dtype, limits)), tmpl);
}

ProblemInstance instantiate(const Family& family, const TemplateSpec& tmpl, const Config& config,
                            const Shape& shape, const std::string& dtype,
                            const DeviceLimits& limits) {
  const Evaluator eval(family, tmpl, make_bindings(shape, config, dtype, limits));
  constexpr long long kInt64Max = std::numeric_limits<long long>::max();
  ProblemInstance problem;
  problem.shape = shape;
  problem.dtype = dtype;

  add_buffers(eval, family, dtype, /*with_scratch=*/true, problem);

  const std::vector<ArgSpec>& args = kernel_args(family, tmpl);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& spec = args[i];
    const std::string field = "args[" + std::to_string(i) + "]";
    ArgInstance arg;
    switch (spec.kind) {
      case ArgSpec::Kind::tensor_map:
        arg = tensor_map_instance(eval, spec, field, problem.buffers);
        break;
      case ArgSpec::Kind::buffer:
        arg.kind = ArgInstance::Kind::buffer;
        arg.buffer = spec.value;
        break;
      case ArgSpec::Kind::i32:
        arg.kind = ArgInstance::Kind::i32;
        arg.value = static_cast<double>(eval.integer(field, spec.value,
                                                     std::numeric_limits<std::int32_t>::min(),
                                                     std::numeric_limits<std::int32_t>::max()));
        break;
      case ArgSpec::Kind::i64:
        arg.kind = ArgInstance::Kind::i64;
        arg.value = static_cast<double>(eval.integer(field, spec.value, -kInt64Max, kInt64Max));
        break;
      case ArgSpec::Kind::f32:
        arg.kind = ArgInstance::Kind::f32;
        arg.value = eval.real(field, spec.value);
        break;
      case ArgSpec::Kind::reference_output:
        throw FamilyError(field + ": only a kernel reference takes a reference_output");
    }
    problem.args.push_back(std::move(arg));
  }

  problem.launch = launch_of(eval, tmpl);

  add_reference_and_baseline(eval, family, problem);
  return problem;
}

ProblemInstance baseline_instance(const Family& family, const Shape& shape,
                                  const std::string& dtype, const DeviceLimits& limits) {
  const Evaluator eval(family, make_bindings(shape, Config{}, dtype, limits));
  ProblemInstance problem;
  problem.shape = shape;
  problem.dtype = dtype;
  add_buffers(eval, family, dtype, /*with_scratch=*/false, problem);
  add_reference_and_baseline(eval, family, problem);
  return problem;
}

std::optional<std::string> validate_shape(const Family& family, const Shape& shape,
                                          const std::string& dtype) {
  if (!contains(family.dtypes, dtype))
    return "family " + quote_client_text(family.name) + " has no dtype " +
           quote_client_text(dtype) + did_you_mean(dtype, family.dtypes) + " (it has " +
           join(family.dtypes) + ")";
  std::vector<std::string> dim_names;
  for (const DimSpec& dim : family.dims) dim_names.push_back(dim.name);
  for (const auto& [name, value] : shape)
    if (!contains(dim_names, name))
      return "unknown dimension " + quote_client_text(name) + " (family " +
             quote_client_text(family.name) + " has " + join(dim_names) + ")";
  for (const DimSpec& dim : family.dims) {
    const auto found = shape.find(dim.name);
    if (found == shape.end())
      return "missing dimension " + quote_client_text(dim.name) + " (family " +
             quote_client_text(family.name) + " needs " + join(dim_names) + ")";
    if (found->second < dim.min || found->second > dim.max)
      return "dimension " + dim.name + "=" + std::to_string(found->second) + " is outside [" +
             std::to_string(dim.min) + ", " + std::to_string(dim.max) + "]";
  }
  Bindings bindings;
  for (const auto& [name, value] : shape) bindings[name] = static_cast<double>(value);
  bindings["elem_bytes"] = dtype_bytes(dtype);
  for (const std::string& text : family.shape_constraints) {
    try {
      if (shared_expression(text).evaluate(bindings) == 0)
        return "shape " + canonical_key(shape) + " violates " + quote_client_text(text);
    } catch (const ExpressionError& e) {
      return "shape " + canonical_key(shape) + ": " + e.what();
    }
  }
  return std::nullopt;
}

}  // namespace kt
