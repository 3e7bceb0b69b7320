internal import CMappedRead

#if canImport(Glibc)
  import Glibc
#endif

/// A read-only shared mapping of a file, for point reads without a system call
/// (`StorageFile.readMapped`): a get copies its record out of the mapping instead of calling
/// `pread`, about 0.7 µs less for a 1 KiB record here (Docs/BENCHMARKS.md, "Where a
/// microsecond goes").
///
/// A mapping cannot crash the process: every copy out of it goes through `cask_mapped_copy`
/// (CMappedRead), which a SIGBUS (the file cut short under the mapping, a page the disk cannot
/// read) turns into a failed copy; the caller then reads with `pread`, which reports what is
/// wrong as any read does. Nothing else touches the mapped memory. The mapping spans more
/// than the file (at least `minimumLength`), so that a growing segment's new records are mapped too:
/// Linux maps a page of a shared file mapping as soon as the file reaches it.
///
/// Lifetime: unmapped only when the mapping object goes, which a read in progress keeps
/// (closing the file's descriptor leaves the mapping as it is).
final class FileMapping: @unchecked Sendable {
  // `@unchecked Sendable`: the pointer is only read, through `cask_mapped_copy`, and the
  // memory it names stays mapped until deinit.
  private let base: UnsafeMutableRawPointer
  let length: Int

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

  /// Maps the file behind `descriptor` (at `path`), which is `size` bytes long now, or returns
  /// `nil` when it cannot (mapping not recoverable here, `mmap` refused).
  init?(descriptor: Int32, size: UInt64, path: String) {
    guard Self.recoverable, size <= UInt64(Int.max - Self.minimumLength) else { return nil }
    guard
      let (address, length) = try? Syscall.mapFile(descriptor, count: max(Int(size), Self.minimumLength), path: path)
    else { return nil }
    self.base = address
    self.length = length
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
    guard offset <= UInt64(length), UInt64(buffer.count) <= UInt64(length) - offset else { return false }
    return cask_mapped_copy(destination, base + Int(offset), buffer.count) == 0
  }
}
