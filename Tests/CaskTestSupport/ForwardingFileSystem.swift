import CaskEngine

/// A `FileSystem` that forwards every call to `base`: the base of test file systems that change
/// one or two operations (fail them, count them, act just before them) and leave the rest as
/// they are. A subclass overrides only what it changes and calls `super` (or `base`) for the
/// real work; every operation it does not override reaches `base` unchanged.
///
/// `@unchecked Sendable`: its only state is the immutable `base`; a subclass that adds state
/// guards it itself.
open class ForwardingFileSystem: FileSystem, @unchecked Sendable {
  /// The file system the calls go to.
  public let base: any FileSystem

  /// Forwards to `base`, the real file system by default.
  public init(_ base: any FileSystem = PosixFileSystem()) {
    self.base = base
  }

  open func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    try base.open(path, mode: mode)
  }

  open func contentsOfDirectory(_ path: String) throws -> [String] {
    try base.contentsOfDirectory(path)
  }

  open func createDirectory(_ path: String) throws {
    try base.createDirectory(path)
  }

  open func createDirectoryExclusively(_ path: String) throws {
    try base.createDirectoryExclusively(path)
  }

  open func fileKind(_ path: String) -> FileKind {
    base.fileKind(path)
  }

  open func removeFile(_ path: String) throws {
    try base.removeFile(path)
  }

  open func removeDirectory(_ path: String) throws {
    try base.removeDirectory(path)
  }

  open func rename(_ source: String, to destination: String) throws {
    try base.rename(source, to: destination)
  }

  open func renameNoReplace(_ source: String, to destination: String) throws {
    try base.renameNoReplace(source, to: destination)
  }

  open func exchange(_ first: String, _ second: String) throws {
    try base.exchange(first, second)
  }

  open func syncDirectory(_ path: String) throws {
    try base.syncDirectory(path)
  }

  open func lock(_ path: String, exclusive: Bool) throws -> any FileLock {
    try base.lock(path, exclusive: exclusive)
  }
}

/// A `StorageFile` that forwards every call to `base`: what `ForwardingFileSystem` is to a file
/// system, for the files a test file system hands out.
open class ForwardingStorageFile: StorageFile, @unchecked Sendable {
  /// The file the calls go to.
  public let base: any StorageFile

  public init(_ base: any StorageFile) {
    self.base = base
  }

  open var path: String { base.path }

  open func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
    try base.read(into: buffer, at: offset)
  }

  open func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
    try base.write(bytes, at: offset)
  }

  open func sync() throws {
    try base.sync()
  }

  open func size() throws -> UInt64 {
    try base.size()
  }

  open func truncate(to length: UInt64) throws {
    try base.truncate(to: length)
  }

  open func close() {
    base.close()
  }
}
