#include "db/device_store.hpp"

#include <mutex>
#include <stdexcept>

#include "db/connection.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {

std::int64_t DeviceStore::upsert_device(const DeviceInfo& d) {
  if (d.uuid.empty()) throw std::invalid_argument("upsert_device: a device needs a UUID");
  std::lock_guard lock(writer_.mutex());
  return db::with_context("upsert_device " + d.uuid, [&] {
    const std::string now = db::now_sql(writer_.db().dialect());
    db::Statement upsert(
        writer_.db(),
        "INSERT INTO devices (uuid, name, ordinal, arch, sm_major, sm_minor, sm_count,"
        " memory_bytes, l2_bytes, smem_per_block_optin, smem_per_sm, max_threads_per_block,"
        " regs_per_block, clock_khz, driver_version, nvrtc_version, first_seen, last_seen)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, " +
            now + ", " + now +
            ") ON CONFLICT (uuid) DO UPDATE SET name = ?2, ordinal = ?3, arch = ?4,"
            " sm_major = ?5, sm_minor = ?6, sm_count = ?7, memory_bytes = ?8, l2_bytes = ?9,"
            " smem_per_block_optin = ?10, smem_per_sm = ?11, max_threads_per_block = ?12,"
            " regs_per_block = ?13, clock_khz = ?14, driver_version = ?15,"
            " nvrtc_version = ?16, last_seen = " +
            now + " RETURNING id");
    upsert.bind(1, d.uuid);
    upsert.bind(2, d.name);
    upsert.bind(3, d.ordinal);
    upsert.bind(4, d.arch);
    upsert.bind(5, d.sm_major);
    upsert.bind(6, d.sm_minor);
    upsert.bind(7, d.sm_count);
    upsert.bind(8, d.memory_bytes);
    upsert.bind(9, d.l2_bytes);
    upsert.bind(10, d.smem_per_block_optin);
    upsert.bind(11, d.smem_per_sm);
    upsert.bind(12, d.max_threads_per_block);
    upsert.bind(13, d.regs_per_block);
    upsert.bind(14, d.clock_khz);
    upsert.bind(15, d.driver_version);
    upsert.bind(16, d.nvrtc_version);
    if (!upsert.step()) throw std::runtime_error("upsert returned no row id");
    const std::int64_t id = upsert.column(0).int64();
    upsert.step();  // finish the statement so the write completes before returning
    return id;
  });
}

std::vector<DeviceInfo> DeviceStore::devices() {
  const auto reader = readers_.acquire();
  return db::with_context("devices", [&] {
    db::Statement query(*reader, "SELECT * FROM devices ORDER BY last_seen DESC, id");
    std::vector<DeviceInfo> out;
    while (query.step()) {
      DeviceInfo d;
      d.uuid = query.column("uuid").text();
      d.name = query.column("name").text();
      d.ordinal = query.column("ordinal").integer();
      d.arch = query.column("arch").text();
      d.sm_major = query.column("sm_major").integer();
      d.sm_minor = query.column("sm_minor").integer();
      d.sm_count = query.column("sm_count").integer();
      d.memory_bytes = query.column("memory_bytes").int64();
      d.l2_bytes = query.column("l2_bytes").int64();
      d.smem_per_block_optin = query.column("smem_per_block_optin").int64();
      d.smem_per_sm = query.column("smem_per_sm").int64();
      d.max_threads_per_block = query.column("max_threads_per_block").integer();
      d.regs_per_block = query.column("regs_per_block").integer();
      d.clock_khz = query.column("clock_khz").integer();
      d.driver_version = query.column("driver_version").integer();
      d.nvrtc_version = query.column("nvrtc_version").text();
      out.push_back(std::move(d));
    }
    return out;
  });
}
}  // namespace kt::db
