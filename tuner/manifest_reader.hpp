// Typed field access into a family manifest's JSON that collects every problem with its location
// ("templates[0].axes.BM.values: ...") instead of stopping at the first, so one load reports all
// of a broken manifest.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kt {

using ManifestJson = nlohmann::ordered_json;  // keeps axes in the order the manifest lists them

class ManifestReader {
 public:
  explicit ManifestReader(std::filesystem::path file) : file_(std::move(file)) {}

  // A message lists at most this many problems (a broken upload can have one per element), each
  // cut at kMaxProblemChars.
  static constexpr std::size_t kMaxReportedProblems = 20;
  static constexpr std::size_t kMaxProblemChars = 512;

  void error(const std::string& where, const std::string& message);
  bool ok() const { return errors_.empty(); }
  // Throws FamilyError naming the file and every problem, if there were any.
  void throw_if_errors() const;

  // The member, or nullptr (and an error if required) when it is absent.
  const ManifestJson* member(const ManifestJson& object, const std::string& key,
                             const std::string& where, bool required);
  std::optional<std::string> string_field(const ManifestJson& object, const std::string& key,
                                          const std::string& where, bool required);
  // An integer within kMaxExactInteger (tuner/client_values.hpp); larger ones, and floats, are
  // reported, never rounded or wrapped.
  std::optional<std::int64_t> integer_field(const ManifestJson& object, const std::string& key,
                                            const std::string& where, bool required);
  // Reports a JSON integer (or a float with an integral value) outside kMaxExactInteger; true for
  // any other value, which the caller checks for its type.
  bool within_exact_range(const ManifestJson& value, const std::string& where);
  // A list of strings (absent: empty, or an error if required).
  std::vector<std::string> string_list(const ManifestJson& object, const std::string& key,
                                       const std::string& where, bool required);
  // Expression text: a string, or an integer written as a JSON number. Checks that it parses.
  std::optional<std::string> expression(const ManifestJson& value, const std::string& where);
  std::optional<std::string> expression_field(const ManifestJson& object, const std::string& key,
                                              const std::string& where, bool required);
  // Reports keys outside `allowed`; keys starting with '_' or '$' are comments and pass.
  void reject_unknown_keys(const ManifestJson& object, std::initializer_list<const char*> allowed,
                           const std::string& where);
  bool expect_object(const ManifestJson& value, const std::string& where);

 private:
  std::filesystem::path file_;
  std::vector<std::string> errors_;
};

// "where" of a member or element: join("templates", 0) == "templates[0]". A key that is not a
// short identifier (the manifest's writer chose it) is quoted as any client text is.
std::string field_path(const std::string& parent, const std::string& key);
std::string field_path(const std::string& parent, std::size_t index);

// [A-Za-z_][A-Za-z0-9_]*: usable as an expression variable and in -DKT_<NAME>.
bool is_identifier(const std::string& text);

}  // namespace kt
