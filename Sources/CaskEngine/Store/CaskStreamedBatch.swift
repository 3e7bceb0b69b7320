import Foundation

/// Lets a layer above the engine see each write of a streamed batch as it is made and add its
/// own writes at the end, in the same atomic batch (the typed collections' secondary indexes
/// and unique checks). Made for one batch and dropped with it; used on the batch's thread only.
package protocol StreamedCommitHook: AnyObject {
  /// Called with each write of the batch, in order, before it is appended.
  ///
  /// - Throws: to abort the batch (nothing of it becomes visible).
  func add(_ write: CommitWrite) throws
  /// The writes to append after the batch's own, before its commit marker.
  ///
  /// - Throws: to abort the batch (a unique violation, say).
  func finish() throws -> [CommitWrite]
}

/// The writes of a batch too large to hold in memory: each is encrypted and appended to the
/// log as it is made, and none is visible until the batch commits.
///
/// Obtained from `CaskStore.streamedBatch(_:)`, which holds the writer for the body's whole
/// duration. The records go to the active segment behind the last committed one; the index
/// learns of them only when the last record, with the commit marker, is written. A batch that
/// throws, or a crash before the marker, leaves no visible write (Docs/FORMAT.md, section 5.3).
///
/// What the batch keeps in memory is the location of each key it wrote (about 40 bytes per
/// key, plus the bytes of keys longer than 16) and up to one megabyte of records not yet
/// written; never a value.
///
/// Not copyable: a copy kept past the body, or used beside the original, would write at an
/// end that is no longer the log's.
public struct CaskStreamedBatch: ~Copyable {
  /// Records are written once this many bytes wait: one `pwrite` per megabyte, not per record.
  static let flushLength = 1 << 20

  let store: CaskStore
  let segment: Segment
  /// Where the batch's first record is (or goes): the committed end of the segment.
  let start: UInt64
  /// The end of what is written to the file so far.
  private(set) var written: UInt64
  /// Records finished (flags, sequence, CRC set) but not yet written, from `written` on.
  private var buffer: [UInt8] = []
  /// The newest record, not finished yet: whether it carries the commit marker is known only
  /// when the next write comes or the batch ends.
  private var held: CaskStore.Prepared?
  private(set) var firstSequence: UInt64
  private(set) var nextSequence: UInt64
  /// Every key written, pointing at its newest record in this batch. A delete is kept with
  /// segment 0, which no segment has.
  private(set) var pending = KeyTable()
  /// Bytes of records that a later record of the same key in this batch replaced.
  private(set) var replacedBytes: UInt64 = 0
  private(set) var tombstones = HintEntries()
  private(set) var records = 0
  /// Whether a write to the file was attempted: an abort must then cut the file back.
  private(set) var touchedFile = false
  let hook: (any StreamedCommitHook)?
  /// Groups this batch may write (checked once each, `refuseUnkept`).
  private var allowedGroups: Set<String> = []

  init(store: CaskStore, segment: Segment, start: UInt64, nextSequence: UInt64, hook: (any StreamedCommitHook)?) {
    self.store = store
    self.segment = segment
    self.start = start
    self.written = start
    self.firstSequence = nextSequence
    self.nextSequence = nextSequence
    self.hook = hook
  }

  /// Stores `value` under `key` when the batch commits.
  ///
  /// - Returns: whether `key` was not written before in this batch.
  /// - Throws: `CaskError.invalidKey`, `CaskError.valueTooLarge`, the store's write errors,
  ///   and what the commit hook throws. The batch is then aborted: rethrow the error.
  /// - Complexity: one encryption, O(1) on average for the key, and a write per megabyte.
  @discardableResult
  public mutating func put(_ value: Data, forKey key: String) throws -> Bool {
    try CaskStore.validate(key: key)
    try CaskStore.validate(value: value)
    try refuseUnkept(key)
    try hook?.add(CommitWrite(key: key, value: value))
    return try add(store.prepare(.put(key: key, value: value)))
  }

  /// Removes `key` when the batch commits; nothing is written when it exists neither in the
  /// store nor in this batch.
  ///
  /// - Throws: as `put`.
  public mutating func delete(_ key: String) throws {
    try CaskStore.validate(key: key)
    guard try contains(key) else { return }
    try refuseUnkept(key)
    try hook?.add(CommitWrite(key: key, value: nil))
    try add(store.prepare(.delete(key: key)))
  }

  /// Throws `CaskError.writeRefused` for a key of a kept group that no hook keeps
  /// (`CaskStore.refuseUnkeptWrites`), checking each group once per batch.
  private mutating func refuseUnkept(_ key: String) throws {
    guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return }
    let group = String(key[..<separator])
    guard !allowedGroups.contains(group) else { return }
    try store.refuseUnkeptWrites(CollectionOfOne(key))
    allowedGroups.insert(group)
  }

  /// Whether `key` exists as this batch sees it: its own writes over the committed store.
  ///
  /// - Complexity: O(1), no disk access.
  public func contains(_ key: String) throws -> Bool {
    if let held, held.key == IndexKey(key) { return !held.isDelete }
    let mine = IndexKey.withUTF8(of: key) { pending[$0] }
    if let mine { return mine.segment != 0 }
    return try store.contains(key)
  }

  /// Number of records written so far (a key written twice counts twice).
  public var count: Int { records + (held == nil ? 0 : 1) }

  /// - Returns: whether the record's key was not written before in this batch.
  @discardableResult
  private mutating func add(_ record: CaskStore.Prepared) throws -> Bool {
    if let previous = held.take() { try finish(previous, flags: records == 0 ? CaskFormat.recordFlagBatchStart : 0) }
    let isNew = IndexKey.withUTF8(of: record.key.string) { pending[$0] } == nil
    let end = written + UInt64(buffer.count) + UInt64(record.record.count)
    guard end <= CaskFormat.maximumSegmentLength else {
      // Prevents: offsets past 32 bits. A streamed batch never moves to another segment
      // (Docs/FORMAT.md, section 5.3), so its segment's room is its limit.
      throw CaskError.valueTooLarge(
        length: Int(end - start), maximum: Int(CaskFormat.maximumSegmentLength - start))
    }
    guard nextSequence < UInt64.max else {
      throw CaskError.corrupt(
        file: Segment.fileName(id: segment.id), offset: written,
        reason: "no sequence numbers left: a record or hint of this store claims a sequence near 2^64")
    }
    held = record
    if buffer.count >= Self.flushLength { try flush() }
    return isNew
  }

  /// Numbers `record`, seals its key message for its place, and moves it to the buffer.
  private mutating func finish(_ record: CaskStore.Prepared, flags: UInt8) throws {
    let offset = written + UInt64(buffer.count)
    try store.number(record, flags: flags, sequence: nextSequence, segment: segment, offset: offset)
    let length = UInt32(record.record.count)
    let location = RecordLocation(
      segment: record.isDelete ? 0 : segment.id, offset: UInt32(offset), length: length)
    let previous = IndexKey.withUTF8(of: record.key.string) { pending.updateValue(location, forKey: $0) }
    if let previous { replacedBytes += UInt64(previous.length) }
    if record.isDelete {
      IndexKey.withUTF8(of: record.key.string) {
        tombstones.append(isDelete: true, offset: UInt32(offset), length: length, key: $0)
      }
    }
    record.record.withUnsafeBytes { buffer.append(contentsOf: $0) }
    nextSequence += 1
    records += 1
  }

  /// Writes the buffered records at the end of what is written.
  private mutating func flush() throws {
    guard !buffer.isEmpty else { return }
    touchedFile = true
    try buffer.withUnsafeBytes { try segment.file.write($0, at: written) }
    written += UInt64(buffer.count)
    buffer.removeAll(keepingCapacity: true)
  }

  /// Appends the hook's writes, gives the last record the commit marker and writes the rest.
  mutating func close() throws {
    if let hook {
      let extra = try store.userCode.running { try hook.finish() }
      for write in extra {
        if let value = write.value {
          try CaskStore.validate(key: write.key)
          try add(store.prepare(.put(key: write.key, value: value)))
        } else if try contains(write.key) {
          try add(store.prepare(.delete(key: write.key)))
        }
      }
    }
    guard let last = held.take() else { return }
    let flags = CaskFormat.recordFlagBatchEnd | (records == 0 ? CaskFormat.recordFlagBatchStart : 0)
    try finish(last, flags: flags)
    try flush()
  }
}
