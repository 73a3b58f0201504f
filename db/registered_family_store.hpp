// The families clients registered over the API, every version kept, the newest served
// (Store::save_registered_family and Store::registered_families).
#pragma once

#include <cstdint>
#include <vector>

#include "db/model.hpp"

namespace kt::db {

class ReadPool;
class StoreWriter;

class RegisteredFamilyStore {
 public:
  RegisteredFamilyStore(StoreWriter& writer, ReadPool& readers)
      : writer_(writer), readers_(readers) {}

  std::int64_t save_registered_family(const RegisteredFamilyRecord& family);
  std::vector<RegisteredFamilyRecord> registered_families();

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
};

}  // namespace kt::db
