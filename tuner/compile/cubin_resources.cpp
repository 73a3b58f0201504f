// read_cubin_resources: a small, bounds-checked ELF64 reader for the facts of one kernel. What it
// relies on was checked against NVRTC 13.0's ptxas log and the driver (cuFuncGetAttribute on an
// H100) for kernels with many registers, static shared memory, spills and local arrays:
//  - per-kernel attributes are records in ".nv.info" (and ".nv.info.<kernel>"): {u8 format,
//    u8 attribute, u16 value}; format 4 (EIFMT_SVAL) means `value` payload bytes follow; formats
//    1-3 carry no payload. EIATTR_REGCOUNT (0x2f) and EIATTR_FRAME_SIZE (0x11) hold {u32 symbol
//    index, u32 figure}.
//  - static shared memory is the size of section ".nv.shared.<kernel>". From sm_90 on, that
//    section starts with the 1 KiB of shared memory the system reserves in every block; the
//    driver and ptxas leave it out (4616 bytes of __shared__ arrays: a 5640-byte section), so
//    it is subtracted here too.
//  - the SM version is in e_flags: bits 8-15 in the ELF ABI version 8 that CUDA 13 writes, the
//    low byte in the older layout.
#include "tuner/compile/cubin_resources.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

namespace kt {
namespace {

constexpr std::uint16_t kEmCuda = 190;
constexpr std::uint32_t kShtSymtab = 2;
constexpr std::uint32_t kShtNobits = 8;
constexpr std::uint8_t kSttFunc = 2;
constexpr std::size_t kElfHeaderBytes = 64;
constexpr std::size_t kSectionHeaderBytes = 64;
constexpr std::size_t kSymbolBytes = 24;
constexpr std::uint8_t kFormatSval = 0x04;  // a u16 size and that many payload bytes follow
constexpr std::uint8_t kAttrFrameSize = 0x11;
constexpr std::uint8_t kAttrRegcount = 0x2f;
// The system's share of every block's shared memory window from sm_90 on (the driver's
// CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK on an H100).
constexpr int kReservedSmemFromSm90 = 1024;

// Little-endian reads that refuse to step outside the file.
class Bytes {
 public:
  explicit Bytes(std::span<const char> data) : data_(data) {}

  std::size_t size() const { return data_.size(); }

  bool holds(std::uint64_t offset, std::uint64_t length) const {
    return offset <= data_.size() && length <= data_.size() - offset;
  }

  template <typename T>
  T read(std::uint64_t offset, const char* what) const {
    if (!holds(offset, sizeof(T)))
      throw CubinError(std::string("cubin truncated: ") + what + " at byte " +
                       std::to_string(offset) + " lies past the end of its " +
                       std::to_string(data_.size()) + " bytes");
    T value;
    std::memcpy(&value, data_.data() + offset, sizeof(T));  // hosts are little-endian, as is ELF
    return value;
  }

  std::span<const char> slice(std::uint64_t offset, std::uint64_t length, const char* what) const {
    if (!holds(offset, length))
      throw CubinError(std::string("cubin damaged: ") + what + " (" + std::to_string(length) +
                       " bytes at " + std::to_string(offset) + ") lies outside the file's " +
                       std::to_string(data_.size()) + " bytes");
    return data_.subspan(offset, length);
  }

 private:
  std::span<const char> data_;
};

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint64_t entry_size = 0;
};

// The NUL-terminated string at `offset` of a string table; throws if it runs off the table.
std::string_view string_at(std::span<const char> table, std::uint64_t offset, const char* what) {
  if (offset >= table.size())
    throw CubinError(std::string("cubin damaged: ") + what + " name offset " +
                     std::to_string(offset) + " is outside its string table");
  const std::span<const char> rest = table.subspan(offset);
  const auto* end = static_cast<const char*>(std::memchr(rest.data(), '\0', rest.size()));
  if (end == nullptr)
    throw CubinError(std::string("cubin damaged: ") + what + " name is not NUL-terminated");
  return {rest.data(), static_cast<std::size_t>(end - rest.data())};
}

std::vector<Section> read_sections(const Bytes& file) {
  const auto table_offset = file.read<std::uint64_t>(0x28, "e_shoff");
  const auto entry_size = file.read<std::uint16_t>(0x3a, "e_shentsize");
  const auto count = file.read<std::uint16_t>(0x3c, "e_shnum");
  const auto names_index = file.read<std::uint16_t>(0x3e, "e_shstrndx");
  if (count == 0 || entry_size < kSectionHeaderBytes)
    throw CubinError("cubin damaged: no section table (e_shnum " + std::to_string(count) +
                     ", e_shentsize " + std::to_string(entry_size) + ")");
  if (!file.holds(table_offset, std::uint64_t{count} * entry_size))
    throw CubinError("cubin truncated: its " + std::to_string(count) +
                     " section headers lie past the end of the file");
  std::vector<Section> sections(count);
  std::vector<std::uint32_t> name_offsets(count);
  for (std::uint16_t i = 0; i < count; ++i) {
    const std::uint64_t at = table_offset + std::uint64_t{i} * entry_size;
    name_offsets[i] = file.read<std::uint32_t>(at, "sh_name");
    sections[i].type = file.read<std::uint32_t>(at + 4, "sh_type");
    sections[i].offset = file.read<std::uint64_t>(at + 24, "sh_offset");
    sections[i].size = file.read<std::uint64_t>(at + 32, "sh_size");
    sections[i].link = file.read<std::uint32_t>(at + 40, "sh_link");
    sections[i].entry_size = file.read<std::uint64_t>(at + 56, "sh_entsize");
  }
  if (names_index >= count)
    throw CubinError("cubin damaged: section-name table index " + std::to_string(names_index) +
                     " of " + std::to_string(count) + " sections");
  const Section& names = sections[names_index];
  const std::span<const char> name_table =
      file.slice(names.offset, names.size, "the section-name table");
  for (std::uint16_t i = 0; i < count; ++i)
    sections[i].name = std::string(string_at(name_table, name_offsets[i], "section"));
  return sections;
}

std::span<const char> contents(const Bytes& file, const Section& section) {
  if (section.type == kShtNobits) return {};
  return file.slice(section.offset, section.size, section.name.c_str());
}

// Index of the function symbol `kernel` in the symbol table.
std::uint32_t kernel_symbol(const Bytes& file, const std::vector<Section>& sections,
                            const std::string& kernel) {
  for (const Section& symtab : sections) {
    if (symtab.type != kShtSymtab) continue;
    if (symtab.link >= sections.size())
      throw CubinError("cubin damaged: the symbol table names string table " +
                       std::to_string(symtab.link) + " of " + std::to_string(sections.size()));
    const std::uint64_t entry = symtab.entry_size == 0 ? kSymbolBytes : symtab.entry_size;
    if (entry < kSymbolBytes)
      throw CubinError("cubin damaged: symbol entries of " + std::to_string(entry) + " bytes");
    const std::span<const char> symbols = contents(file, symtab);
    const std::span<const char> strings = contents(file, sections[symtab.link]);
    const Bytes table(symbols);
    for (std::uint64_t index = 0; index < symbols.size() / entry; ++index) {
      const std::uint64_t at = index * entry;
      const auto info = table.read<std::uint8_t>(at + 4, "st_info");
      if ((info & 0xf) != kSttFunc) continue;
      const auto name = table.read<std::uint32_t>(at, "st_name");
      if (string_at(strings, name, "symbol") == kernel) return static_cast<std::uint32_t>(index);
    }
  }
  throw CubinError("cubin has no function symbol '" + kernel + "'");
}

// The figure an EIATTR {u32 symbol, u32 value} record gives `symbol` in the attribute sections.
struct NvInfoFigures {
  std::optional<int> registers;
  std::optional<int> frame_bytes;
};

void scan_nv_info(std::span<const char> records, const std::string& section_name,
                  std::uint32_t symbol, NvInfoFigures& figures) {
  const Bytes bytes(records);
  std::uint64_t at = 0;
  while (at + 4 <= records.size()) {
    const auto format = bytes.read<std::uint8_t>(at, "EIATTR format");
    const auto attribute = bytes.read<std::uint8_t>(at + 1, "EIATTR attribute");
    const auto value = bytes.read<std::uint16_t>(at + 2, "EIATTR value");
    if (format == 0 || format > kFormatSval)
      throw CubinError("cubin damaged: unknown record format " + std::to_string(format) + " at " +
                       std::to_string(at) + " of " + section_name);
    if (format != kFormatSval) {  // EIFMT_NVAL, _BVAL, _HVAL: the value is inline
      at += 4;
      continue;
    }
    const std::span<const char> payload = bytes.slice(at + 4, value, "an EIATTR payload");
    if ((attribute == kAttrRegcount || attribute == kAttrFrameSize) && payload.size() >= 8) {
      const Bytes fields(payload);
      if (fields.read<std::uint32_t>(0, "EIATTR symbol") == symbol) {
        const auto figure = fields.read<std::uint32_t>(4, "EIATTR figure");
        if (figure > 0x7fffffffu)
          throw CubinError("cubin damaged: attribute " + std::to_string(attribute) + " of " +
                           std::to_string(figure));
        (attribute == kAttrRegcount ? figures.registers : figures.frame_bytes) =
            static_cast<int>(figure);
      }
    }
    at += 4 + std::uint64_t{value};
  }
}

int checked_int(std::uint64_t bytes, const std::string& what) {
  if (bytes > 0x7fffffffu)
    throw CubinError("cubin damaged: " + what + " of " + std::to_string(bytes) + " bytes");
  return static_cast<int>(bytes);
}

// ".nv.constant<digits>.<kernel>"
bool is_constant_bank_of(const std::string& name, const std::string& kernel) {
  constexpr std::string_view prefix = ".nv.constant";
  if (name.rfind(prefix, 0) != 0) return false;
  std::size_t at = prefix.size();
  const std::size_t digits_begin = at;
  while (at < name.size() && name[at] >= '0' && name[at] <= '9') ++at;
  return at > digits_begin && name.compare(at, std::string::npos, "." + kernel) == 0;
}

}  // namespace

CubinKernelResources read_cubin_resources(std::span<const char> cubin, const std::string& kernel) {
  const Bytes file(cubin);
  constexpr char kElfMagic[4] = {'\x7f', 'E', 'L', 'F'};
  if (file.size() < kElfHeaderBytes || std::memcmp(cubin.data(), kElfMagic, 4) != 0)
    throw CubinError("not an ELF file (" + std::to_string(file.size()) + " bytes)");
  if (cubin[4] != 2 || cubin[5] != 1)
    throw CubinError("not a little-endian ELF64 file: a cubin is one");
  const auto machine = file.read<std::uint16_t>(18, "e_machine");
  if (machine != kEmCuda)
    throw CubinError("ELF file for machine " + std::to_string(machine) + ", not EM_CUDA (190)");

  CubinKernelResources out;
  const auto flags = file.read<std::uint32_t>(0x30, "e_flags");
  const auto abi_version = static_cast<std::uint8_t>(cubin[8]);
  out.sm = static_cast<int>(abi_version >= 8 ? (flags >> 8) & 0xff : flags & 0xff);

  const std::vector<Section> sections = read_sections(file);
  const std::uint32_t symbol = kernel_symbol(file, sections, kernel);
  NvInfoFigures figures;
  for (const Section& section : sections)
    if (section.name == ".nv.info" || section.name == ".nv.info." + kernel)
      scan_nv_info(contents(file, section), section.name, symbol, figures);
  if (!figures.registers)
    throw CubinError("cubin records no register count (EIATTR_REGCOUNT) for '" + kernel + "'");
  out.registers = *figures.registers;
  out.stack_frame_bytes = figures.frame_bytes.value_or(0);

  std::uint64_t const_bytes = 0;
  for (const Section& section : sections) {
    if (section.name == ".nv.shared." + kernel) {
      const int window = checked_int(section.size, section.name);
      out.static_smem_bytes = out.sm >= 90 ? std::max(0, window - kReservedSmemFromSm90) : window;
    } else if (is_constant_bank_of(section.name, kernel)) {
      const_bytes += static_cast<std::uint64_t>(checked_int(section.size, section.name));
    }
  }
  out.const_bytes = checked_int(const_bytes, "the constant banks");
  return out;
}

}  // namespace kt
