// The devices the daemons found, keyed by UUID (Store's device methods; db/store.hpp documents
// them).
#pragma once

#include <cstdint>
#include <vector>

#include "tuner/device_limits.hpp"

namespace kt::db {

class ReadPool;
class StoreWriter;

class DeviceStore {
 public:
  DeviceStore(StoreWriter& writer, ReadPool& readers) : writer_(writer), readers_(readers) {}

  std::int64_t upsert_device(const DeviceInfo& device);
  std::vector<DeviceInfo> devices();

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
};

}  // namespace kt::db
