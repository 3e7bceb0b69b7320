import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// An operation encrypted into its record, ready to append.
  struct Prepared {
    var key: IndexKey
    /// The whole record; its flags, sequence and CRC are set under the writer lock.
    var record: RecordBytes
    var isDelete: Bool
    /// The attachment section its key message carries after the key (a version 5 put), empty
    /// for none; sealed with the key message under the writer lock.
    var attached: [UInt8] = []
  }

  /// What a commit changed.
  struct CommitResult {
    var written = 0
    var deleted = 0
  }

  /// Encrypts a batch outside any lock, then appends it as one write under the writer lock,
  /// updates the index, and waits for durability as the options ask.
  ///
  /// - Parameter attachments: for puts of the batch, the keys their records attach (as a
  ///   commit hook's `CommitAdditions.attachments`).
  func commit(_ batch: CaskBatch, attaching attachments: [String: [String]] = [:]) throws -> CommitResult {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("a write")
    // Dropped on any way out but the wait (a failure, nothing to write), which tells the group.
    let announcement = options.durability == .always ? groupCommit.begin() : nil
    let sealedUnder = cipher
    var prepared = try prepare(batch, cipher: sealedUnder)
    guard !prepared.isEmpty else { return CommitResult() }
    let (ticket, result) = try writer.withLock { writer in
      // A password change between the sealing and here started a new key epoch: the values
      // are sealed again under its key (the active segment is always under the current one).
      if keyRing.withLock({ $0.current.epoch }) != sealedUnder.epoch { prepared = try prepare(batch) }
      try addHookWrites(for: batch, to: &prepared, attaching: attachments)
      return try append(&prepared, writer: &writer)
    }
    try finishCommit(ticket: ticket, result: result, announcement: announcement)
    return result
  }

  /// After the writer lock is released: durability as the options ask, and the compaction check.
  ///
  /// - Parameter announcement: the commit's announcement to group commit, if it made one.
  func finishCommit(
    ticket: UInt64, result: CommitResult, announcement: consuming GroupCommit.Announcement? = nil
  ) throws {
    guard result.written > 0 else { return }
    if options.durability == .always { try waitUntilDurable(ticket, announcement: announcement) }
    background.noteWrite(store: self)
  }

  /// Encrypts the operations of a batch, keeping one per key (the last operation on a key
  /// wins), in the order of their last occurrence. Each message is sealed straight into its
  /// record.
  ///
  /// - Parameter cipher: the keys to seal under; the current epoch's when `nil`.
  func prepare(_ batch: CaskBatch, cipher: RecordCipher? = nil) throws -> [Prepared] {
    let cipher = cipher ?? self.cipher
    if let only = batch.only { return [try prepare(only, cipher: cipher)] }
    let operations = batch.operations
    var lastIndex: [IndexKey: Int] = [:]
    for (index, operation) in operations.enumerated() { lastIndex[IndexKey(operation.key)] = index }
    var kept: [Int] = []
    kept.reserveCapacity(lastIndex.count)
    var valueBytes = 0
    for (index, operation) in operations.enumerated() where lastIndex[IndexKey(operation.key)] == index {
      kept.append(index)
      if case .put(_, let value) = operation { valueBytes += value.count }
    }
    let lanes = SealingLanes.lanes(count: kept.count, bytes: valueBytes, limit: options.sealingThreads)
    return try SealingLanes.map(count: kept.count, lanes: lanes) { item in
      try prepare(operations[kept[item]], cipher: cipher)
    }
  }

  /// Seals the value message (and, before version 3, the key message) into the record. A
  /// version 3 key message binds its record's place, which is known only under the writer
  /// lock: `append` seals it there, into the room left for it here.
  ///
  /// - Parameter cipher: the keys to seal under; the current epoch's when `nil`.
  func prepare(_ operation: CaskBatch.Operation, cipher: RecordCipher? = nil) throws -> Prepared {
    let cipher = cipher ?? self.cipher
    let key = operation.key
    let sealsKeyNow = !cipher.bindsRecords
    let isDelete: Bool
    if case .delete = operation { isDelete = true } else { isDelete = false }
    let record = try IndexKey.withUTF8(of: key) { keyBytes -> RecordBytes in
      let keyMessageLength = cipher.keyMessageLength(keyLength: keyBytes.count, delete: isDelete)
      switch operation {
      case .put(_, let value):
        return try value.withUnsafeBytes { valueBytes in
          try RecordEncoder.make(
            type: CaskFormat.recordTypePut, keyMessageLength: keyMessageLength,
            valueMessageLength: cipher.valueMessageLength(valueLength: valueBytes.count, keyLength: keyBytes.count)
          ) { keyMessage, valueMessage in
            if sealsKeyNow { try cipher.sealKey(keyBytes, binding: nil, into: keyMessage) }
            try cipher.sealValue(valueBytes, forKey: keyBytes, into: valueMessage)
          }
        }
      case .delete:
        return try RecordEncoder.make(
          type: CaskFormat.recordTypeDelete, keyMessageLength: keyMessageLength, valueMessageLength: 0
        ) { keyMessage, _ in
          if sealsKeyNow { try cipher.sealKey(keyBytes, binding: nil, into: keyMessage) }
        }
      }
    }
    return Prepared(key: IndexKey(key), record: record, isDelete: isDelete)
  }

  /// `prepared` (a put) with room in its key message for `section` after the key: the record
  /// made again around the same value message.
  func attaching(_ section: [UInt8], to prepared: Prepared, cipher: RecordCipher) throws -> Prepared {
    guard !prepared.isDelete, cipher.attachesKeys else {
      throw CaskError.invalidKey(reason: "only a put of a version 5 store carries attached keys")
    }
    let keyLength = prepared.key.string.utf8.count
    // The value message copied straight from the old record into the new one. Prevents: an
    // array of it made in between for every save with index entries.
    let record = try prepared.record.withUnsafeBytes { old -> RecordBytes in
      let keyMessageLength = Int(loadLittleEndian(old, at: CaskFormat.recordKeyLengthOffset, as: UInt32.self))
      let valueMessage = UnsafeRawBufferPointer(rebasing: old[(CaskFormat.recordHeaderLength + keyMessageLength)...])
      return try RecordEncoder.make(
        type: CaskFormat.recordTypePut,
        keyMessageLength: cipher.keyMessageLength(keyLength: keyLength, attached: section.count),
        valueMessageLength: valueMessage.count
      ) { _, value in value.copyMemory(from: valueMessage) }
    }
    return Prepared(key: prepared.key, record: record, isDelete: false, attached: section)
  }

  /// Blocks until every write with a ticket up to `ticket` is on disk, sharing syncs.
  ///
  /// - Parameter announcement: the announcement of the commit of `ticket`, if it made one.
  func waitUntilDurable(_ ticket: UInt64, announcement: consuming GroupCommit.Announcement? = nil) throws {
    func sync() throws -> UInt64 {
      let (covered, file) = try writer.withLock { writer -> (UInt64, (any StorageFile)?) in
        try writer.throwIfFailed()
        return (writer.ticket, writer.active?.segment.file)
      }
      do {
        if let file {
          try groupCommit.sync(file)
        } else if let failure = groupCommit.syncFailed {
          // No active segment: every ticket is in a sealed (synced) one, unless that sync failed.
          throw failure
        }
      } catch {
        let failure = CaskError.converting(error, operation: "fdatasync", path: path)
        writer.withLock { $0.failure = failure }
        throw failure
      }
      return covered
    }
    switch consume announcement {
    case .some(let announced): try announced.waitUntilDurable(ticket, sync: sync)
    case .none: try groupCommit.waitUntilDurable(ticket, sync: sync)
    }
  }
}
