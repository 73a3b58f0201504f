// Where kerntune finds its parts at run time, relative to the running executable, so that a build
// folder copied to another machine (the GPU host) still finds its families and worker.
#pragma once

#include <filesystem>

namespace kt {

// Folder of /proc/self/exe.
std::filesystem::path executable_dir();
// First of <exe>/../share/kerntune/kernel_templates (installed), <exe>/../../kernel_templates
// (build tree: build/bin/..) that exists; else the second, for the error message.
std::filesystem::path default_families_dir();
// The history page's static files: <exe>/../share/kerntune/web (installed), else
// <exe>/../../web (build tree), like default_families_dir.
std::filesystem::path default_web_dir();
// <exe>/kerntune-worker.
std::filesystem::path default_worker_path();

}  // namespace kt
