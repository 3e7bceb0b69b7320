import CaskPlatform

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The engine's system calls on store files. Each wrapper retries `EINTR` (through
/// `SystemCall.retrying`, the package's one retry rule) and turns a failure into `CaskError.io`
/// carrying the operation, the path and `errno`. (The lock file and the codec's own file
/// helpers make their calls through the same retry; `AtomicFile` and `PosixFileSystem` call
/// only these wrappers.)
enum Syscall {
  @inline(__always)
  private static func retrying<T: BinaryInteger>(_ call: () -> T) -> (T, Int32) {
    SystemCall.retrying(call)
  }

  /// `open`, with the result always above the standard descriptors (see `raised`). A file
  /// this call created (`O_CREAT | O_EXCL`) is removed again when its descriptor cannot be
  /// raised (no free descriptor above 2: `EMFILE`).
  static func open(_ path: String, flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
    let (descriptor, code) = retrying { Glibc.open(path, flags | O_CLOEXEC, mode) }
    guard descriptor >= 0 else { throw CaskError.io(operation: "open", path: path, errno: code) }
    do {
      return try raised(descriptor, path: path)
    } catch {
      if flags & (O_CREAT | O_EXCL) == O_CREAT | O_EXCL { _ = Glibc.unlink(path) }
      throw error
    }
  }

  /// The descriptor of a store file, never 0, 1 or 2 (`StandardDescriptors` says why).
  ///
  /// - Throws: `CaskError.io` when the descriptor cannot be moved or `/dev/null` not opened;
  ///   `descriptor` is closed then.
  static func raised(_ descriptor: Int32, path: String) throws -> Int32 {
    switch StandardDescriptors.keepingOff(descriptor) {
    case .success(let raised): return raised
    case .failure(let failure): throw CaskError.io(operation: failure.operation, path: path, errno: failure.code)
    }
  }

  static func close(_ descriptor: Int32) {
    // close must not be retried on EINTR on Linux: the descriptor is already released.
    _ = Glibc.close(descriptor)
  }

  static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: UInt64, path: String)
    throws -> Int
  {
    let (count, code) = retrying { Glibc.pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
    guard count >= 0 else { throw CaskError.io(operation: "pread", path: path, errno: code) }
    return count
  }

  static func pwrite(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, _ offset: UInt64, path: String) throws
    -> Int
  {
    let (count, code) = retrying { Glibc.pwrite(descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
    guard count >= 0 else { throw CaskError.io(operation: "pwrite", path: path, errno: code) }
    return count
  }

  static func fsync(_ descriptor: Int32, path: String) throws {
    let (result, code) = retrying { Glibc.fsync(descriptor) }
    guard result == 0 else { throw CaskError.io(operation: "fsync", path: path, errno: code) }
  }

  static func fdatasync(_ descriptor: Int32, path: String) throws {
    let (result, code) = retrying { Glibc.fdatasync(descriptor) }
    guard result == 0 else { throw CaskError.io(operation: "fdatasync", path: path, errno: code) }
  }

  /// glibc's `sync_file_range`, looked up at run time: Swift's Glibc module does not declare it.
  private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sync_file_range") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
  }()

  /// Asks the kernel to start writing the dirty pages of `count` bytes at `offset` to the
  /// disk, without waiting for them (`sync_file_range(SYNC_FILE_RANGE_WRITE)`). Makes nothing
  /// durable (no metadata, no cache flush): it only moves work a later `fdatasync` would do
  /// to now, in the background. Best effort: a kernel or file system that cannot is ignored.
  static func startWriteback(_ descriptor: Int32, offset: UInt64, count: UInt64) {
    guard let syncFileRange else { return }
    let write: UInt32 = 2  // SYNC_FILE_RANGE_WRITE, <fcntl.h>
    _ = retrying { syncFileRange(descriptor, Int64(offset), Int64(count), write) }
  }

  static func ftruncate(_ descriptor: Int32, _ length: UInt64, path: String) throws {
    let (result, code) = retrying { Glibc.ftruncate(descriptor, off_t(length)) }
    guard result == 0 else { throw CaskError.io(operation: "ftruncate", path: path, errno: code) }
  }

  static func fileSize(_ descriptor: Int32, path: String) throws -> UInt64 {
    var info = stat()
    let (result, code) = retrying { fstat(descriptor, &info) }
    guard result == 0 else { throw CaskError.io(operation: "fstat", path: path, errno: code) }
    return UInt64(info.st_size)
  }

  /// `O_NOATIME` (Linux `__O_NOATIME`, the same on x86-64 and arm64), which the C module
  /// does not export without `_GNU_SOURCE`: reads through the descriptor leave the access
  /// time alone. Only the file's owner may ask for it (`EPERM` otherwise).
  #if os(Linux)
    static let noAccessTime: Int32 = 0o1_000_000
  #else
    static let noAccessTime: Int32 = 0
  #endif

  /// `SEEK_DATA` and `SEEK_HOLE` (Linux and the BSDs differ), which the C module does not
  /// export without `_GNU_SOURCE` either.
  #if os(Linux)
    private static let seekData: Int32 = 3
    private static let seekHole: Int32 = 4
  #else
    private static let seekData: Int32 = SEEK_DATA
    private static let seekHole: Int32 = SEEK_HOLE
  #endif

  /// `lseek(SEEK_DATA)` (`hole` false) or `lseek(SEEK_HOLE)` from `offset`: where the next
  /// data or hole begins. `nil` when the file system does not say (`EINVAL` on one without
  /// the calls) or another error; `ENXIO` (nothing but a hole after `offset`, or `offset` at
  /// the end) gives `end`.
  static func seek(_ descriptor: Int32, toNext hole: Bool, from offset: UInt64, end: UInt64) -> UInt64? {
    let (result, code) = retrying { lseek(descriptor, off_t(offset), hole ? seekHole : seekData) }
    guard result >= 0 else { return code == ENXIO ? end : nil }
    return UInt64(result)
  }

  /// A file's identity: its device and inode.
  struct FileID: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
  }

  /// The identity of the file `descriptor` is open on if it is a regular file (not a FIFO,
  /// device or directory); `nil` otherwise or if `fstat` fails. One `fstat` answers both, the
  /// check every store file gets and the identity the lock file needs.
  static func regularFileID(_ descriptor: Int32) -> FileID? {
    var info = stat()
    guard retrying({ fstat(descriptor, &info) }).0 == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    return FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
  }

  /// Whether anything is at `path`, a symbolic link (dangling or not) included.
  static func exists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
  }

  static func kind(_ path: String) -> FileKind {
    var info = stat()
    guard stat(path, &info) == 0 else { return .missing }
    return (info.st_mode & S_IFMT) == S_IFDIR ? .directory : .file
  }

  static func rename(_ source: String, _ destination: String) throws {
    let (result, code) = retrying { Glibc.rename(source, destination) }
    guard result == 0 else { throw CaskError.io(operation: "rename", path: destination, errno: code) }
  }

  /// glibc's `renameat2`, looked up at run time: Swift's Glibc module does not declare it.
  private static let renameat2:
    (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32)? = {
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
      return unsafeBitCast(
        symbol, to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
    }()

  /// Renames `source` to `destination` unless something is there (`RENAME_NOREPLACE`).
  ///
  /// - Returns: `false` when this kernel, C library or file system cannot (nothing was done).
  /// - Throws: `CaskError.io` (`EEXIST` when something is at `destination`).
  static func renameNoReplace(_ source: String, _ destination: String) throws -> Bool {
    guard let renameat2 else { return false }
    let noReplace: UInt32 = 1  // RENAME_NOREPLACE, <linux/fs.h>
    let (result, code) = retrying { renameat2(AT_FDCWD, source, AT_FDCWD, destination, noReplace) }
    if result == 0 { return true }
    // ENOSYS: an old kernel; EINVAL: a file system without the flag; EPERM: a sandbox
    // (seccomp) that refuses system calls it does not know.
    if code == ENOSYS || code == EINVAL || code == EPERM { return false }
    throw CaskError.io(operation: "rename", path: destination, errno: code)
  }

  /// Swaps `first` and `second` (`RENAME_EXCHANGE`).
  ///
  /// - Throws: `CaskError.io`; `ENOSYS` also when the C library has no `renameat2`.
  static func exchange(_ first: String, _ second: String) throws {
    let operation = "renameat2 (RENAME_EXCHANGE)"
    guard let renameat2 else { throw CaskError.io(operation: operation, path: second, errno: ENOSYS) }
    let exchange: UInt32 = 2  // RENAME_EXCHANGE, <linux/fs.h>
    let (result, code) = retrying { renameat2(AT_FDCWD, first, AT_FDCWD, second, exchange) }
    guard result == 0 else { throw CaskError.io(operation: operation, path: second, errno: code) }
  }

  static func unlink(_ path: String) throws {
    let (result, code) = retrying { Glibc.unlink(path) }
    guard result == 0 || code == ENOENT else { throw CaskError.io(operation: "unlink", path: path, errno: code) }
  }

  static func rmdir(_ path: String) throws {
    let (result, code) = retrying { Glibc.rmdir(path) }
    guard result == 0 || code == ENOENT else { throw CaskError.io(operation: "rmdir", path: path, errno: code) }
  }

  /// - Parameter exclusive: fail with `EEXIST` when something is at `path` (else that is success).
  static func mkdir(_ path: String, exclusive: Bool = false) throws {
    let (result, code) = retrying { Glibc.mkdir(path, 0o700) }
    guard result == 0 || (code == EEXIST && !exclusive) else {
      throw CaskError.io(operation: "mkdir", path: path, errno: code)
    }
  }

  /// `flock` without waiting. - Returns: `false` when someone else holds a conflicting lock.
  static func flock(_ descriptor: Int32, exclusive: Bool, path: String) throws -> Bool {
    let call: (Int32, Int32) -> Int32 = Glibc.flock(_:_:)
    let (result, code) = retrying { call(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) }
    if result == 0 { return true }
    if code == EWOULDBLOCK { return false }
    throw CaskError.io(operation: "flock", path: path, errno: code)
  }

  /// Releases a `flock` (nothing to report: the descriptor is closed right after).
  static func unlock(_ descriptor: Int32) {
    let call: (Int32, Int32) -> Int32 = Glibc.flock(_:_:)
    _ = retrying { call(descriptor, LOCK_UN) }
  }

  static func listDirectory(_ path: String) throws -> [String] {
    guard let directory = opendir(path) else {
      throw CaskError.io(operation: "opendir", path: path, errno: errno)
    }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
        pointer.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// Maps `count` bytes of zeroed anonymous memory (private to the process).
  static func mapAnonymous(_ count: Int, purpose: String) throws -> UnsafeMutableRawPointer {
    let pointer = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    guard let pointer, pointer != MAP_FAILED else {
      throw CaskError.io(operation: "mmap", path: purpose, errno: errno)
    }
    return pointer
  }

  /// Maps `count` bytes of the file behind `descriptor` from its start, shared, read-only or
  /// also writable (`count` rounded up to whole pages; it may exceed the file). Only
  /// `FileMapping` touches such memory (see there).
  ///
  /// - Returns: the address and the length mapped.
  static func mapFile(
    _ descriptor: Int32, count: Int, writable: Bool, path: String
  ) throws -> (UnsafeMutableRawPointer, Int) {
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    let length = (count + pageSize - 1) / pageSize * pageSize
    let pointer = mmap(nil, length, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, descriptor, 0)
    guard let pointer, pointer != MAP_FAILED else {
      throw CaskError.io(operation: "mmap", path: path, errno: errno)
    }
    return (pointer, length)
  }

  /// Returns memory from `mapAnonymous` or `mapFile` to the system.
  static func unmap(_ pointer: UnsafeMutableRawPointer, count: Int) {
    _ = munmap(pointer, count)
  }

  /// The nice value of the calling thread, or `nil` when it cannot be read. On Linux a nice
  /// value belongs to a thread, and process id 0 names the calling one.
  static func threadNiceValue() -> Int32? {
    #if os(Linux)
      errno = 0
      let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
      return errno == 0 ? value : nil
    #else
      return nil
    #endif
  }

  /// Raises the calling thread's nice value by `increment` (to at most 19), lowering its CPU
  /// priority and nothing else's. Best effort: a failure leaves the thread as it was.
  static func lowerThreadPriority(by increment: Int32) {
    #if os(Linux)
      guard let current = threadNiceValue() else { return }
      _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, current + increment))
    #endif
  }
}
