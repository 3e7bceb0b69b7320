import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// What `CaskStore.backup(to:)` wrote.
public struct CaskBackupReport: Sendable, Equatable {
  /// Segment files copied (the log).
  public var segments: Int
  /// Hint files copied (the others are rebuilt by the backup's first open, by a scan).
  public var hints: Int
  /// Bytes written, header included.
  public var bytes: UInt64
}

extension CaskStore {
  /// Writes a copy of the store as it is at the moment of the call into the new directory
  /// `destination`, while the store stays open: readers, writers and compaction go on beside
  /// the copy. The copy is a store of its own, byte for byte the files that hold every write
  /// made before the call (no later one), opened with the same password or keys.
  ///
  /// The files are copied as they are on disk, still encrypted: no record is decrypted and no
  /// key derived. Every file is synced, and the header is written last (atomically): until
  /// it is there, `destination` is not a store, so a copy cut short by a crash is never taken
  /// for a complete one (opening it throws `notACaskStore`; delete it and back up again).
  /// A copy that fails (a full disk, EIO) removes what it wrote.
  ///
  /// - Parameter destination: a directory that does not exist yet (its missing parents are
  ///   made), or an empty one.
  /// - Throws: `CaskError.io` (`EEXIST` when `destination` is a file or a directory that is
  ///   not empty; `ENOSPC`, `EIO`), `.closed`, the failure of an earlier sync (the disk's
  ///   state is then unknown, as for writes), `.reentrantCall` inside a transaction or
  ///   observer.
  /// - Complexity: O(size of the store on disk). Writers wait only while the files to copy
  ///   are chosen; a running compaction is waited for first.
  @discardableResult
  public func backup(to destination: String) throws -> CaskBackupReport {
    try userCode.refuse("backup")
    let sources = try backupSources()
    defer { for source in sources.data where source.owned { source.file.close() } }
    var created: [String] = []
    var written: [String] = []
    do {
      switch fileSystem.fileKind(destination) {
      case .missing:
        created = try StoreOpener.createDirectoryDurably(destination, fileSystem: fileSystem)
      case .directory:
        guard try fileSystem.contentsOfDirectory(destination).isEmpty else {
          throw CaskError.io(operation: "backup into a directory that is not empty", path: destination, errno: EEXIST)
        }
      case .file:
        throw CaskError.io(operation: "backup", path: destination, errno: EEXIST)
      }
      var report = CaskBackupReport(segments: 0, hints: 0, bytes: 0)
      for source in sources.data {
        let target = "\(destination)/\(source.name)"
        written.append(target)
        report.bytes += try Self.copy(source, to: target, fileSystem: fileSystem)
        if source.isHint { report.hints += 1 } else { report.segments += 1 }
      }
      try fileSystem.syncDirectory(destination)
      // Last: only a complete copy is a store.
      let headerPath = "\(destination)/\(CaskFormat.headerFileName)"
      written.append(headerPath)
      try AtomicFile.write(sources.header, to: headerPath, fileSystem: fileSystem, syncingDirectory: destination)
      report.bytes += UInt64(sources.header.count)
      return report
    } catch {
      for path in written.reversed() { try? fileSystem.removeFile(path) }
      for directory in created { try? fileSystem.removeDirectory(directory) }
      throw error
    }
  }

  /// One file to copy: its name in the store, an open descriptor, and how many bytes to take.
  struct BackupSource {
    var name: String
    var file: any StorageFile
    var length: UInt64
    var isHint: Bool
    /// Opened for the backup (a hint), so closed after it; segments are the store's own.
    var owned: Bool
  }

  struct BackupSources {
    var header: [UInt8]
    var data: [BackupSource]
  }

  /// Chooses what to copy, with the compaction lock and the writer held, so that the files
  /// are one moment of the store: the header, every segment (the one being appended to only
  /// up to its last record) and the hints of the sealed ones. The descriptors it keeps stay
  /// readable after a compaction removes their files.
  private func backupSources() throws -> BackupSources {
    try compactionLock.withLock { _ in
      try writer.withLock { writer in
        if writer.closed { throw CaskError.closed }
        if let failure = writer.failure { throw failure }
        let headerFile = try fileSystem.open("\(path)/\(CaskFormat.headerFileName)", mode: .readOnly)
        defer { headerFile.close() }
        let header = [UInt8](try headerFile.read(count: Int(try headerFile.size()), at: 0))
        let segments = try state.withLock { state -> [Segment] in
          if state.closed { throw CaskError.closed }
          return state.segments.values.sorted { $0.id < $1.id }
        }
        var sources: [BackupSource] = []
        // Closed by the caller after the copy (or by ARC when this throws).
        var hints: [BackupSource] = []
        for segment in segments {
          let isActive = writer.active?.segment.id == segment.id
          let length = try isActive ? writer.active?.end ?? 0 : segment.file.size()
          sources.append(
            BackupSource(
              name: Segment.fileName(id: segment.id), file: segment.file, length: length, isHint: false, owned: false))
          let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
          guard !isActive, fileSystem.fileKind(hintPath) == .file else { continue }
          let hint = try fileSystem.open(hintPath, mode: .readOnly)
          hints.append(
            BackupSource(
              name: Segment.hintName(id: segment.id), file: hint, length: try hint.size(), isHint: true, owned: true))
        }
        return BackupSources(header: header, data: sources + hints)
      }
    }
  }

  /// Copies `source.length` bytes of `source` into the new file `target` and syncs it.
  ///
  /// - Returns: the bytes copied.
  private static func copy(_ source: BackupSource, to target: String, fileSystem: any FileSystem) throws -> UInt64 {
    let output = try fileSystem.open(target, mode: .createNew)
    defer { output.close() }
    let chunk = 1 << 20
    var buffer = [UInt8](repeating: 0, count: chunk)
    var offset: UInt64 = 0
    while offset < source.length {
      let count = Int(min(UInt64(chunk), source.length - offset))
      let received = try buffer.withUnsafeMutableBytes { bytes in
        try source.file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count]), at: offset)
      }
      guard received == count else {
        throw CaskError.io(operation: "read (the file ended early)", path: source.file.path, errno: EIO)
      }
      try buffer.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: offset) }
      offset += UInt64(count)
    }
    try output.sync()
    return offset
  }
}
