import CaskEngine

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An in-memory `FileSystem` that fails the way disks do: power loss, a full disk, EIO.
///
/// Reads see every write at once, as with a page cache, but only what was made durable is
/// sure to outlive `crash(using:)`: file bytes by `StorageFile.sync()`, directory entries
/// (creations, renames, removals) by `syncDirectory` of their directory. Everything else
/// survives, vanishes or tears at random, in order: a prefix of each file's unsynced writes
/// and of each directory's unsynced changes (see `crash(using:)`).
///
/// Besides that it behaves like POSIX: positioned reads and writes, files that stay readable
/// through an open descriptor after they are removed, `rename` that atomically replaces its
/// destination, and `flock` semantics (any number of shared locks or one exclusive one; a
/// conflicting request fails with `CaskError.locked` at once, even from the same process).
/// Failures are `CaskError.io` with the errno a real system call would give.
///
/// Faults on demand: `scheduleCrash(afterMutations:)` cuts the power in the middle of a run,
/// `setFreeBytes(_:)` fills the disk (`ENOSPC`, with partial writes), and `inject(_:)` fails
/// chosen operations on chosen paths (`EIO` by default). A failed `sync` loses the file's
/// unsynced writes for good, as Linux does after a writeback error.
///
/// Thread-safe: one lock guards the whole disk. The engine's pthread-based `Locked`, not
/// `Mutex`: ThreadSanitizer does not see `Mutex` (a futex), and reported the disk's fields as
/// raced between writers of one store.
public final class FaultyFileSystem: FileSystem {
  let disk: Locked<FaultyDisk>

  /// An empty disk holding `directories` (and their parents), all durable.
  public init(directories: [String] = []) {
    var disk = FaultyDisk()
    for path in directories {
      var current = FaultyDisk.root
      for name in FaultyDisk.components(path) {
        if let existing = disk.inodes[current]?.entries[name] {
          current = existing
          continue
        }
        let created = disk.makeInode(directory: true)
        disk.link(created, as: name, in: current)
        disk.syncEntries(of: current)
        current = created
      }
    }
    self.disk = Locked(disk)
  }

  init(disk: FaultyDisk) {
    self.disk = Locked(disk)
  }

  // MARK: Power loss

  /// Makes the power fail during the `count`-th mutating operation from now (a write, sync,
  /// truncation, creation, rename, removal, directory sync or lock). That operation takes
  /// effect in memory, as if the machine died just before the call returned, and then it and
  /// every later operation fail with `EIO` until `crash(using:)` hands out what survived.
  ///
  /// - Parameter count: at least 1.
  public func scheduleCrash(afterMutations count: Int) {
    disk.withLock { $0.crashCountdown = max(1, count) }
  }

  /// Whether the power has failed (a scheduled crash went off, or `crash(using:)` was called).
  public var isPoweredOff: Bool {
    disk.withLock { $0.poweredOff }
  }

  /// Mutating operations performed so far (to size `scheduleCrash(afterMutations:)`).
  public var mutationCount: Int {
    disk.withLock { $0.mutations }
  }

  /// Simulates power loss and a reboot.
  ///
  /// This file system stays off for good: every later call through it, or through a file or
  /// lock it opened, fails with `EIO` (`fileKind` reports `.missing`), so a store still
  /// holding it cannot touch the new disk.
  /// The returned file system holds what survived, all of it durable, with no lock held, no
  /// space limit and no fault armed:
  /// - a file's bytes as of its last `sync()`, then a random prefix of the writes and
  ///   truncations made after it; the first write left out may land torn (a random prefix of
  ///   its bytes);
  /// - a directory's entries as of its last `syncDirectory`, then a random prefix of the later
  ///   creations, renames and removals, so a file created or renamed since may be missing or
  ///   keep its old name, and a removed file may come back. (A rename across directories is a
  ///   link in one and a removal in the other, which survive independently.)
  public func crash(using random: inout SeededRandom) -> FaultyFileSystem {
    let survivor = disk.withLock { disk -> FaultyDisk in
      disk.poweredOff = true
      return disk.survivor(using: &random)
    }
    return FaultyFileSystem(disk: survivor)
  }

  /// Simulates the worst power loss: as `crash(using:)`, but nothing that was not made
  /// durable survives.
  public func crashLosingUnsyncedChanges() -> FaultyFileSystem {
    let survivor = disk.withLock { disk -> FaultyDisk in
      disk.poweredOff = true
      return disk.durableOnly()
    }
    return FaultyFileSystem(disk: survivor)
  }

  /// A separate file system holding everything as it is now, all of it durable (what a clean
  /// shutdown would leave). This one is not changed.
  public func snapshot() -> FaultyFileSystem {
    FaultyFileSystem(disk: disk.withLock { $0.snapshot() })
  }

  /// A separate file system holding everything as it is now plus `files` (full paths in
  /// existing directories), each created, written and synced, and its directory synced: what
  /// `snapshot()` and those operations would leave, without performing them (no mutation is
  /// counted). For callers that lay out a fresh disk per run from a template, such as the fuzz
  /// targets. This one is not changed.
  ///
  /// - Throws: `CaskError.io` when a file's directory is missing (`ENOENT`) or its name is
  ///   taken (`EEXIST`).
  public func snapshot(adding files: [(path: String, bytes: [UInt8])]) throws -> FaultyFileSystem {
    var copy = disk.withLock { $0.isClean ? $0.cleanCopy() : $0.snapshot() }
    for (path, bytes) in files {
      let (directory, name) = try copy.parent(of: path, operation: "open")
      guard copy.inodes[directory]?.entries[name] == nil else {
        throw CaskError.io(operation: "open", path: path, errno: EEXIST)
      }
      let inode = copy.makeInode(directory: false)
      copy.inodes[inode]?.data = bytes
      copy.inodes[inode]?.durable = bytes
      copy.link(inode, as: name, in: directory)
      copy.syncEntries(of: directory)
    }
    return FaultyFileSystem(disk: copy)
  }

  // MARK: A full disk

  /// Bytes that may still be allocated, or `nil` when there is no limit.
  public var freeBytes: UInt64? {
    disk.withLock { $0.freeBytes }
  }

  /// Limits the bytes that may still be allocated (`nil`: no limit). A write that needs more
  /// writes what fits and fails with `ENOSPC`; truncating or removing files gives space back.
  public func setFreeBytes(_ bytes: UInt64?) {
    disk.withLock { $0.freeBytes = bytes }
  }

  // MARK: Failing operations

  /// Arms `fault`: matching operations fail with its errno, after the ones it lets through.
  public func inject(_ fault: Fault) {
    disk.withLock { $0.faults.append(FaultyDisk.ArmedFault(fault: fault)) }
  }

  /// Disarms every fault.
  public func clearFaults() {
    disk.withLock { $0.faults.removeAll() }
  }

  /// The bytes of the file at `path` as reads see them, or `nil` if there is none.
  public func contents(of path: String) -> [UInt8]? {
    disk.withLock { disk in
      guard let inode = disk.inode(at: path), let node = disk.inodes[inode], !node.isDirectory else { return nil }
      return node.data
    }
  }

  /// Runs `body` on the disk unless the power is off or a fault fails the operation; counts
  /// mutations and makes a scheduled crash go off.
  ///
  /// - Parameter failed: what an injected failure does to the disk besides failing.
  func perform<Result>(
    _ operation: Operation, _ path: String, mutating: Bool, failed: (inout FaultyDisk) -> Void = { _ in },
    _ body: (inout FaultyDisk) throws -> Result
  ) throws -> Result {
    try disk.withLock { disk in
      let call = operation.systemCall
      guard !disk.poweredOff else { throw CaskError.io(operation: call, path: path, errno: EIO) }
      for index in disk.faults.indices {
        if disk.faults[index].matches(operation, path: path) {
          failed(&disk)
          throw CaskError.io(operation: call, path: path, errno: disk.faults[index].fault.errno)
        }
      }
      guard mutating else { return try body(&disk) }
      disk.mutations += 1
      if let left = disk.crashCountdown {
        if left > 1 {
          disk.crashCountdown = left - 1
        } else {
          disk.crashCountdown = nil
          _ = try? body(&disk)
          disk.poweredOff = true
          throw CaskError.io(operation: call, path: path, errno: EIO)
        }
      }
      return try body(&disk)
    }
  }

  // MARK: FileSystem

  public func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    let inode = try perform(.open, path, mutating: mode == .createNew) { disk -> Int in
      let (directory, name) = try disk.parent(of: path, operation: "open")
      if let existing = disk.inodes[directory]?.entries[name] {
        guard mode != .createNew else { throw CaskError.io(operation: "open", path: path, errno: EEXIST) }
        guard disk.inodes[existing]?.isDirectory == false else {
          throw CaskError.io(operation: "open", path: path, errno: EISDIR)
        }
        return existing
      }
      guard mode == .createNew else { throw CaskError.io(operation: "open", path: path, errno: ENOENT) }
      let created = disk.makeInode(directory: false)
      disk.link(created, as: name, in: directory)
      return created
    }
    return FaultyFile(fileSystem: self, inode: inode, path: path, writable: mode != .readOnly)
  }

  public func contentsOfDirectory(_ path: String) throws -> [String] {
    try perform(.list, path, mutating: false) { disk in
      guard let inode = disk.inode(at: path), let node = disk.inodes[inode] else {
        throw CaskError.io(operation: "opendir", path: path, errno: ENOENT)
      }
      guard node.isDirectory else { throw CaskError.io(operation: "opendir", path: path, errno: ENOTDIR) }
      return node.entries.keys.sorted()
    }
  }

  public func createDirectory(_ path: String) throws {
    try perform(.createDirectory, path, mutating: true) { disk in
      var current = FaultyDisk.root
      for name in FaultyDisk.components(path) {
        if let existing = disk.inodes[current]?.entries[name] {
          guard disk.inodes[existing]?.isDirectory == true else {
            throw CaskError.io(operation: "mkdir", path: path, errno: EEXIST)
          }
          current = existing
        } else {
          let created = disk.makeInode(directory: true)
          disk.link(created, as: name, in: current)
          current = created
        }
      }
    }
  }

  public func fileKind(_ path: String) -> FileKind {
    disk.withLock { disk in
      guard !disk.poweredOff, let inode = disk.inode(at: path), let node = disk.inodes[inode] else { return .missing }
      return node.isDirectory ? .directory : .file
    }
  }

  public func removeFile(_ path: String) throws {
    try perform(.remove, path, mutating: true) { disk in
      let (directory, name) = try disk.parent(of: path, operation: "unlink")
      guard let inode = disk.inodes[directory]?.entries[name] else { return }
      guard disk.inodes[inode]?.isDirectory == false else {
        throw CaskError.io(operation: "unlink", path: path, errno: EISDIR)
      }
      disk.unlink(name, in: directory)
    }
  }

  public func removeDirectory(_ path: String) throws {
    try perform(.remove, path, mutating: true) { disk in
      let (directory, name) = try disk.parent(of: path, operation: "rmdir")
      guard let inode = disk.inodes[directory]?.entries[name], let node = disk.inodes[inode] else { return }
      guard node.isDirectory else { throw CaskError.io(operation: "rmdir", path: path, errno: ENOTDIR) }
      guard node.entries.isEmpty else { throw CaskError.io(operation: "rmdir", path: path, errno: ENOTEMPTY) }
      disk.unlink(name, in: directory)
    }
  }

  public func rename(_ source: String, to destination: String) throws {
    try perform(.rename, destination, mutating: true) { disk in
      let (sourceDirectory, sourceName) = try disk.parent(of: source, operation: "rename")
      let (directory, name) = try disk.parent(of: destination, operation: "rename")
      guard let inode = disk.inodes[sourceDirectory]?.entries[sourceName] else {
        throw CaskError.io(operation: "rename", path: destination, errno: ENOENT)
      }
      if let replaced = disk.inodes[directory]?.entries[name], replaced != inode,
        disk.inodes[replaced]?.isDirectory == true || disk.inodes[inode]?.isDirectory == true
      {
        throw CaskError.io(operation: "rename", path: destination, errno: EISDIR)
      }
      if sourceDirectory == directory {
        disk.rename(sourceName, to: name, in: directory)
      } else {
        disk.link(inode, as: name, in: directory)
        disk.unlink(sourceName, in: sourceDirectory)
      }
    }
  }

  /// Swaps two names of one directory (a crash keeps both swapped or neither); names in two
  /// directories are refused with `EXDEV`, which no caller needs.
  public func exchange(_ first: String, _ second: String) throws {
    try perform(.rename, second, mutating: true) { disk in
      let (firstDirectory, firstName) = try disk.parent(of: first, operation: "renameat2")
      let (directory, name) = try disk.parent(of: second, operation: "renameat2")
      guard firstDirectory == directory else {
        throw CaskError.io(operation: "renameat2 (RENAME_EXCHANGE)", path: second, errno: EXDEV)
      }
      guard disk.inodes[directory]?.entries[firstName] != nil, disk.inodes[directory]?.entries[name] != nil else {
        throw CaskError.io(operation: "renameat2 (RENAME_EXCHANGE)", path: second, errno: ENOENT)
      }
      disk.exchange(firstName, name, in: directory)
    }
  }

  public func syncDirectory(_ path: String) throws {
    try perform(.syncDirectory, path, mutating: true) { disk in
      guard let inode = disk.inode(at: path), let node = disk.inodes[inode] else {
        throw CaskError.io(operation: "open", path: path, errno: ENOENT)
      }
      guard node.isDirectory else { throw CaskError.io(operation: "open", path: path, errno: ENOTDIR) }
      disk.syncEntries(of: inode)
    }
  }

  public func lock(_ path: String, exclusive: Bool) throws -> any FileLock {
    let (inode, lock) = try perform(.lock, path, mutating: true) { disk -> (Int, Int) in
      let (directory, name) = try disk.parent(of: path, operation: "open")
      let inode: Int
      if let existing = disk.inodes[directory]?.entries[name] {
        guard disk.inodes[existing]?.isDirectory == false else {
          throw CaskError.io(operation: "open", path: path, errno: EISDIR)
        }
        inode = existing
      } else {
        inode = disk.makeInode(directory: false)
        disk.link(inode, as: name, in: directory)
      }
      let holders = disk.locks[inode, default: [:]]
      if exclusive ? !holders.isEmpty : holders.values.contains(true) { throw CaskError.locked(path: path) }
      let lock = disk.nextLock
      disk.nextLock += 1
      disk.locks[inode, default: [:]][lock] = exclusive
      return (inode, lock)
    }
    return FaultyLock(fileSystem: self, inode: inode, lock: lock)
  }
}

extension FaultyDisk.ArmedFault {
  /// Whether this fault fails `operation` on `path` now; counts the operation if it matches.
  mutating func matches(_ operation: FaultyFileSystem.Operation, path: String) -> Bool {
    guard fault.operations.contains(operation), fault.paths(path) else { return false }
    seen += 1
    guard seen > fault.after, fault.times.map({ failed < $0 }) ?? true else { return false }
    failed += 1
    return true
  }
}
