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
  /// A copy that fails (a full disk, EIO) or is stopped by `shouldContinue` removes what it
  /// wrote, and the directories it made.
  ///
  /// - Parameters:
  ///   - destination: a directory that does not exist yet (its missing parents are made), or
  ///     an empty one; not inside the store's own directory.
  ///   - shouldContinue: asked before each MiB is copied and before the header is put in
  ///     place; when it returns `false` the copy stops, what it wrote is removed and the call
  ///     throws `CancellationError`. Once it has returned `true` for the header, the copy
  ///     completes. For a `Ctrl-C` handler or a task's cancellation (`CipherCask` has an
  ///     `async` form that passes the task's).
  /// - Throws: `CancellationError` when `shouldContinue` stopped the copy; `CaskError.io`
  ///   (`EEXIST` when `destination` is a file or a directory that is not empty, or another
  ///   backup is writing into it; `EINVAL` when it is inside the
  ///   store's directory; `ENOENT` when it is empty; `ENOSPC`, `EIO`), `.closed`, the failure
  ///   of an earlier sync (the disk's state is then unknown, as for writes),
  ///   `.reentrantCall` inside a transaction or observer.
  /// - Complexity: O(size of the store on disk). Writers wait only while the files to copy
  ///   are chosen; a running compaction is waited for first.
  @discardableResult
  public func backup(to destination: String, shouldContinue: () -> Bool = { true }) throws -> CaskBackupReport {
    try userCode.refuse("backup")
    try checkCopyDestination(destination, operation: "backup")
    let sources = try backupSources()
    defer { for source in sources.data where source.owned { source.file.close() } }
    var created: [String] = []
    // Only files this call made (another backup into the same directory may have made others).
    var written: [String] = []
    do {
      let claim = try claimBackupDestination(destination, created: &created, written: &written)
      defer { claim.close() }
      var report = try copyBackupFiles(
        sources, into: destination, written: &written, shouldContinue: shouldContinue)
      // Last: only a complete copy is a store.
      guard shouldContinue() else { throw CancellationError() }
      try placeBackupHeader(sources.header, through: claim, in: destination, written: &written)
      report.bytes += UInt64(sources.header.count)
      return report
    } catch {
      for path in written.reversed() { try? fileSystem.removeFile(path) }
      for directory in created { try? fileSystem.removeDirectory(directory) }
      throw error
    }
  }

  /// Makes `destination` (and its missing parents, appended to `created`) unless it is a
  /// directory already, then claims it: the header's temporary file, made exclusively, must
  /// be alone there. A second backup into it at the same time fails here, instead of mixing
  /// its files with this one's or replacing its header.
  ///
  /// - Returns: the header's temporary file, open (appended to `written`).
  /// - Throws: `CaskError.io` with `EEXIST` for a file or a directory that is not empty.
  private func claimBackupDestination(
    _ destination: String, created: inout [String], written: inout [String]
  ) throws -> any StorageFile {
    switch fileSystem.fileKind(destination) {
    case .missing:
      try StoreOpener.createDirectoryDurably(destination, fileSystem: fileSystem, created: &created)
    case .directory:
      break
    case .file:
      throw CaskError.io(operation: "backup", path: destination, errno: EEXIST)
    }
    let claimName = CaskFormat.headerFileName + CaskFormat.temporarySuffix
    let claimPath = "\(destination)/\(claimName)"
    let claim = try fileSystem.open(claimPath, mode: .createNew)
    written.append(claimPath)
    do {
      guard try fileSystem.contentsOfDirectory(destination) == [claimName] else {
        throw CaskError.io(operation: "backup into a directory that is not empty", path: destination, errno: EEXIST)
      }
    } catch {
      claim.close()
      throw error
    }
    return claim
  }

  /// Copies the segments and hints of `sources`, then writes its manifest, each into a new
  /// file of `destination` (appended to `written`) and synced.
  ///
  /// - Returns: the files and bytes copied, the header not yet counted.
  private func copyBackupFiles(
    _ sources: BackupSources, into destination: String, written: inout [String], shouldContinue: () -> Bool
  ) throws -> CaskBackupReport {
    var report = CaskBackupReport(segments: 0, hints: 0, bytes: 0)
    for source in sources.data {
      let target = "\(destination)/\(source.name)"
      let output = try fileSystem.open(target, mode: .createNew)
      defer { output.close() }
      written.append(target)
      report.bytes += try Self.copy(source, into: output, shouldContinue: shouldContinue)
      if source.isHint { report.hints += 1 } else { report.segments += 1 }
    }
    if let manifest = sources.manifest {
      let target = "\(destination)/\(CaskFormat.manifestFileName)"
      let output = try fileSystem.open(target, mode: .createNew)
      defer { output.close() }
      written.append(target)
      try manifest.withUnsafeBytes { try output.write($0, at: 0) }
      try output.sync()
      report.bytes += UInt64(manifest.count)
    }
    return report
  }

  /// Writes `header` into `claim`, syncs it and renames it to the header's name, syncing the
  /// directory before and after: from the rename on, `destination` is a complete store.
  private func placeBackupHeader(
    _ header: [UInt8], through claim: any StorageFile, in destination: String, written: inout [String]
  ) throws {
    let claimPath = "\(destination)/\(CaskFormat.headerFileName)\(CaskFormat.temporarySuffix)"
    let headerPath = "\(destination)/\(CaskFormat.headerFileName)"
    try header.withUnsafeBytes { try claim.write($0, at: 0) }
    try claim.sync()
    try fileSystem.syncDirectory(destination)
    try fileSystem.rename(claimPath, to: headerPath)
    written.append(headerPath)
    try fileSystem.syncDirectory(destination)
  }

  /// Refuses a destination for a copy of the store (`backup`, `rekeyedCopy`) that is empty
  /// (every file would go to the root: "/00000001.seg") or inside the store's directory,
  /// whose open removes or reads names there (`x.tmp`, `00000009.seg`) and would then fail on
  /// a directory. Compared as written, `..` resolved: a path through a symbolic link is not
  /// recognised.
  ///
  /// - Throws: `CaskError.io` with `ENOENT` (empty) or `EINVAL` (inside).
  func checkCopyDestination(_ destination: String, operation: String) throws {
    guard !destination.isEmpty else { throw CaskError.io(operation: operation, path: destination, errno: ENOENT) }
    let storeDirectory = URL(fileURLWithPath: path).standardizedFileURL.path
    guard !URL(fileURLWithPath: destination).standardizedFileURL.path.hasPrefix(storeDirectory + "/") else {
      throw CaskError.io(operation: "\(operation) into the store's own directory", path: destination, errno: EINVAL)
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
    /// The manifest of the copy (version 3): the segments as copied, the active one up to
    /// its last record.
    var manifest: [UInt8]?
  }

  /// Chooses what to copy, with the compaction lock and the writer held, so that the files
  /// are one moment of the store: the header, every segment (the one being appended to only
  /// up to its last record) and the hints of the sealed ones. The descriptors it keeps stay
  /// readable after a compaction removes their files.
  private func backupSources() throws -> BackupSources {
    try compactionLock.run {
      try writer.withLock { writer in
        try writer.throwIfClosed()
        try writer.throwIfFailed()
        // The hints of segments that filled up are written in the background: waited for, so
        // that the copy has them (its open reads them instead of scanning those segments).
        hintQueue.drain()
        let ring = keyRing.withLock { $0 }
        let (header, identity) = try backupHeader(ring: ring)
        let segments = try state.withLock { state -> [Segment] in
          try state.throwIfClosed()
          return state.segments.values.sorted { $0.id < $1.id }
        }
        let files = try backupFiles(of: segments, active: writer.active)
        let manifest = try backupManifest(of: segments, identity: identity, ring: ring, writer: writer)
        return BackupSources(header: header, data: files, manifest: manifest)
      }
    }
  }

  /// The copy's header. A version 5 copy keeps the data key but gets an identity of its own,
  /// under the header's MAC: its manifest, its segments and the records it writes name it, so
  /// a record, segment or manifest moved between the original and the copy after either wrote
  /// is found (Docs/SECURITY.md, section 3).
  ///
  /// - Returns: the header's bytes and the copy's identity (`nil` before version 5).
  private func backupHeader(ring: KeyRing) throws -> (header: [UInt8], identity: [UInt8]?) {
    let headerPath = "\(path)/\(CaskFormat.headerFileName)"
    let headerFile = try fileSystem.open(headerPath, mode: .readOnly)
    defer { headerFile.close() }
    let header = [UInt8](try headerFile.read(count: Int(try headerFile.size()), at: 0))
    guard ring.identity != nil else { return (header, nil) }
    var copied = try StoreHeader.decode(Data(header), path: headerPath)
    let identity = try StoreIdentity.random()
    copied.identity = identity
    return (try copied.authenticated(with: ring.current.keys).encoded(), identity)
  }

  /// Every segment (`active` only up to its last record), then the hints of the sealed ones,
  /// opened now (closed by the caller after the copy, or by ARC when this throws).
  private func backupFiles(of segments: [Segment], active: ActiveSegment?) throws -> [BackupSource] {
    var sources: [BackupSource] = []
    var hints: [BackupSource] = []
    for segment in segments {
      let isActive = active?.segment.id == segment.id
      let length = try isActive ? active?.end ?? 0 : segment.file.size()
      sources.append(
        BackupSource(
          name: Segment.fileName(id: segment.id), file: segment.file, length: length, isHint: false, owned: false))
      let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
      // A hint open cannot read (a link, say) is left out, as open passes over it: the
      // copy's open scans the segment instead.
      guard !isActive, fileSystem.fileKind(hintPath) == .file,
        let hint = try? fileSystem.open(hintPath, mode: .readOnly), let length = try? hint.size()
      else { continue }
      hints.append(
        BackupSource(name: Segment.hintName(id: segment.id), file: hint, length: length, isHint: true, owned: true))
    }
    return sources + hints
  }

  /// The copy's manifest (version 3 on), or `nil` for a store without one. A version 5 copy
  /// lists every segment sealed at the length copied: it never appends to a segment of another
  /// identity, and the original may still be appending to it.
  private func backupManifest(
    of segments: [Segment], identity: [UInt8]?, ring: KeyRing, writer: WriterState
  ) throws -> [UInt8]? {
    guard ring.current.bindsRecords else { return nil }
    var described = try Manifest.describing(
      segments, active: identity == nil ? writer.active : nil, writer: writer, retired: [],
      hasEpochs: ring.hasEpochs, identity: identity)
    described.generation = writer.manifestGeneration
    if identity != nil, let active = writer.active,
      let index = described.segments.firstIndex(where: { $0.id == active.segment.id })
    {
      // Copied up to its last record, without the space reserved after it.
      described.segments[index].length = active.end
    }
    return try described.encoded(cipher: ring.current)
  }

  /// Copies `source.length` bytes of `source` into `output`, a new file, and syncs it,
  /// asking `shouldContinue` before each chunk.
  ///
  /// - Returns: the bytes copied.
  /// - Throws: `CancellationError` when `shouldContinue` returns `false`; `CaskError.io`.
  private static func copy(
    _ source: BackupSource, into output: any StorageFile, shouldContinue: () -> Bool
  ) throws -> UInt64 {
    let chunk = 1 << 20
    var buffer = [UInt8](repeating: 0, count: chunk)
    var offset: UInt64 = 0
    while offset < source.length {
      guard shouldContinue() else { throw CancellationError() }
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
