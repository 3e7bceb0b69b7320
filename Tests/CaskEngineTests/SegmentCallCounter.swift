import CaskEngine
import CaskTestSupport

/// Counts what the store asks of its segment files (writes, appends copied into a mapping,
/// syncs, ranges handed to writeback), and forwards every call to the real file.
final class SegmentCallCounter: ForwardingFileSystem, @unchecked Sendable {
  struct Calls {
    var writes = 0
    var mappedWrites = 0
    var mappedReads = 0
    var syncs = 0
    /// Each `startWriteback` range as offset and count, in call order.
    var writeback: [(offset: UInt64, count: UInt64)] = []
  }

  let calls = Locked(Calls())

  override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    let file = try super.open(path, mode: mode)
    return path.contains(".seg") ? CountingFile(file, calls: calls) : file
  }

  private final class CountingFile: StorageFile, @unchecked Sendable {
    let base: any StorageFile
    let calls: Locked<Calls>
    var path: String { base.path }

    init(_ base: any StorageFile, calls: Locked<Calls>) {
      self.base = base
      self.calls = calls
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
      try base.read(into: buffer, at: offset)
    }

    func readMapped(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
      let done = base.readMapped(into: buffer, at: offset)
      if done { calls.withLock { $0.mappedReads += 1 } }
      return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
      calls.withLock { $0.writes += 1 }
      try base.write(bytes, at: offset)
    }

    func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
      let done = base.writeMapped(bytes, at: offset)
      if done { calls.withLock { $0.mappedWrites += 1 } }
      return done
    }

    func sync() throws {
      calls.withLock { $0.syncs += 1 }
      try base.sync()
    }

    func startWriteback(from offset: UInt64, count: UInt64) {
      calls.withLock { $0.writeback.append((offset, count)) }
      base.startWriteback(from: offset, count: count)
    }

    func size() throws -> UInt64 { try base.size() }
    func truncate(to length: UInt64) throws { try base.truncate(to: length) }
    func close() { base.close() }
  }
}
