// The compile cache: cubins keyed by compile_cache_key (Store::find_kernel and Store::put_kernel).
#pragma once

#include <optional>
#include <string>

#include "db/model.hpp"

namespace kt::db {

class ReadPool;
class StoreWriter;

class KernelStore {
 public:
  KernelStore(StoreWriter& writer, ReadPool& readers) : writer_(writer), readers_(readers) {}

  std::optional<KernelBlob> find_kernel(const std::string& key);
  void put_kernel(const KernelBlob& blob);

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
};

}  // namespace kt::db
