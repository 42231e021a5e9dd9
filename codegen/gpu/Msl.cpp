//===- Msl.cpp - Metal Shading Language from the SPIR-V kernels -----------===//

#include "codegen/gpu/Msl.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <memory>
#include <spirv_cross/spirv_cross_c.h>

using namespace mlir::tract;

namespace {

/// A SPIRV-Cross context, destroyed with everything it made.
struct ContextDeleter {
  void operator()(spvc_context_s *context) const {
    spvc_context_destroy(context);
  }
};
using Context = std::unique_ptr<spvc_context_s, ContextDeleter>;

llvm::Error failure(spvc_context context, const llvm::Twine &what) {
  return llvm::createStringError(what + ": " +
                                 spvc_context_get_last_error_string(context));
}

} // namespace

llvm::Expected<MslKernel>
mlir::tract::translateToMsl(llvm::ArrayRef<uint32_t> words,
                            llvm::StringRef entry, unsigned buffers) {
  spvc_context raw = nullptr;
  if (spvc_context_create(&raw) != SPVC_SUCCESS)
    return llvm::createStringError("cannot create a SPIRV-Cross context");
  Context context(raw);
  spvc_parsed_ir ir = nullptr;
  if (spvc_context_parse_spirv(raw, words.data(), words.size(), &ir) !=
      SPVC_SUCCESS)
    return failure(raw, "SPIRV-Cross cannot parse the module");
  spvc_compiler compiler = nullptr;
  if (spvc_context_create_compiler(raw, SPVC_BACKEND_MSL, ir,
                                   SPVC_CAPTURE_MODE_TAKE_OWNERSHIP,
                                   &compiler) != SPVC_SUCCESS)
    return failure(raw, "no MSL compiler");
  std::string name = entry.str();
  if (spvc_compiler_set_entry_point(compiler, name.c_str(),
                                    SpvExecutionModelGLCompute) != SPVC_SUCCESS)
    return failure(raw, "no compute entry point '" + entry + "'");

  // The kernel's signature, as reflection sees it: a storage buffer per
  // binding of set 0 that the entry point uses (the module's other kernels
  // have their own variables at the same bindings; a buffer the kernel
  // never reads is left out).
  spvc_set active = nullptr;
  spvc_resources resources = nullptr;
  const spvc_reflected_resource *list = nullptr;
  size_t count = 0;
  if (spvc_compiler_get_active_interface_variables(compiler, &active) !=
          SPVC_SUCCESS ||
      spvc_compiler_set_enabled_interface_variables(compiler, active) !=
          SPVC_SUCCESS ||
      spvc_compiler_create_shader_resources_for_active_variables(
          compiler, &resources, active) != SPVC_SUCCESS ||
      spvc_resources_get_resource_list_for_type(
          resources, SPVC_RESOURCE_TYPE_STORAGE_BUFFER, &list, &count) !=
          SPVC_SUCCESS)
    return failure(raw, "no reflection of '" + entry + "'");
  llvm::SmallVector<bool> seen(buffers, false);
  for (size_t i = 0; i < count; ++i) {
    unsigned set = spvc_compiler_get_decoration(compiler, list[i].id,
                                                SpvDecorationDescriptorSet);
    unsigned binding = spvc_compiler_get_decoration(compiler, list[i].id,
                                                    SpvDecorationBinding);
    if (set != 0 || binding >= buffers || seen[binding])
      return llvm::createStringError(
          "'" + entry + "' has a storage buffer at set " + llvm::Twine(set) +
          ", binding " + llvm::Twine(binding) + "; its kernel takes " +
          llvm::Twine(buffers) + " buffers at set 0");
    seen[binding] = true;
    // Binding i is buffer i, whatever SPIRV-Cross would number it.
    spvc_msl_resource_binding mapping;
    spvc_msl_resource_binding_init(&mapping);
    mapping.stage = SpvExecutionModelGLCompute;
    mapping.desc_set = 0;
    mapping.binding = binding;
    mapping.msl_buffer = binding;
    if (spvc_compiler_msl_add_resource_binding(compiler, &mapping) !=
        SPVC_SUCCESS)
      return failure(raw, "cannot bind buffer " + llvm::Twine(binding));
  }

  spvc_compiler_options options = nullptr;
  if (spvc_compiler_create_compiler_options(compiler, &options) !=
          SPVC_SUCCESS ||
      spvc_compiler_options_set_uint(options, SPVC_COMPILER_OPTION_MSL_VERSION,
                                     SPVC_MAKE_MSL_VERSION(2, 3, 0)) !=
          SPVC_SUCCESS ||
      spvc_compiler_options_set_uint(options, SPVC_COMPILER_OPTION_MSL_PLATFORM,
                                     SPVC_MSL_PLATFORM_MACOS) != SPVC_SUCCESS ||
      spvc_compiler_install_compiler_options(compiler, options) != SPVC_SUCCESS)
    return failure(raw, "cannot set the MSL options");
  const char *source = nullptr;
  if (spvc_compiler_compile(compiler, &source) != SPVC_SUCCESS)
    return failure(raw, "SPIRV-Cross cannot write '" + entry + "' as MSL");
  const char *renamed = spvc_compiler_get_cleansed_entry_point_name(
      compiler, name.c_str(), SpvExecutionModelGLCompute);
  return MslKernel{source, renamed ? renamed : name};
}
