import Foundation

/// How far a store's key rotation has come (`CaskStore.keyEpochs`): what is still sealed
/// under a data key older than the current one, which an old header (with the password it
/// was written under) still opens.
public struct KeyEpochStatus: Sendable, Equatable {
  /// The current key epoch: 0 until the first password or key change, then one more at each.
  public var currentEpoch: UInt32
  /// The older epochs whose keys the header still holds (increasing).
  public var olderEpochs: [UInt32]
  /// Segments sealed under an older epoch's key.
  public var olderSegments: Int
  /// Live records (keys with a value) in them.
  public var olderRecords: Int
  /// Bytes of those live records, as stored.
  public var olderBytes: UInt64

  /// Whether nothing is left under an older key: an old header opens nothing current.
  public var isRotated: Bool { olderSegments == 0 && olderEpochs.isEmpty }
}

extension CaskStore {
  /// What is still sealed under an older key epoch after a password change, and how much.
  ///
  /// - Complexity: O(n) in the number of keys when a segment is under an older epoch; O(s)
  ///   in the number of segments otherwise.
  public var keyEpochs: KeyEpochStatus {
    let ring = keyRing.withLock { $0 }
    return state.withLock { state in
      let older = Set(state.segments.values.filter { $0.epoch != ring.current.epoch }.map(\.id))
      let (records, bytes) = older.isEmpty ? (0, 0) : state.directory.liveRecords(inSegments: older)
      return KeyEpochStatus(
        currentEpoch: ring.current.epoch, olderEpochs: ring.olderEpochs, olderSegments: older.count,
        olderRecords: records, olderBytes: bytes)
    }
  }

  /// Finishes a key rotation now: compacts the store, which seals every record still under an
  /// older key epoch again under the current key and drops the older keys from the header.
  /// Readers and writers go on meanwhile, as for `compact()`.
  ///
  /// - Returns: the compaction's report; `nil` when nothing was under an older epoch (no
  ///   compaction ran).
  /// - Throws: as `compact()`.
  @discardableResult
  public func rotateKeys() throws -> CompactionReport? {
    guard hasOlderKeyEpochs else { return nil }
    return try compact()
  }

  /// Whether the header still holds a key older than the current one.
  var hasOlderKeyEpochs: Bool { keyRing.withLock { !$0.older.isEmpty || $0.pinnedManifest != nil } }

  /// The key epochs a segment of the store, or a compaction output being written, is under.
  func epochsInUse(_ writer: WriterState) -> Set<UInt32> {
    state.withLock { Set($0.segments.values.map(\.epoch)) }.union(writer.pendingOutputs.values)
  }

  /// Rewrites the header without the older keys no segment is under any more, and without a
  /// pinned manifest; nothing when there is neither. Called with the writer lock held, after a
  /// manifest under the current key was written.
  func trimKeyRing(_ writer: inout WriterState) throws {
    let ring = keyRing.withLock { $0 }
    guard ring.hasEpochs, !options.readOnly, var header = writer.header else { return }
    let inUse = epochsInUse(writer)
    var trimmed = ring
    trimmed.older = ring.older.filter { inUse.contains($0.key) }
    trimmed.pinnedManifest = nil
    guard trimmed.older.count != ring.older.count || ring.pinnedManifest != nil else { return }
    header.keyRing = try trimmed.sealed()
    header = try header.authenticated(with: trimmed.current.keys)
    let headerPath = "\(path)/\(CaskFormat.headerFileName)"
    do {
      try StoreOpener.writeHeader(header, at: headerPath, fileSystem: fileSystem, directory: path)
    } catch {
      // Either header is good for the current key; the in-memory ring keeps the wider one.
      if (try? Self.contents(of: headerPath, fileSystem: fileSystem)) == Data(header.encoded()) {
        writer.header = header
      }
      throw error
    }
    keyRing.withLock { $0 = trimmed }
    writer.header = header
  }
}
