// The checks POST /v1/families runs on an upload before anything is stored or compiled, apart from
// the registrar so that a fuzzer (tests/fuzz/family_upload_fuzz.cpp) runs exactly them: the family
// and source names, the sizes, a shipped family's name, then the upload written to a staging
// folder (with the common/ headers it includes) and read by load_family as a shipped family is.
#pragma once

#include <filesystem>
#include <string>

#include "engine/family_registrar.hpp"
#include "tuner/family.hpp"

namespace kt {

struct CheckedUpload {
  Family family;              // as load_family read it from the staging folder
  std::string manifest_text;  // the manifest as written there (and stored)
};

// Throws FamilyUploadError (its message names no folder of the daemon's) and leaves nothing in
// staged; on success the upload is in staged, for the compile. common: the shipped families'
// common/ folder (empty: none).
CheckedUpload check_family_upload(const FamilyUpload& upload, const FamilyRegistry& registry,
                                  const std::filesystem::path& staged,
                                  const std::filesystem::path& common);

}  // namespace kt
