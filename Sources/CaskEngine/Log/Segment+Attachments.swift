import Foundation

extension Segment {
  /// The attachment section of the put at `location` whose key is `owner`: read from the file
  /// (the header and key message, and the value message's last 32 bytes), its key message
  /// opened and its binding checked as any read from disk checks it.
  ///
  /// - Returns: the section (empty when the record carries none), or `nil` when the record
  ///   cannot be read, does not authenticate, is not the record its key message was sealed for,
  ///   or holds another key.
  func attachedSection(at location: RecordLocation, owner: UnsafeRawBufferPointer) -> [UInt8]? {
    let start = UInt64(location.offset)
    let length = Int(location.length)
    let headerLength = CaskFormat.recordHeaderLength
    guard length > headerLength, let head = try? file.read(upTo: min(length, 4096), at: start),
      let header = head.withUnsafeBytes({ RecordHeader.parse($0) }), header.totalLength == length, !header.isDelete
    else { return nil }
    let keyEnd = headerLength + Int(header.keyLength)
    let digestLength = CaskFormat.valueDigestLength
    guard length - keyEnd >= digestLength else { return nil }
    var keyMessage = head.count >= keyEnd ? head[headerLength..<keyEnd] : Data()
    var digest = head.count >= length ? Array(head[(length - digestLength)..<length]) : []
    if keyMessage.isEmpty {
      guard let read = try? file.read(upTo: keyEnd - headerLength, at: start + UInt64(headerLength)),
        read.count == keyEnd - headerLength
      else { return nil }
      keyMessage = read
    }
    if digest.isEmpty {
      guard let read = try? file.read(upTo: digestLength, at: start + UInt64(length - digestLength)),
        read.count == digestLength
      else { return nil }
      digest = Array(read)
    }
    let record = ScannedRecord(offset: start, header: header, keyMessage: Data(keyMessage), valueDigest: digest)
    let name = Segment.fileName(id: id)
    guard let plaintext = try? cipher.open(record.keyMessage, file: name, offset: start),
      let opened = try? cipher.boundKeyAndAttachments(plaintext, of: record, inSegment: id, file: name),
      opened.key.utf8.elementsEqual(owner)
    else { return nil }
    return opened.attached
  }
}
