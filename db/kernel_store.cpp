// kt::Store: the compile cache, cubins keyed by compile_cache_key.
#include <limits>

#include <SQLiteCpp/SQLiteCpp.h>

#include "db/rows.hpp"
#include "db/store.hpp"

namespace kt {

std::optional<KernelBlob> Store::find_kernel(const std::string& key) {
  const auto reader = readers_->acquire();
  return db::with_context("find_kernel " + key, [&]() -> std::optional<KernelBlob> {
    SQLite::Statement query(*reader, "SELECT * FROM kernels WHERE key = ?");
    query.bind(1, key);
    if (!query.executeStep()) return std::nullopt;
    KernelBlob blob;
    blob.key = query.getColumn("key").getString();
    blob.arch = query.getColumn("arch").getString();
    blob.kernel = query.getColumn("kernel").getString();
    blob.nvrtc_version = query.getColumn("nvrtc_version").getString();
    const SQLite::Column cubin = query.getColumn("cubin");
    const auto* bytes = static_cast<const char*>(cubin.getBlob());
    if (bytes != nullptr) blob.cubin.assign(bytes, bytes + cubin.getBytes());
    blob.log = query.getColumn("log").getString();
    blob.resources.registers = query.getColumn("registers").getInt();
    blob.resources.spill_store_bytes = query.getColumn("spill_store_bytes").getInt();
    blob.resources.spill_load_bytes = query.getColumn("spill_load_bytes").getInt();
    blob.resources.stack_frame_bytes = query.getColumn("stack_frame_bytes").getInt();
    blob.resources.static_smem_bytes = query.getColumn("static_smem_bytes").getInt();
    blob.resources.const_bytes = query.getColumn("const_bytes").getInt();
    return blob;
  });
}

void Store::put_kernel(const KernelBlob& blob) {
  if (blob.cubin.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("put_kernel: cubin of " + std::to_string(blob.cubin.size()) +
                                " bytes is too large to store");
  std::lock_guard lock(mutex_);
  db::with_context("put_kernel " + blob.key, [&] {
    SQLite::Statement insert(
        *db_, std::string("INSERT OR REPLACE INTO kernels (key, arch, kernel, nvrtc_version,"
                          " cubin, log, registers, spill_store_bytes, spill_load_bytes,"
                          " stack_frame_bytes, static_smem_bytes, const_bytes, created_at)"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ") +
                  db::kNowSql + ")");
    insert.bind(1, blob.key);
    insert.bind(2, blob.arch);
    insert.bind(3, blob.kernel);
    insert.bind(4, blob.nvrtc_version);
    // An empty vector's data() may be null, which SQLite would store as NULL, not an empty blob.
    static const char kNoBytes = 0;
    insert.bind(5, blob.cubin.empty() ? &kNoBytes : blob.cubin.data(),
                static_cast<int>(blob.cubin.size()));
    insert.bind(6, blob.log);
    insert.bind(7, blob.resources.registers);
    insert.bind(8, blob.resources.spill_store_bytes);
    insert.bind(9, blob.resources.spill_load_bytes);
    insert.bind(10, blob.resources.stack_frame_bytes);
    insert.bind(11, blob.resources.static_smem_bytes);
    insert.bind(12, blob.resources.const_bytes);
    insert.exec();
  });
}

}  // namespace kt
