// kt::db::KernelStore: the compile cache, cubins keyed by compile_cache_key.
#include "db/kernel_store.hpp"

#include <limits>
#include <mutex>

#include "db/connection.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {

std::optional<KernelBlob> KernelStore::find_kernel(const std::string& key) {
  const auto reader = readers_.acquire();
  return db::with_context("find_kernel " + key, [&]() -> std::optional<KernelBlob> {
    db::Statement query(*reader, "SELECT * FROM kernels WHERE key = ?");
    query.bind(1, key);
    if (!query.step()) return std::nullopt;
    KernelBlob blob;
    blob.key = query.column("key").text();
    blob.arch = query.column("arch").text();
    blob.kernel = query.column("kernel").text();
    blob.nvrtc_version = query.column("nvrtc_version").text();
    blob.cubin = query.column("cubin").blob();
    blob.log = query.column("log").text();
    blob.resources.registers = query.column("registers").integer();
    blob.resources.spill_store_bytes = query.column("spill_store_bytes").integer();
    blob.resources.spill_load_bytes = query.column("spill_load_bytes").integer();
    blob.resources.stack_frame_bytes = query.column("stack_frame_bytes").integer();
    blob.resources.static_smem_bytes = query.column("static_smem_bytes").integer();
    blob.resources.const_bytes = query.column("const_bytes").integer();
    return blob;
  });
}

void KernelStore::put_kernel(const KernelBlob& blob) {
  if (blob.cubin.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::invalid_argument("put_kernel: cubin of " + std::to_string(blob.cubin.size()) +
                                " bytes is too large to store");
  std::lock_guard lock(writer_.mutex());
  db::with_context("put_kernel " + blob.key, [&] {
    writer_.mutex().touches_no_answer();  // the compile cache: no answer reads it
    db::Statement insert(
        writer_.db(),
        std::string("INSERT INTO kernels (key, arch, kernel, nvrtc_version,"
                    " cubin, log, registers, spill_store_bytes, spill_load_bytes,"
                    " stack_frame_bytes, static_smem_bytes, const_bytes, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ") +
            db::now_sql(writer_.db().dialect()) +
            ") ON CONFLICT (key) DO UPDATE SET arch = excluded.arch, kernel = excluded.kernel,"
            " nvrtc_version = excluded.nvrtc_version, cubin = excluded.cubin, log = excluded.log,"
            " registers = excluded.registers, spill_store_bytes = excluded.spill_store_bytes,"
            " spill_load_bytes = excluded.spill_load_bytes,"
            " stack_frame_bytes = excluded.stack_frame_bytes,"
            " static_smem_bytes = excluded.static_smem_bytes, const_bytes = excluded.const_bytes,"
            " created_at = excluded.created_at");
    insert.bind(1, blob.key);
    insert.bind(2, blob.arch);
    insert.bind(3, blob.kernel);
    insert.bind(4, blob.nvrtc_version);
    insert.bind_blob(5, blob.cubin);
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

}  // namespace kt::db
