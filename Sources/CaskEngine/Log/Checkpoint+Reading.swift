import Foundation
import RNCryptorCodec

extension Checkpoint {
  /// Why a checkpoint is not used: a sentence that names no key, value or secret.
  struct Rejection: Error, Equatable {
    var reason: String
  }

  /// Reads a checkpoint's root through `read` (bytes at an offset of a file `size` long;
  /// `nil` when they cannot be read whole) and authenticates it under `cipher`.
  ///
  /// - Throws: `Rejection` for anything but a well-formed, authentic root whose pages end
  ///   exactly at the end of the file.
  static func readRoot(size: UInt64, cipher: RecordCipher, read: (UInt64, Int) -> [UInt8]?) throws(Rejection)
    -> Checkpoint
  {
    let headLength = CaskFormat.checkpointHeadLength
    guard size >= UInt64(headLength), let head = read(0, headLength),
      head.prefix(CaskFormat.checkpointMagic.count).elementsEqual(CaskFormat.checkpointMagic)
    else { throw Rejection(reason: "not a checkpoint") }
    let rootLength = head.withUnsafeBytes { loadLittleEndian($0, at: 8, as: UInt32.self) }
    guard rootLength <= CaskFormat.maximumCheckpointRootLength, UInt64(headLength) + UInt64(rootLength) <= size,
      let message = read(UInt64(headLength), Int(rootLength))
    else { throw Rejection(reason: "the root is cut short") }
    let plaintext: Data
    do {
      plaintext = try cipher.open(Data(message), file: CaskFormat.checkpointFileName, offset: UInt64(headLength))
    } catch {
      throw Rejection(reason: "the root does not authenticate under the current key")
    }
    guard var root = plaintext.withUnsafeBytes({ decodeRoot($0) }) else {
      throw Rejection(reason: "malformed root")
    }
    root.rootMessageLength = Int(rootLength)
    let pageBytes = root.pages.reduce(UInt64(0)) { $0 + UInt64($1.length) }
    guard UInt64(headLength) + UInt64(rootLength) + pageBytes == size else {
      throw Rejection(reason: "the file is not as long as its root says")
    }
    return root
  }

  /// Parses a root's plaintext; `nil` when anything is out of place.
  static func decodeRoot(_ buffer: UnsafeRawBufferPointer) -> Checkpoint? {
    var reader = ByteReader(buffer)
    guard reader.readUInt8() == CaskFormat.messageTagCheckpointRoot, reader.readUInt8() == 0,
      reader.readUInt16() == CaskFormat.checkpointLayoutVersion, let recordVersion = reader.readUInt16(),
      reader.readUInt16() == 0, let epoch = reader.readUInt32(),
      let identity = reader.readBytes(CaskFormat.checkpointIdentityLength), let generation = reader.readUInt64(),
      let coveredSegment = reader.readUInt32(), let coveredOffset = reader.readUInt64(),
      let lastSequence = reader.readUInt64(), let keyCount = reader.readUInt64(), let ungrouped = reader.readUInt64(),
      let segmentCount = reader.readUInt32(), let groupCount = reader.readUInt32(),
      let pageCount = reader.readUInt32(),
      // Every count bounded by the bytes left, before anything is reserved for it.
      UInt64(segmentCount) * UInt64(CaskFormat.checkpointSegmentLength)
        + UInt64(groupCount) * UInt64(CaskFormat.checkpointGroupFixedLength + 1)
        + UInt64(pageCount) * UInt64(CaskFormat.checkpointPageRefLength) <= UInt64(reader.remaining)
    else { return nil }
    var segments: [SegmentEntry] = []
    segments.reserveCapacity(Int(segmentCount))
    for _ in 0..<segmentCount {
      guard let id = reader.readUInt32(), let base = reader.readUInt32(), let sub = reader.readUInt32(),
        let segmentEpoch = reader.readUInt32(), let length = reader.readUInt64(), let total = reader.readUInt64(),
        let dead = reader.readUInt64(), length >= UInt64(CaskFormat.segmentHeaderLength),
        length <= CaskFormat.maximumSegmentLength
      else { return nil }
      let entry = SegmentEntry(
        id: id, order: SegmentOrder(base: base, sub: sub), epoch: segmentEpoch, length: length, totalBytes: total,
        deadBytes: dead)
      // In history order, each segment once.
      if let previous = segments.last, (previous.order, previous.id) >= (entry.order, entry.id) { return nil }
      segments.append(entry)
    }
    guard Set(segments.map(\.id)).count == segments.count else { return nil }
    var sizes = HintSizes()
    guard let ungroupedCount = Int(exactly: ungrouped) else { return nil }
    sizes.ungrouped = ungroupedCount
    var grouped: UInt64 = 0
    for _ in 0..<groupCount {
      guard let keys = reader.readUInt64(), let nameLength = reader.readUInt16(), nameLength > 0,
        let name = reader.readBytes(Int(nameLength)), let puts = Int(exactly: keys), puts > 0
      else { return nil }
      grouped += keys
      sizes.groups.append(HintSizes.Group(name: Array(name), puts: puts))
    }
    var pages: [PageReference] = []
    pages.reserveCapacity(Int(pageCount))
    for _ in 0..<pageCount {
      guard let length = reader.readUInt32(), let segment = reader.readUInt32(), let entries = reader.readUInt32(),
        let digest = reader.readBytes(RNCryptor.Format.hmacLength), entries > 0,
        length <= CaskFormat.maximumCheckpointPageLength
      else { return nil }
      pages.append(PageReference(length: length, segment: segment, entries: entries, digest: Array(digest)))
    }
    guard reader.remaining == 0, ungrouped.addingReportingOverflow(grouped) == (keyCount, false) else { return nil }
    // The covered segment is the last one described, at the length the root gives it.
    if let last = segments.last {
      guard last.id == coveredSegment, last.length == coveredOffset else { return nil }
    } else if coveredSegment != 0 || keyCount != 0 || !pages.isEmpty {
      return nil
    }
    return Checkpoint(
      recordVersion: recordVersion, epoch: epoch, identity: Array(identity), generation: generation,
      coveredSegment: coveredSegment, coveredOffset: coveredOffset, lastSequence: lastSequence, keyCount: keyCount,
      segments: segments, sizes: sizes, pages: pages)
  }

  /// Reads, checks and decrypts every page in order, calling `body` with each page's segment
  /// and its entries, up to `batch` at a time. A page is used only if its message's digest is
  /// the one the root lists for it, it authenticates, and it holds exactly the entries the
  /// root says, of a segment the root lists, each inside that segment (a tombstone only in
  /// the covered segment).
  ///
  /// - Throws: `Rejection` at the first page that is not so (`body` has then seen the
  ///   pages before it: the caller throws away what it built).
  func forEachPage(
    cipher: RecordCipher, batch: Int, read: (UInt64, Int) -> [UInt8]?,
    _ body: (UInt32, UnsafeBufferPointer<HintPayload.EntryView>) -> Void
  ) throws(Rejection) {
    let lengths = Dictionary(uniqueKeysWithValues: segments.map { ($0.id, $0.length) })
    var position = UInt64(CaskFormat.checkpointHeadLength) + UInt64(rootMessageLength)
    var puts: UInt64 = 0
    for (number, page) in pages.enumerated() {
      guard let segmentLength = lengths[page.segment], let message = read(position, Int(page.length)),
        constantTimeEqual(Array(message.suffix(RNCryptor.Format.hmacLength)), page.digest),
        let plaintext = try? cipher.open(Data(message), file: CaskFormat.checkpointFileName, offset: position)
      else { throw Rejection(reason: "page \(number) is missing, damaged or not the root's") }
      position += UInt64(page.length)
      let checked = plaintext.withUnsafeBytes { buffer -> UInt64? in
        Self.forEachEntry(
          of: buffer, number: UInt32(number), page: page, segmentLength: segmentLength,
          allowsDeletes: page.segment == coveredSegment, batch: batch, body)
      }
      guard let pagePuts = checked else { throw Rejection(reason: "page \(number) is malformed") }
      puts += pagePuts
    }
    guard puts == keyCount else { throw Rejection(reason: "the pages do not hold the keys the root counts") }
  }

  /// Parses one page's plaintext and hands its entries to `body` in batches.
  ///
  /// - Returns: the number of puts, or `nil` when the page is malformed.
  private static func forEachEntry(
    of buffer: UnsafeRawBufferPointer, number: UInt32, page: PageReference, segmentLength: UInt64,
    allowsDeletes: Bool, batch: Int, _ body: (UInt32, UnsafeBufferPointer<HintPayload.EntryView>) -> Void
  ) -> UInt64? {
    var reader = ByteReader(buffer)
    guard reader.readUInt8() == CaskFormat.messageTagCheckpointPage, reader.readUInt8() == 0,
      reader.readUInt16() == 0, reader.readUInt32() == number, reader.readUInt32() == page.segment,
      reader.readUInt32() == page.entries
    else { return nil }
    var puts: UInt64 = 0
    let parsed = withUnsafeTemporaryAllocation(of: HintPayload.EntryView.self, capacity: batch) { views -> Bool in
      var filled = 0
      for _ in 0..<page.entries {
        guard let type = reader.readUInt8(), reader.readUInt8() == 0, let keyLength = reader.readUInt16(),
          let offset = reader.readUInt32(), let length = reader.readUInt32(), keyLength > 0,
          let key = reader.readBytes(Int(keyLength)), HintPayload.isValidUTF8(key),
          type == CaskFormat.recordTypePut || (type == CaskFormat.recordTypeDelete && allowsDeletes),
          UInt64(offset) >= UInt64(CaskFormat.segmentHeaderLength), UInt64(offset) + UInt64(length) <= segmentLength
        else { return false }
        if type == CaskFormat.recordTypePut { puts += 1 }
        views.initializeElement(
          at: filled,
          to: HintPayload.EntryView(
            isDelete: type == CaskFormat.recordTypeDelete, offset: offset, length: length, key: key))
        filled += 1
        if filled == batch {
          body(page.segment, UnsafeBufferPointer(rebasing: views[0..<filled]))
          filled = 0
        }
      }
      if filled > 0 { body(page.segment, UnsafeBufferPointer(rebasing: views[0..<filled])) }
      return reader.remaining == 0
    }
    return parsed ? puts : nil
  }
}
