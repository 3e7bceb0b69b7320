import Foundation
import RNCryptorCodec

/// Opens a store directory: the recovery steps of Docs/FORMAT.md, "Opening a store", in order.
struct StoreOpener {
  let path: String
  let credential: StoreCredential
  let options: CaskStore.Options
  var fileSystem: any FileSystem { options.fileSystem }

  struct Opened {
    var keyRing: KeyRing
    var lock: any FileLock
    var indexState: CaskStore.IndexState
    var writerState: CaskStore.WriterState
    /// How the header derives the password's keys; `nil` for keys.
    var keyDerivation: CaskStore.KeyDerivation?
  }

  /// A segment found on disk, before it is indexed.
  struct FoundSegment {
    var segment: Segment
    var length: UInt64
  }

  func open() throws -> Opened {
    // 1. The directory must exist (or be creatable) and be a directory.
    switch fileSystem.fileKind(path) {
    case .file:
      throw CaskError.notACaskStore(path: path)
    case .missing:
      guard options.createIfMissing, !options.readOnly else { throw CaskError.storeNotFound(path: path) }
      var created: [String] = []
      try Self.createDirectoryDurably(path, fileSystem: fileSystem, created: &created)
    case .directory:
      break
    }
    let headerPath = "\(path)/\(CaskFormat.headerFileName)"
    // A header once there stays (nothing removes it), so only a missing one is looked for
    // again under the lock.
    let headerFound = fileSystem.fileKind(headerPath) != .missing
    if !headerFound {
      // An empty directory becomes a store; anything else is not ours to write into.
      // (A header left as CASK.tmp by a crash during creation does not make it foreign.)
      let names = try fileSystem.contentsOfDirectory(path).filter {
        $0 != CaskFormat.lockFileName && $0 != CaskFormat.headerFileName + CaskFormat.temporarySuffix
      }
      guard names.isEmpty, options.createIfMissing, !options.readOnly else {
        throw CaskError.notACaskStore(path: path)
      }
    }

    // 2. Lock: exclusive for a writer, shared for read-only openers.
    let lock = try fileSystem.lock("\(path)/\(CaskFormat.lockFileName)", exclusive: !options.readOnly)
    do {
      // 3. Read the header and unwrap the data key (and a version 4 header's key ring), or
      // create both for a new store.
      var ring: KeyRing
      let keyDerivation: CaskStore.KeyDerivation?
      var header: StoreHeader?
      if !headerFound && fileSystem.fileKind(headerPath) == .missing {
        let version = options.newStoreFormatVersion
        guard (CaskFormat.oldestReadableVersion...CaskFormat.formatVersion).contains(version),
          version != CaskFormat.keyEpochsVersion
        else {
          throw CaskError.unsupportedVersion(found: Int(version), supported: Int(CaskFormat.formatVersion))
        }
        (ring, header) = try createHeader(at: headerPath, version: version)
        keyDerivation = header?.keyDerivation
      } else {
        let bytes = try CaskStore.contents(of: headerPath, fileSystem: fileSystem)
        let decoded = try StoreHeader.decode(bytes, path: headerPath)
        let dataKeys = try credential.unwrap(decoded, path: headerPath)
        // Version 5: nothing the header says is used before its MAC is checked.
        try decoded.checkAuthenticator(keys: dataKeys)
        if let message = decoded.keyRing {
          ring = try KeyRing.open(
            message, currentKeys: dataKeys, recordVersion: decoded.recordVersion, path: headerPath,
            offset: decoded.keyRingOffset)
        } else {
          ring = KeyRing(current: RecordCipher(keys: dataKeys, version: decoded.version))
        }
        ring.identity = decoded.identity
        keyDerivation = decoded.keyDerivation
        header = decoded
      }
      var (indexState, writerState, found) = try loadSegments(ring: ring, header: header)
      if !options.readOnly {
        try settle(
          &writerState, found: found, segments: Array(indexState.segments.values), ring: &ring, header: &header,
          headerPath: headerPath)
      }
      writerState.header = header
      indexState.closed = false
      writerState.closed = false
      return Opened(
        keyRing: ring, lock: lock, indexState: indexState, writerState: writerState, keyDerivation: keyDerivation)
    } catch {
      lock.unlock()
      throw error
    }
  }

  /// Creates the directory `path` and every missing parent, and syncs the parent of each one
  /// created: a directory is an entry of its parent, and without that sync a crash can take
  /// it, and every file written in it, away.
  ///
  /// - Parameter created: receives the directories to create, deepest first, before they
  ///   are made, so that a caller can remove them also when this throws part-way.
  static func createDirectoryDurably(_ path: String, fileSystem: any FileSystem, created: inout [String]) throws {
    var missing = path
    while fileSystem.fileKind(missing) == .missing {
      created.append(missing)
      let parent = parentDirectory(of: missing)
      guard parent != missing else { break }
      missing = parent
    }
    try fileSystem.createDirectory(path)
    for directory in created { try fileSystem.syncDirectory(parentDirectory(of: directory)) }
  }

  /// The directory that holds `path` ("." for a bare name).
  static func parentDirectory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// `PARENT/.NAME.PURPOSE-` for `PARENT/NAME`: how the names of the hidden directories built
  /// beside a store (a rekeyed copy, an upgrade) begin. At most 200 bytes of the name are kept,
  /// so that the hidden name (up to 30 bytes more) fits where the store's does (255 bytes); a
  /// cut inside a character leaves U+FFFD, still a name.
  static func hiddenSiblingPrefix(of path: String, purpose: String) -> String {
    let name = path.split(separator: "/").last.map(String.init) ?? path
    let stem = String(decoding: name.utf8.prefix(200), as: UTF8.self)
    return "\(parentDirectory(of: path))/.\(stem).\(purpose)-"
  }

  /// A fresh hidden directory name beside `path`: the prefix and a random hexadecimal tail.
  static func hiddenSibling(of path: String, purpose: String) -> String {
    hiddenSiblingPrefix(of: path, purpose: purpose) + String(UInt32.random(in: 0...UInt32.max), radix: 16)
  }

  /// Removes every file in `directory` (a store's files: it has no subdirectories), ignoring
  /// failures; the caller then removes the directory, which fails if anything is left.
  static func removeFiles(in directory: String, fileSystem: any FileSystem) {
    for file in (try? fileSystem.contentsOfDirectory(directory)) ?? [] {
      try? fileSystem.removeFile("\(directory)/\(file)")
    }
  }

  /// Step 9 of a writable open: makes the manifest on disk describe what this open found and
  /// repaired (a cut torn tail, the segment it appends to), the state the next open checks
  /// against, and removes the hint of the segment it appends to. Nothing is written when the
  /// store is as a clean close left it: the manifest then already describes it, and lists the
  /// segment it appends to as active, so that its first append writes nothing but the record
  /// (`CaskStore.resumeAppending`).
  private func settle(
    _ writerState: inout CaskStore.WriterState, found: Manifest?, segments: [Segment], ring: inout KeyRing,
    header: inout StoreHeader?, headerPath: String
  ) throws {
    let inUse = Set(segments.map(\.epoch))
    let rotationUnfinished =
      ring.hasEpochs && (ring.pinnedManifest != nil || ring.older.keys.contains { !inUse.contains($0) })
    // The segment it resumes (if any) was read from its hint, which only a seal or close writes.
    if writerState.active?.hintCoversEnd ?? true, !rotationUnfinished, let found {
      let clean = try found.describesCleanClose(
        of: segments, active: writerState.active, writer: writerState, hasEpochs: ring.hasEpochs,
        identity: ring.identity)
      if clean != .no {
        writerState.untouchedSinceOpen = true
        if clean == .cleanResumedSealed {
          writerState.active?.hintCoversEnd = false
          writerState.active?.sealedOnDisk = true
        }
        return
      }
    }
    writerState.active?.hintCoversEnd = false
    if let active = writerState.active {
      try fileSystem.removeFile("\(path)/\(Segment.hintName(id: active.segment.id))")
    }
    guard ring.current.bindsRecords else { return }
    let manifest = try Manifest.describing(
      segments, active: writerState.active, writer: writerState, retired: [], hasEpochs: ring.hasEpochs,
      identity: ring.identity)
    try manifest.write(in: path, fileSystem: fileSystem, cipher: ring.current)
    writerState.manifestGeneration = manifest.generation
    if let current = header {
      header = try finishRotation(&ring, header: current, inUse: inUse, headerPath: headerPath)
    }
  }

  /// Step 9 for a store with key epochs, after the manifest under the current key is written:
  /// drops from the header's key ring the pinned manifest and every older epoch no segment is
  /// under any more (a crash stopped a password change or a rotation before it did so).
  ///
  /// - Returns: the header now on disk.
  private func finishRotation(
    _ ring: inout KeyRing, header: StoreHeader, inUse: Set<UInt32>, headerPath: String
  ) throws -> StoreHeader {
    guard ring.hasEpochs else { return header }
    var trimmed = ring
    trimmed.pinnedManifest = nil
    trimmed.older = trimmed.older.filter { inUse.contains($0.key) }
    guard trimmed.pinnedManifest != ring.pinnedManifest || trimmed.older.count != ring.older.count else {
      return header
    }
    var rewritten = header
    rewritten.keyRing = try trimmed.sealed()
    rewritten = try rewritten.authenticated(with: trimmed.current.keys)
    try Self.writeHeader(rewritten, at: headerPath, fileSystem: fileSystem, directory: path)
    ring = trimmed
    return rewritten
  }

  /// Makes a random data key, wraps it, and writes the header atomically. A version 5 store
  /// starts with key epoch 0 in its key ring and a random identity, under the header's MAC.
  private func createHeader(at headerPath: String, version: UInt16) throws -> (KeyRing, StoreHeader) {
    let keys = try RNCryptor.Keys.random()
    let dataKey = StoreCredential.concatenate(keys)
    var header = try credential.wrap(dataKey, version: version, keyDerivation: options.keyDerivation)
    var ring = KeyRing(current: RecordCipher(keys: keys, version: header.recordVersion))
    if version >= CaskFormat.authenticatedVersion {
      ring.hasEpochs = true
      ring.identity = try StoreIdentity.random()
      header.keyRing = try ring.sealed()
      header.identity = ring.identity
      header = try header.authenticated(with: keys)
    }
    try StoreOpener.writeHeader(header, at: headerPath, fileSystem: fileSystem, directory: path)
    return (ring, header)
  }

  /// Replaces the header file atomically; after a crash at any point the old or the new
  /// header is in place, never a mix.
  static func writeHeader(_ header: StoreHeader, at headerPath: String, fileSystem: any FileSystem, directory: String)
    throws
  {
    try AtomicFile.write(header.encoded(), to: headerPath, fileSystem: fileSystem, syncingDirectory: directory)
  }
}
