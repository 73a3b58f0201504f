// Incremental SHA-256 over OpenSSL's EVP interface, owning its EVP_MD_CTX.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace kt {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(std::string_view bytes);
  // Length-prefixed, so that the fields ("ab","c") and ("a","bc") hash differently.
  void update_field(std::string_view bytes);
  // Lowercase hex digest; the object cannot be updated afterwards.
  std::string hex_digest();

 private:
  evp_md_ctx_st* context_ = nullptr;
};

}  // namespace kt
