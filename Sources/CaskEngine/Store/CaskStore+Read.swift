import Foundation

/// Reading one record's value: from the record cache when it holds the record, else from
/// its segment, which then caches it.
extension CaskStore {
  /// Reads the record at `location` (from the record cache, or the disk) and decrypts its
  /// value, checking that it is `key`'s. A record read from disk that authenticates is cached.
  ///
  /// - Complexity: one positioned read (none when cached) and one decryption.
  func readValue(at location: RecordLocation, in segment: Segment, key: String) throws -> Data {
    if let cache = recordCache,
      let value = try cache.withRecord(at: location, { try value(ofRecord: $0, at: location, in: segment, key: key) })
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

  /// Reads the `buffer.count` bytes of the record at `location` into `buffer`.
  ///
  /// - Throws: `CaskError.corrupt` when the file ends before the record does; `.io`.
  private func readRecord(
    into buffer: UnsafeMutableRawBufferPointer, at location: RecordLocation, in segment: Segment
  ) throws {
    let received = try segment.file.readFully(into: buffer, at: UInt64(location.offset))
    guard received == buffer.count else {
      throw CaskError.corrupt(file: segment.path, offset: UInt64(location.offset), reason: "record header is damaged")
    }
  }

  /// The value of the whole record `record`, read from `location`, checked to be `key`'s.
  private func value(
    ofRecord record: UnsafeRawBufferPointer, at location: RecordLocation, in segment: Segment, key: String
  ) throws -> Data {
    let offset = UInt64(location.offset)
    guard let header = RecordHeader.parse(record), header.totalLength == record.count, !header.isDelete else {
      throw CaskError.corrupt(file: segment.path, offset: offset, reason: "record header is damaged")
    }
    let valueStart = CaskFormat.recordHeaderLength + Int(header.keyLength)
    return try segment.cipher.openValue(
      UnsafeRawBufferPointer(rebasing: record[valueStart...]), forKey: key, file: segment.path,
      offset: offset + UInt64(valueStart))
  }
}
