import CaskEngine
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An open file of a `FaultyFileSystem`: it refers to the inode, so it keeps working after
/// the file is removed or renamed, as a descriptor does.
final class FaultyFile: StorageFile {
  let path: String
  private let fileSystem: FaultyFileSystem
  private let inode: Int
  private let writable: Bool
  private let closed = Atomic(false)

  init(fileSystem: FaultyFileSystem, inode: Int, path: String, writable: Bool) {
    self.fileSystem = fileSystem
    self.inode = inode
    self.path = path
    self.writable = writable
  }

  private func checkOpen(_ operation: FaultyFileSystem.Operation) throws {
    if closed.load(ordering: .acquiring) {
      throw CaskError.io(operation: operation.systemCall, path: path, errno: EBADF)
    }
  }

  private func checkWritable(_ operation: FaultyFileSystem.Operation) throws {
    try checkOpen(operation)
    if !writable { throw CaskError.io(operation: operation.systemCall, path: path, errno: EBADF) }
  }

  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try checkOpen(.read)
    return try fileSystem.perform(.read, path, mutating: false) { disk in
      guard let data = disk.inodes[inode]?.data, offset < UInt64(data.count) else { return 0 }
      let start = Int(offset)
      let count = min(buffer.count, data.count - start)
      data.withUnsafeBytes { bytes in
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<start + count]))
      }
      return count
    }
  }

  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    try checkWritable(.write)
    let array = [UInt8](bytes)
    try fileSystem.perform(.write, path, mutating: true) { disk in
      let written = disk.write(array, at: Int(offset), to: inode)
      if written < array.count { throw CaskError.io(operation: "pwrite", path: path, errno: ENOSPC) }
    }
  }

  /// A failed sync loses the unsynced writes for good, as Linux does after a writeback error:
  /// reads still see them, but no later sync makes them durable.
  func sync() throws {
    try checkOpen(.sync)
    try fileSystem.perform(
      .sync, path, mutating: true, failed: { $0.inodes[inode]?.pending.removeAll() },
      { disk in disk.syncData(of: inode) })
  }

  func size() throws -> UInt64 {
    try checkOpen(.size)
    return try fileSystem.perform(.size, path, mutating: false) { disk in
      UInt64(disk.inodes[inode]?.data.count ?? 0)
    }
  }

  func truncate(to length: UInt64) throws {
    try checkWritable(.truncate)
    try fileSystem.perform(.truncate, path, mutating: true) { disk in
      guard disk.truncate(inode, to: Int(length)) else {
        throw CaskError.io(operation: "ftruncate", path: path, errno: ENOSPC)
      }
    }
  }

  func close() {
    closed.store(true, ordering: .releasing)
  }
}

/// A held lock of a `FaultyFileSystem`, released by `unlock()` or deinit.
final class FaultyLock: FileLock {
  private let fileSystem: FaultyFileSystem
  private let inode: Int
  private let lock: Int
  private let released = Atomic(false)

  init(fileSystem: FaultyFileSystem, inode: Int, lock: Int) {
    self.fileSystem = fileSystem
    self.inode = inode
    self.lock = lock
  }

  deinit {
    unlock()
  }

  func unlock() {
    guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
    fileSystem.disk.withLock { disk in
      disk.locks[inode]?[lock] = nil
      if disk.locks[inode]?.isEmpty == true { disk.locks[inode] = nil }
    }
  }
}
