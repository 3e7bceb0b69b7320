internal import CMappedCopy

#if canImport(Glibc)
  import Glibc
#endif

/// A shared mapping of a file, for point reads and appends without a system call
/// (`StorageFile.readMapped`, `.writeMapped`): a get copies its record out of the mapping
/// instead of calling `pread`, about 0.7 µs less for a 1 KiB record here, and an append into
/// space the writer reserved ahead copies its records into it instead of calling `pwrite`,
/// about 1 µs less a record (`cask-bench profile get` and `put` under `perf`).
///
/// A mapping cannot crash the process: every copy out of or into it goes through
/// `cask_mapped_copy` (CMappedCopy), which a SIGBUS (the file cut short under the mapping, a
/// page the disk cannot read, a page of a hole the file system finds no space for) turns into
/// a failed copy; the caller then reads with `pread` or writes with `pwrite`, which reports what
/// is wrong as any read or write does. Nothing else touches the mapped memory. The mapping spans
/// more than the file (at least `minimumLength`), so that a growing segment's new records are
/// mapped too: Linux maps a page of a shared file mapping as soon as the file reaches it.
///
/// Bytes copied into a shared mapping are in the page cache, as a `pwrite`'s are: a process
/// that ends right after loses none of them, and `fdatasync` on the descriptor writes them
/// to the disk (on Linux it covers pages dirtied through any mapping of the file).
///
/// Lifetime: unmapped only when the mapping object goes, which a read in progress keeps
/// (closing the file's descriptor leaves the mapping as it is).
final class FileMapping: @unchecked Sendable {
  // `@unchecked Sendable`: the pointer is only used through `cask_mapped_copy`, and the
  // memory it names stays mapped until deinit. Writes come from the store's one writer, into
  // bytes no reader is given before the index points at them.
  private let base: UnsafeMutableRawPointer
  let length: Int
  let writable: Bool

  /// How much of a file one mapping spans: the largest segment a store writes by default and
  /// then some, whatever the file holds yet (address space is not memory).
  static let minimumLength = 1 << 30

  /// Whether this process maps files: copies out of mappings can recover from SIGBUS (the
  /// handler is installed once, the first time a mapping is made), and its address space is
  /// not limited. Only x86-64 has the copy loop that stays out of the sanitizers'
  /// interceptors at full speed; elsewhere files are read. Under a finite `RLIMIT_AS` files
  /// are read too. Prevents: each segment's gigabyte of address space counting against the
  /// limit and leaving the heap too little.
  private static let recoverable: Bool = {
    #if arch(x86_64) && os(Linux)
      var limit = rlimit()
      // RLIM_INFINITY is all bits set (the macro's value does not import).
      guard getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur == rlim_t.max else {
        return false
      }
      return cask_mapped_install() == 0
    #else
      return false
    #endif
  }()

  /// Maps the file behind `descriptor` (at `path`), which is `size` bytes long now, writable
  /// when `writable` (the descriptor must then be open for writing), or returns `nil` when it
  /// cannot (mapping not recoverable here, `mmap` refused).
  init?(descriptor: Int32, size: UInt64, path: String, writable: Bool) {
    guard Self.recoverable, size <= UInt64(Int.max - Self.minimumLength) else { return nil }
    guard
      let (address, length) = try? Syscall.mapFile(
        descriptor, count: max(Int(size), Self.minimumLength), writable: writable, path: path)
    else { return nil }
    self.base = address
    self.length = length
    self.writable = writable
  }

  deinit {
    Syscall.unmap(base, count: length)
  }

  /// Copies the `buffer.count` bytes at `offset` into `buffer`.
  ///
  /// - Returns: `false` when they are not all inside the mapping, or a SIGBUS stopped the copy
  ///   (the file is shorter than they need, or could not be read): `buffer` then holds nothing
  ///   to use, and the caller reads with `pread`.
  func copy(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
    guard let destination = buffer.baseAddress else { return true }
    guard contains(count: buffer.count, at: offset) else { return false }
    return cask_mapped_copy(destination, base + Int(offset), buffer.count) == 0
  }

  /// Copies `bytes` into the file at `offset`.
  ///
  /// - Returns: `false` when the mapping is read-only, the bytes are not all inside it, or a
  ///   SIGBUS stopped the copy (the file does not reach that far, or a page could not be read
  ///   or given disk space): part of the bytes may be in the file, and the caller writes them
  ///   all with `pwrite`.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
    guard let source = bytes.baseAddress else { return true }
    guard writable, contains(count: bytes.count, at: offset) else { return false }
    return cask_mapped_copy(base + Int(offset), source, bytes.count) == 0
  }

  private func contains(count: Int, at offset: UInt64) -> Bool {
    offset <= UInt64(length) && UInt64(count) <= UInt64(length) - offset
  }
}
