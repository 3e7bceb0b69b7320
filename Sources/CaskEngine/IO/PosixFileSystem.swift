import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The real file system, through `Syscall`.
public struct PosixFileSystem: FileSystem {
  public init() {}

  /// Opens a file of the store. A symbolic link or anything but a regular file under a store
  /// file's name is refused (`CaskError.io`, `ELOOP` or `EINVAL`): someone who can write the
  /// directory must not make the store create, read or append to files elsewhere (another
  /// store's segment, say), or block on a FIFO. The descriptor is never 0, 1 or 2, also in a
  /// process started with those closed (`Syscall.raised`): what the program writes to its
  /// standard output or error must not land in a store file.
  public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    let flags: Int32
    switch mode {
    case .readOnly: flags = O_RDONLY
    case .readWrite: flags = O_RDWR
    case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
    }
    return PosixFile(
      descriptor: try Self.openRegular(path, flags: flags).descriptor, path: path, writable: mode != .readOnly)
  }

  /// `open` with `O_NOFOLLOW` (and `O_NONBLOCK`, so that opening a FIFO does not wait), then a
  /// check that the descriptor is a regular file.
  ///
  /// Opened with `O_NOATIME` where the kernel allows it (the file's owner): reading a store
  /// does not tell anyone who can list the directory when, or which files, it was read. For a
  /// file of another user (a store shared by read permission) that is `EPERM`, and the file is
  /// opened again without it.
  ///
  /// - Returns: the descriptor and the identity of the file it is open on.
  private static func openRegular(_ path: String, flags: Int32) throws -> (descriptor: Int32, file: Syscall.FileID) {
    let descriptor: Int32
    var opened = flags | O_NOFOLLOW | O_NONBLOCK | Syscall.noAccessTime
    do {
      descriptor = try Syscall.open(path, flags: opened, mode: 0o600)
    } catch CaskError.io(_, _, let code) where code == EPERM {
      opened = flags | O_NOFOLLOW | O_NONBLOCK
      descriptor = try Syscall.open(path, flags: opened, mode: 0o600)
    }
    guard let file = Syscall.regularFileID(descriptor) else {
      Syscall.close(descriptor)
      throw CaskError.io(operation: "open (not a regular file)", path: path, errno: EINVAL)
    }
    // Left set: Linux ignores O_NONBLOCK on a regular file (reads, writes, syncs and `flock`,
    // which takes LOCK_NB on its own, behave the same), and clearing it was one more system
    // call for every file an open reads.
    return (descriptor, file)
  }

  public func contentsOfDirectory(_ path: String) throws -> [String] {
    try Syscall.listDirectory(path)
  }

  public func createDirectory(_ path: String) throws {
    var prefix = path.hasPrefix("/") ? "/" : ""
    for component in path.split(separator: "/") {
      prefix += component
      if Syscall.kind(prefix) != .directory { try Syscall.mkdir(prefix) }
      prefix += "/"
    }
  }

  public func createDirectoryExclusively(_ path: String) throws {
    try Syscall.mkdir(path, exclusive: true)
  }

  public func fileKind(_ path: String) -> FileKind {
    Syscall.kind(path)
  }

  public func removeFile(_ path: String) throws {
    try Syscall.unlink(path)
  }

  public func removeDirectory(_ path: String) throws {
    try Syscall.rmdir(path)
  }

  public func rename(_ source: String, to destination: String) throws {
    try Syscall.rename(source, destination)
  }

  /// One `renameat2(RENAME_NOREPLACE)` (Linux 3.15, glibc 2.28); where the kernel, the file
  /// system or a sandbox refuses it (`ENOSYS`, `EINVAL`, `EPERM`), a check (`lstat`: a dangling
  /// link counts) and a `rename`, which an empty directory made between the two would lose to.
  public func renameNoReplace(_ source: String, to destination: String) throws {
    if try Syscall.renameNoReplace(source, destination) { return }
    guard !Syscall.exists(destination) else {
      throw CaskError.io(operation: "rename", path: destination, errno: EEXIST)
    }
    try Syscall.rename(source, destination)
  }

  /// One `renameat2(RENAME_EXCHANGE)` (Linux 3.15, glibc 2.28). No fallback: two renames
  /// would leave neither name for a moment, and a crash then.
  public func exchange(_ first: String, _ second: String) throws {
    try Syscall.exchange(first, second)
  }

  public func syncDirectory(_ path: String) throws {
    let descriptor = try Syscall.open(path, flags: O_RDONLY | O_DIRECTORY)
    defer { Syscall.close(descriptor) }
    try Syscall.fsync(descriptor, path: path)
  }

  /// Takes the store's lock file. A shared lock (a read-only open) that may not write the
  /// lock file (a read-only file system: a backup on read-only media, a read-only mount; or a
  /// store another user shares by read permission) opens an existing `LOCK` for reading,
  /// which `flock` accepts as well, so that a writer reaching the same files through another,
  /// writable mount or as their owner is still seen; with no `LOCK` there (a copy of a store),
  /// no lock is needed: nobody can write through this path, and a writer would have made one.
  public func lock(_ path: String, exclusive: Bool) throws -> any FileLock {
    let descriptor: Int32
    let file: Syscall.FileID
    do {
      (descriptor, file) = try Self.openRegular(path, flags: O_RDWR | O_CREAT)
    } catch CaskError.io(_, _, let code) where !exclusive && (code == EROFS || code == EACCES) {
      do {
        (descriptor, file) = try Self.openRegular(path, flags: O_RDONLY)
      } catch CaskError.io(_, _, let code) where code == ENOENT {
        return NoLock()
      }
    }
    do {
      guard try Syscall.flock(descriptor, exclusive: exclusive, path: path) else {
        // A `flock` is held per open file, so this process's own holder conflicts too.
        if PosixLock.held.withLock({ $0[file, default: 0] > 0 }) {
          throw CaskError.alreadyOpen(path: path)
        }
        throw CaskError.locked(path: path)
      }
    } catch {
      Syscall.close(descriptor)
      throw error
    }
    return PosixLock(descriptor: descriptor, file: file)
  }
}

/// A file descriptor owned by this object; closed on `close()` or deinit.
final class PosixFile: StorageFile {
  let path: String
  private let descriptor: Atomic<Int32>
  /// Whether the descriptor was opened for writing: its mapping is then writable too.
  private let writable: Bool
  /// The file's mapping, made at the first `readMapped` or `writeMapped` (a slot holding `nil`
  /// when the file cannot be mapped): point reads of records copy from it instead of calling
  /// `pread`, appends into reserved space copy into it instead of calling `pwrite`. The slot's
  /// address, retained once and released in deinit; 0 until the first use. Prevents: a retain
  /// and a release of the slot and of the mapping on every mapped read and append (with
  /// `AtomicLazyReference`, about a twentieth of a delete's time).
  private let mappingSlot = Atomic<UInt>(0)
  /// Whether `readMapped` has been called once: the first read of a file is a `pread`, and
  /// only a second one maps it. Prevents: a store opened for one read (an open plus a get)
  /// paying a gigabyte's `mmap`, the signal handler's set-up and the page faults of a new
  /// mapping, about a twentieth of that open, for a record one `pread` copies.
  private let readOnce = Atomic<Bool>(false)

  private final class MappingSlot: Sendable {
    let mapping: FileMapping?
    init(_ mapping: FileMapping?) { self.mapping = mapping }
  }

  init(descriptor: Int32, path: String, writable: Bool) {
    self.descriptor = Atomic(descriptor)
    self.path = path
    self.writable = writable
  }

  deinit {
    close()
    let slot = mappingSlot.load(ordering: .acquiring)
    if let address = UnsafeRawPointer(bitPattern: slot) { Unmanaged<MappingSlot>.fromOpaque(address).release() }
  }

  private func current() throws -> Int32 {
    let value = descriptor.load(ordering: .acquiring)
    guard value >= 0 else { throw CaskError.io(operation: "use", path: path, errno: EBADF) }
    return value
  }

  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try Syscall.pread(current(), buffer, offset, path: path)
  }

  /// Calls `body` with the file's mapping, made now if this is the first use; `false` when
  /// the file cannot be mapped.
  private func withMapping(_ body: (FileMapping) -> Bool) -> Bool {
    var address = UnsafeRawPointer(bitPattern: mappingSlot.load(ordering: .acquiring))
    if address == nil {
      guard let descriptor = try? current(), let size = try? size() else { return false }
      let made = FileMapping(descriptor: descriptor, size: size, path: path, writable: writable)
      let slot = UInt(bitPattern: Unmanaged.passRetained(MappingSlot(made)).toOpaque())
      let (stored, existing) = mappingSlot.compareExchange(
        expected: 0, desired: slot, ordering: .acquiringAndReleasing)
      if !stored, let loser = UnsafeRawPointer(bitPattern: slot) {
        // Another thread mapped the file first: its slot is kept, this one goes.
        Unmanaged<MappingSlot>.fromOpaque(loser).release()
      }
      address = UnsafeRawPointer(bitPattern: stored ? slot : existing)
    }
    guard let address else { return false }
    // The slot lives until deinit, which no caller can overlap.
    return Unmanaged<MappingSlot>.fromOpaque(address)._withUnsafeGuaranteedRef { slot in
      guard let mapping = slot.mapping else { return false }
      return body(mapping)
    }
  }

  func readMapped(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
    if mappingSlot.load(ordering: .relaxed) == 0 && !readOnce.exchange(true, ordering: .relaxed) { return false }
    return withMapping { $0.copy(into: buffer, at: offset) }
  }

  func nextData(from offset: UInt64) -> UInt64 {
    guard let descriptor = try? current(), let end = try? size() else { return offset }
    guard offset < end else { return end }
    return Syscall.seek(descriptor, toNext: false, from: offset, end: end).map { max($0, offset) } ?? offset
  }

  func nextHole(from offset: UInt64) -> UInt64 {
    // A file whose size cannot be read has no hole anyone knows of; the read that follows fails.
    guard let end = try? size() else { return .max }
    return nextHole(from: offset, size: end)
  }

  func nextHole(from offset: UInt64, size end: UInt64) -> UInt64 {
    guard let descriptor = try? current() else { return .max }
    guard offset < end else { return end }
    return Syscall.seek(descriptor, toNext: true, from: offset, end: end).map { min(max($0, offset), end) } ?? end
  }

  func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
    withMapping { $0.write(bytes, at: offset) }
  }

  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    let descriptor = try current()
    var written = 0
    while written < bytes.count {
      let count = try Syscall.pwrite(
        descriptor, UnsafeRawBufferPointer(rebasing: bytes[written...]), offset + UInt64(written), path: path)
      if count == 0 { throw CaskError.io(operation: "pwrite", path: path, errno: EIO) }
      written += count
    }
  }

  func sync() throws {
    try Syscall.fdatasync(current(), path: path)
  }

  func startWriteback(from offset: UInt64, count: UInt64) {
    guard let descriptor = try? current() else { return }
    Syscall.startWriteback(descriptor, offset: offset, count: count)
  }

  func size() throws -> UInt64 {
    try Syscall.fileSize(current(), path: path)
  }

  func truncate(to length: UInt64) throws {
    try Syscall.ftruncate(current(), length, path: path)
  }

  func close() {
    let old = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
    if old >= 0 { Syscall.close(old) }
  }
}

/// A held `flock`; the descriptor is closed (releasing the lock) on `unlock()` or deinit.
/// The lock of a read-only open where no lock file can exist (see `PosixFileSystem.lock`).
final class NoLock: FileLock {
  func unlock() {}
}

final class PosixLock: FileLock {
  /// The lock files this process holds locks on, by device and inode, with how many locks
  /// (several read-only opens share one file): so that a refused lock can say whether this
  /// process is the holder.
  static let held = Locked<[Syscall.FileID: Int]>([:])

  private let descriptor: Atomic<Int32>
  private let file: Syscall.FileID?

  init(descriptor: Int32, file: Syscall.FileID?) {
    self.descriptor = Atomic(descriptor)
    self.file = file
    if let file { Self.held.withLock { $0[file, default: 0] += 1 } }
  }

  deinit {
    unlock()
  }

  /// Releases the lock explicitly before closing the descriptor. A `flock` belongs to the open
  /// file description, which a child process started by another thread shares from its
  /// `clone` until its `exec` closes the descriptor (`O_CLOEXEC`); a bare `close` would leave
  /// the lock held for that moment, and a reopen in it would fail with `locked`.
  func unlock() {
    let old = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
    if old >= 0 {
      if let file {
        Self.held.withLock { held in
          held[file, default: 1] -= 1
          if held[file] == 0 { held[file] = nil }
        }
      }
      Syscall.unlock(old)
      Syscall.close(old)
    }
  }
}
