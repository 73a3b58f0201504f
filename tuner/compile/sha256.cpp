#include "tuner/compile/sha256.hpp"

#include <stdexcept>
#include <utility>

#include <openssl/evp.h>

namespace kt {
namespace {

void check_openssl(int result, const char* call) {
  if (result != 1) throw std::runtime_error(std::string(call) + " failed");
}

}  // namespace

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (context_ == nullptr) throw std::runtime_error("EVP_MD_CTX_new failed");
  try {
    check_openssl(EVP_DigestInit_ex(context_, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
  } catch (...) {
    EVP_MD_CTX_free(context_);
    throw;
  }
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(context_);
}

Sha256::Sha256(Sha256&& other) noexcept : context_(std::exchange(other.context_, nullptr)) {}

Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    EVP_MD_CTX_free(context_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void Sha256::update(std::string_view bytes) {
  check_openssl(EVP_DigestUpdate(context_, bytes.data(), bytes.size()), "EVP_DigestUpdate");
}

void Sha256::update_field(std::string_view bytes) {
  update(std::to_string(bytes.size()) + ":");
  update(bytes);
}

std::string Sha256::hex_digest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  check_openssl(EVP_DigestFinal_ex(context_, digest, &length), "EVP_DigestFinal_ex");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xF];
  }
  return hex;
}

}  // namespace kt
