import Foundation

/// Reading one record's value: from the record cache when it holds the record, else from
/// its segment, which then caches it.
extension CaskStore {
  /// Reads the record at `location` (from the record cache, or the disk) and decrypts its
  /// value, checking that it is `key`'s. A record read from disk that authenticates is cached.
  ///
  /// - Complexity: one positioned read (none when cached) and one decryption.
  func readValue(at location: RecordLocation, in segment: Segment, key: String) throws -> Data {
    // An attached key (length 0) has no record of its own: its value is empty.
    if location.length == 0 { return Data() }
    // A cached record was checked when it was read from disk (or written by this store).
    if let cache = recordCache,
      let value = try cache.withRecord(
        at: location, { try value(ofRecord: $0, at: location, in: segment, key: key, checkingBinding: false) })
    {
      return value
    }
    let length = Int(location.length)
    guard let cache = recordCache, cache.accepts(length: length) else {
      // Read into an uninitialised temporary buffer (on the stack for small records).
      return try withUnsafeTemporaryAllocation(byteCount: Swift.max(length, 1), alignment: 16) { buffer in
        try readRecord(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]), at: location, in: segment)
        return try value(
          ofRecord: UnsafeRawBufferPointer(rebasing: buffer[0..<length]), at: location, in: segment, key: key)
      }
    }
    // Read into the buffer the cache keeps. Prevents: a second buffer and a copy per miss.
    let record = RecordBytes.zeroed(count: length)
    try record.withUnsafeMutableBytes { try readRecord(into: $0, at: location, in: segment) }
    let opened = try record.withUnsafeBytes { try value(ofRecord: $0, at: location, in: segment, key: key) }
    cache.insert(record, at: location)
    return opened
  }

  /// The most bytes of a segment one read of a scan covers.
  static let scanWindow = 256 << 10

  /// Calls `body` with the value of each of `entries`, in `order` (positions in `entries`,
  /// by segment and offset, as a scan visits them; see `fileOrder`), reading neighbours in one
  /// system call: a run of records of one segment, spanning at most `scanWindow` bytes of
  /// which at least about half are theirs, is read into one buffer and each value opened from
  /// it, authenticated from the file (the record cache is neither read nor filled). Prevents:
  /// a `pread` and a record cache insertion per object in `all()` and every other scan (a
  /// fifth of a small object's read). A lone record goes through `readValue` as a get does
  /// (cache included), and so does each record a short read did not bring in whole; damage is
  /// reported with the same error.
  ///
  /// - Parameter segments: the segments by id; every entry in `order` has its segment here.
  /// - Parameter onDamage: called with a record's key and error, instead of throwing, for a
  ///   record that is corrupt; other errors are thrown.
  func forEachValue(
    of entries: [(key: String, location: RecordLocation)], inOrder order: [Int], segments: [UInt32: Segment],
    onDamage: (String, CaskError) throws -> Void, _ body: (_ key: String, _ value: Data) throws -> Void
  ) throws {
    func deliver(_ key: String, _ read: () throws -> Data) throws {
      let value: Data
      do {
        value = try read()
      } catch let error as CaskError {
        guard case .corrupt = error else { throw error }
        try onDamage(key, error)
        return
      }
      try body(key, value)
    }
    var window: UnsafeMutableRawBufferPointer?
    defer { window?.deallocate() }
    var index = 0
    while index < order.count {
      let first = entries[order[index]]
      guard let segment = segments[first.location.segment] else {
        preconditionFailure("fileOrder keeps only entries whose segment is known")
      }
      let start = UInt64(first.location.offset)
      var spanEnd = start + UInt64(first.location.length)
      var needed = UInt64(first.location.length)
      var end = index + 1
      while end < order.count {
        let next = entries[order[end]].location
        let nextEnd = UInt64(next.offset) + UInt64(next.length)
        guard next.segment == first.location.segment, UInt64(next.offset) >= spanEnd,
          nextEnd - start <= UInt64(Self.scanWindow), nextEnd - start <= 2 * (needed + UInt64(next.length)) + 4096
        else { break }
        needed += UInt64(next.length)
        spanEnd = nextEnd
        end += 1
      }
      let run = order[index..<end]
      index = end
      if run.count == 1 {
        try deliver(first.key) { try readValue(at: first.location, in: segment, key: first.key) }
        continue
      }
      if window == nil { window = .allocate(byteCount: Self.scanWindow, alignment: 16) }
      let span = UnsafeMutableRawBufferPointer(rebasing: window![0..<Int(spanEnd - start)])
      let received = try segment.file.readFully(into: span, at: start)
      for position in run {
        let (key, location) = entries[position]
        if location.length == 0 {
          try deliver(key) { Data() }
          continue
        }
        let from = Int(UInt64(location.offset) - start)
        if from + Int(location.length) > received {
          // The file ends early: this record on its own, to be reported as a get would.
          try deliver(key) { try readValue(at: location, in: segment, key: key) }
          continue
        }
        let record = UnsafeRawBufferPointer(rebasing: span[from..<(from + Int(location.length))])
        try deliver(key) { try value(ofRecord: record, at: location, in: segment, key: key) }
      }
    }
  }

  /// Reads the `buffer.count` bytes of the record at `location` into `buffer`.
  ///
  /// - Throws: `CaskError.corrupt` when the file ends before the record does; `.io`.
  private func readRecord(
    into buffer: UnsafeMutableRawBufferPointer, at location: RecordLocation, in segment: Segment
  ) throws {
    if segment.file.readMapped(into: buffer, at: UInt64(location.offset)) { return }
    let received = try segment.file.readFully(into: buffer, at: UInt64(location.offset))
    guard received == buffer.count else {
      throw CaskError.corrupt(file: segment.path, offset: UInt64(location.offset), reason: "record header is damaged")
    }
  }

  /// The value of the whole record `record`, read from `location`, checked to be `key`'s and,
  /// from version 3 on and unless `checkingBinding` is false (a cached record, checked when it
  /// was read), to be the record its key message was sealed for at this very place.
  private func value(
    ofRecord record: UnsafeRawBufferPointer, at location: RecordLocation, in segment: Segment, key: String,
    checkingBinding: Bool = true
  ) throws -> Data {
    let offset = UInt64(location.offset)
    guard let header = RecordHeader.parse(record), header.totalLength == record.count, !header.isDelete else {
      throw CaskError.corrupt(file: segment.path, offset: offset, reason: "record header is damaged")
    }
    let valueStart = CaskFormat.recordHeaderLength + Int(header.keyLength)
    if checkingBinding && segment.cipher.bindsRecords {
      try checkBinding(ofRecord: record, header: header, at: offset, in: segment)
    }
    return try segment.cipher.openValue(
      UnsafeRawBufferPointer(rebasing: record[valueStart...]), forKey: key, file: segment.path,
      offset: offset + UInt64(valueStart))
  }

  /// Opens the key message of `record` (read from `offset` of `segment`) and checks that its
  /// binding names this record: its place, type, flags, sequence and value message. A segment
  /// indexed from its hint was never scanned, so without this a record put in place of the
  /// current one (an older record of the same length, or only another value message with the
  /// CRC fixed) was served as if it were current. Prevents: a read serving a state the store
  /// never had.
  ///
  /// - Throws: `CaskError.corrupt` when the key message does not authenticate or names
  ///   another record.
  private func checkBinding(
    ofRecord record: UnsafeRawBufferPointer, header: RecordHeader, at offset: UInt64, in segment: Segment
  ) throws {
    let keyStart = CaskFormat.recordHeaderLength
    let keyMessage = UnsafeRawBufferPointer(rebasing: record[keyStart..<(keyStart + Int(header.keyLength))])
    let problem = try withUnsafeTemporaryAllocation(byteCount: Swift.max(keyMessage.count, 1), alignment: 16) {
      plaintext -> String? in
      let length = try segment.cipher.open(
        keyMessage, into: UnsafeMutableRawBufferPointer(rebasing: plaintext[...]), file: segment.path,
        offset: offset + UInt64(keyStart))
      let digestLength = CaskFormat.valueDigestLength
      guard record.count - keyStart - Int(header.keyLength) >= digestLength else {
        return "record's value message is too short"
      }
      return RecordBinding.mismatch(
        encoded: UnsafeRawBufferPointer(rebasing: plaintext[0..<length]), header: header, segmentID: segment.id,
        offset: segment.cipher.boundOffset(offset),
        valueDigest: UnsafeRawBufferPointer(rebasing: record[(record.count - digestLength)...]),
        shortTombstones: segment.cipher.shortTombstones)
    }
    if let problem { throw CaskError.corrupt(file: segment.path, offset: offset, reason: problem) }
  }
}
