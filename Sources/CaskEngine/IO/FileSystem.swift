import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The small file protocol every byte of the engine goes through.
///
/// `PosixFileSystem` is the real one. Tests substitute a file system that loses unsynced
/// writes (power loss), tears the last write, fills up or fails with EIO, without the engine
/// knowing.
///
/// All operations throw `CaskError.io(operation:path:errno:)` on failure.
public protocol FileSystem: Sendable {
  /// Opens a file for positioned reads and writes.
  func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile
  /// Names in a directory (not `.` or `..`).
  func contentsOfDirectory(_ path: String) throws -> [String]
  /// Creates a directory (and its parents); succeeds if it exists.
  func createDirectory(_ path: String) throws
  /// Creates the directory `path`, whose parent exists, for its owner only; fails with
  /// `EEXIST` when anything is at `path` already, a symbolic link included: a directory that
  /// only this call made (the hidden directory of a rekeyed copy).
  func createDirectoryExclusively(_ path: String) throws
  /// Whether a file or directory exists at `path`, and whether it is a directory.
  func fileKind(_ path: String) -> FileKind
  /// Removes a file; succeeds if it does not exist.
  func removeFile(_ path: String) throws
  /// Removes an empty directory; succeeds if it does not exist.
  func removeDirectory(_ path: String) throws
  /// Atomically replaces `destination` with `source` (POSIX `rename`).
  func rename(_ source: String, to destination: String) throws
  /// Renames `source` to `destination` only if nothing is at `destination`: fails with
  /// `EEXIST` otherwise, an empty directory included (which `rename` would replace). The
  /// rekeyed copy's last step.
  func renameNoReplace(_ source: String, to destination: String) throws
  /// Swaps what is at `first` and `second` in one step (both must exist): after a crash either
  /// both names still point where they did, or both point at the other's. The upgrade's swap
  /// of a store directory with its upgraded copy. `PosixFileSystem` uses
  /// `renameat2(RENAME_EXCHANGE)`.
  ///
  /// - Throws: `CaskError.io`; `EINVAL`, `ENOSYS` or `EPERM` where the kernel, the file
  ///   system or a sandbox cannot exchange (nothing was changed).
  func exchange(_ first: String, _ second: String) throws
  /// Makes the directory's entries (creations, renames, removals) durable.
  func syncDirectory(_ path: String) throws
  /// Takes an advisory lock on `path` (created if missing) without waiting.
  ///
  /// - Throws: `CaskError.locked` when another process holds it, `.alreadyOpen` when this one does.
  func lock(_ path: String, exclusive: Bool) throws -> any FileLock
}

/// How to open a file.
public enum FileOpenMode: Sendable, Equatable {
  /// Read only; the file must exist.
  case readOnly
  /// Read and write; the file must exist.
  case readWrite
  /// Read and write; the file is created, and must not exist yet.
  case createNew
}

/// What is at a path.
public enum FileKind: Sendable, Equatable {
  case missing
  case file
  case directory
}

/// An open file. Positioned reads may run concurrently with each other and with appends
/// beyond the read range.
public protocol StorageFile: AnyObject, Sendable {
  /// The path it was opened with (for error messages).
  var path: String { get }
  /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file.
  ///
  /// - Returns: the number of bytes read.
  func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
  /// Copies the `buffer.count` bytes at `offset` into `buffer` without a system call (from a
  /// mapping of the file), if the file offers that and has them all.
  ///
  /// - Returns: `false` when it does not (no mapping, the bytes past the file's end, a read
  ///   error): the caller then uses `read`, which says what is wrong. The default does nothing
  ///   and returns `false`.
  func readMapped(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool
  /// Writes all of `bytes` at `offset`.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
  /// Copies `bytes` into the file at `offset` without a system call (into a shared, writable
  /// mapping of the file), if the file offers that and already reaches past them. Like a
  /// `write`, the bytes are in the page cache when it returns: the process may end at once and
  /// they still reach the file; `sync` makes them durable.
  ///
  /// - Returns: `false` when it did not write them all (no writable mapping, bytes past the
  ///   file's end or past the mapping, a page the disk refused): part of them may be written,
  ///   and the caller then uses `write`, which says what is wrong. The default does nothing and
  ///   returns `false`.
  func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool
  /// Makes written data durable (`fdatasync`/`fsync`).
  func sync() throws
  /// Starts writing the `count` bytes at `offset` to the disk without waiting and without
  /// making them durable, so that a later `sync` has less to do. Best effort; the default does
  /// nothing.
  func startWriteback(from offset: UInt64, count: UInt64)
  /// The current size in bytes.
  func size() throws -> UInt64
  /// The first offset at or after `offset` where the file holds data rather than a hole
  /// (`lseek(SEEK_DATA)`): everything before it, from `offset` on, reads as zeros without
  /// being stored. `offset` itself when it is data or the file system does not say; the
  /// file's size when only a hole follows. The default knows of no holes.
  func nextData(from offset: UInt64) -> UInt64
  /// The first offset at or after `offset` where a hole begins (`lseek(SEEK_HOLE)`); the
  /// file's size when there is none before its end or the file system does not say. The
  /// default knows of no holes.
  func nextHole(from offset: UInt64) -> UInt64
  /// `nextHole(from:)` for a file the caller has just found to be `size` bytes long, which
  /// spares reading the size again (open reads every file it reads whole this way). The
  /// default is `nextHole(from:)`.
  func nextHole(from offset: UInt64, size: UInt64) -> UInt64
  /// Cuts or extends the file to `length` bytes.
  func truncate(to length: UInt64) throws
  /// Releases the descriptor; later calls fail. Also done on deinit.
  func close()
}

/// A held advisory lock, released by `unlock()` or deinit.
public protocol FileLock: AnyObject, Sendable {
  func unlock()
}

extension FileSystem {
  /// `fileKind`, then `rename`: not atomic, for file systems (of tests) where nothing else
  /// makes `destination` between the two calls. `PosixFileSystem` renames with one
  /// `renameat2(RENAME_NOREPLACE)`.
  public func renameNoReplace(_ source: String, to destination: String) throws {
    guard fileKind(destination) == .missing else {
      throw CaskError.io(operation: "rename", path: destination, errno: EEXIST)
    }
    try rename(source, to: destination)
  }

  /// Refuses with `ENOSYS`: a file system that cannot swap two names in one step must not
  /// pretend to (an upgrade then stops, its copy removed, the store as it was).
  public func exchange(_ first: String, _ second: String) throws {
    throw CaskError.io(operation: "renameat2 (RENAME_EXCHANGE)", path: second, errno: ENOSYS)
  }

  /// `fileKind`, then `createDirectory`: not atomic, for file systems (of tests) where nothing
  /// else makes the directory between the two calls. `PosixFileSystem` makes it with one `mkdir`.
  public func createDirectoryExclusively(_ path: String) throws {
    guard fileKind(path) == .missing else { throw CaskError.io(operation: "mkdir", path: path, errno: EEXIST) }
    try createDirectory(path)
  }
}

extension StorageFile {
  /// Reads exactly `count` bytes at `offset`.
  ///
  /// - Throws: `CaskError.io` (`EIO`, operation "read (the file ends early)") when the file
  ///   ends before `count` bytes; the errors of `read(into:at:)`.
  public func read(count: Int, at offset: UInt64) throws -> Data {
    let data = try read(upTo: count, at: offset)
    guard data.count == count else {
      throw CaskError.io(operation: "read (the file ends early)", path: path, errno: EIO)
    }
    return data
  }

  /// Reads `count` bytes at `offset`, or fewer when the file ends first.
  public func read(upTo count: Int, at offset: UInt64) throws -> Data {
    var data = Data(count: count)
    let received = try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
      try readFully(into: buffer, at: offset)
    }
    if received < count { data.count = received }
    return data
  }

  /// Reads until `buffer` is full or the file ends.
  ///
  /// - Returns: the number of bytes read.
  public func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    var total = 0
    while total < buffer.count {
      let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]), at: offset + UInt64(total))
      if count == 0 { break }
      total += count
    }
    return total
  }

  public func nextData(from offset: UInt64) -> UInt64 { offset }

  public func nextHole(from offset: UInt64) -> UInt64 { (try? size()) ?? offset }

  public func nextHole(from offset: UInt64, size: UInt64) -> UInt64 { nextHole(from: offset) }

  /// The whole file, which the store wrote in one piece and never longer than `limit`
  /// bytes: its length and its holes are checked before a byte is read, so that a planted
  /// file (a valid header with a sparse tail of 200 GiB, say) costs neither memory nor time
  /// in proportion to the length it claims. Prevents: an allocation sized by an
  /// unauthenticated length, which crashed the process, and minutes of reading zeros.
  ///
  /// - Throws: `CaskError.corrupt` when the file is longer than `limit` or has a hole (the
  ///   store never leaves one in a file it writes whole; encrypted content never reads as a
  ///   block of zeros); the errors of `read(into:at:)`.
  public func readWhole(limit: UInt64) throws -> Data {
    let length = try size()
    guard length <= limit else {
      throw CaskError.corrupt(
        file: path, offset: limit, reason: "file of \(length) bytes is longer than the store writes (\(limit) at most)")
    }
    let hole = nextHole(from: 0, size: length)
    guard hole >= length else {
      throw CaskError.corrupt(
        file: path, offset: hole, reason: "file has a hole (a sparse file the store did not write)")
    }
    return try read(count: Int(length), at: 0)
  }

  public func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
    false
  }

  public func startWriteback(from offset: UInt64, count: UInt64) {}

  public func readMapped(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Bool {
    false
  }

  /// Writes all of `data` at `offset`.
  public func write(_ data: Data, at offset: UInt64) throws {
    try data.withUnsafeBytes { try write($0, at: offset) }
  }
}
