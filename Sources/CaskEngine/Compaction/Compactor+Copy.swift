import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

/// Reading the inputs and writing the outputs of a compaction.
extension Compactor {
  /// The records of a sealed segment, from its hint file, or by scanning it.
  func hintEntries(of segment: Segment, length: UInt64) throws -> [HintEntry] {
    // The segment sealed for this compaction: its entries are in memory, in hash order.
    if let sealed = sealedHint, sealed.segmentID == segment.id, sealed.segmentLength == length {
      return sealed.entries.sortedByOffset().list
    }
    let hintPath = "\(store.path)/\(Segment.hintName(id: segment.id))"
    // A hint open cannot use (a link or a FIFO under its name, refused with ELOOP or EINVAL; a
    // failed read) is passed over as open passes over it: the segment is scanned instead
    // (Prevents: a compaction that fails on such a file every time, until the file is gone.)
    if store.fileSystem.fileKind(hintPath) == .file, let file = try? store.fileSystem.open(hintPath, mode: .readOnly) {
      defer { file.close() }
      if let bytes = try? file.readWhole(limit: length + CaskFormat.hintOverheadBound),
        let hint = try? HintFile.decode(bytes, cipher: segment.cipher, path: hintPath), hint.segmentID == segment.id,
        hint.segmentLength == length
      {
        return hint.entries.list
      }
    }
    var entries: [HintEntry] = []
    var scanner = SegmentScanner(file: segment.file, start: segment.recordsStart, length: length)
    _ = try scanner.scan { batch in
      for record in batch {
        guard
          let key = try? segment.cipher.openKey(
            of: record, inSegment: segment.id, file: Segment.fileName(id: segment.id))
        else { continue }
        entries.append(
          HintEntry(
            isDelete: record.header.isDelete, offset: UInt32(record.offset),
            length: UInt32(record.header.totalLength), key: key))
      }
    }
    return entries
  }

  /// Records that `key`'s record at `location` is not copied, and why, for the report.
  private mutating func leaveOut(_ key: IndexKey, at location: RecordLocation, of input: Segment, reason: String) {
    damaged.append(
      DamagedRecord(
        key: key, location: location,
        region: CorruptRegion(
          file: Segment.fileName(id: input.id), offset: UInt64(location.offset),
          length: UInt64(location.length), reason: reason)))
  }

  /// Copies live records of one input into the outputs, in file order, with large writes:
  /// each run of nearby records is read at once, each record checked (and, from an older key
  /// epoch, its value sealed again), then appended to the newest output.
  mutating func copy(_ live: [(IndexKey, RecordLocation)], from input: Segment) throws {
    var buffer: [UInt8] = []
    buffer.reserveCapacity(CaskFormat.compactionIOLength)
    var index = 0
    while index < live.count {
      let run = try readRun(of: live, from: index, in: input)
      for (key, location) in live[index..<run.end] {
        let start = run.bytes.startIndex + Int(UInt64(location.offset) - run.start)
        var record = Array(run.bytes[start..<start + Int(location.length)])
        guard let (header, section) = try checkAndReseal(&record, key: key, at: location, of: input) else { continue }
        // Only the attached keys that still point at the record go with the copy: one dropped
        // since (by a tombstone compaction leaves behind) must not come back when the copy is
        // replayed.
        let attached =
          section.isEmpty
          ? []
          : section.withUnsafeBytes { section in
            store.state.withLock { $0.directory.currentAttachments(section, owner: key.string, at: location) }
          } ?? []
        if attached != section { resize(&record, header: header, key: key, attached: attached) }
        try append(&record, header: header, key: key, from: location, attached: attached, buffer: &buffer)
      }
      index = run.end
    }
    try flush(&buffer)
  }

  /// Reads, in one positioned read, the records of `live` from `index` on that lie within
  /// `CaskFormat.compactionIOLength` bytes of its first.
  ///
  /// - Returns: the index after the run's last record, the run's offset and its bytes.
  /// - Throws: `CaskError.corrupt` when the segment ends before the run does.
  private func readRun(
    of live: [(IndexKey, RecordLocation)], from index: Int, in input: Segment
  ) throws -> (end: Int, start: UInt64, bytes: Data) {
    var end = index + 1
    let start = UInt64(live[index].1.offset)
    var length = UInt64(live[index].1.length)
    while end < live.count,
      UInt64(live[end].1.offset) + UInt64(live[end].1.length) - start <= UInt64(CaskFormat.compactionIOLength)
    {
      length = UInt64(live[end].1.offset) + UInt64(live[end].1.length) - start
      end += 1
    }
    let bytes = try input.file.read(upTo: Int(length), at: start)
    guard bytes.count == Int(length) else {
      throw CaskError.corrupt(file: input.path, offset: start, reason: "segment ended early during compaction")
    }
    return (end, start, bytes)
  }

  /// Checks `record`, read from `location` of `input`, and, when `input` is under an older key
  /// epoch, seals its value again under the outputs' key (same plaintext, same length).
  ///
  /// - Returns: its header and the attachment section its key message carries, or `nil` when
  ///   it is left out (damaged, not the record its key message was sealed for, or a value that
  ///   does not open), which the report says.
  private mutating func checkAndReseal(
    _ record: inout [UInt8], key: IndexKey, at location: RecordLocation, of input: Segment
  ) throws -> (RecordHeader, [UInt8])? {
    guard let header = record.withUnsafeBytes({ RecordHeader.parse($0) }),
      header.totalLength == record.count,
      record.withUnsafeBytes({ RecordHeader.checksumMatches($0) })
    else {
      // A damaged record cannot be served anyway (get reports it as corrupt); it is not
      // copied, so the key goes with its segment, and the report says so.
      leaveOut(key, at: location, of: input, reason: "record is damaged (its header or checksum)")
      return nil
    }
    // A version 3 record is copied only if it is the record its key message was sealed
    // for: re-sealing it for its new place must not make a moved or forged record valid.
    var section: [UInt8] = []
    if input.cipher.bindsRecords {
      switch opened(record, key: key, header: header, at: location, in: input) {
      case .failure(let problem):
        leaveOut(key, at: location, of: input, reason: problem.reason)
        return nil
      case .success(let attached): section = attached
      }
    }
    if input.epoch != cipher.epoch && !header.isDelete {
      do {
        try resealValue(&record, keyLength: Int(header.keyLength), from: input)
      } catch CaskError.corrupt(_, _, let reason) {
        leaveOut(key, at: location, of: input, reason: reason)
        return nil
      }
    }
    return (header, section)
  }

  /// Gives `record` (a put) a key message with room for `attached` after the key instead of
  /// the one it has; the value message is kept as it is.
  private func resize(_ record: inout [UInt8], header: RecordHeader, key: IndexKey, attached: [UInt8]) {
    let headerLength = CaskFormat.recordHeaderLength
    let keyMessageLength = cipher.keyMessageLength(keyLength: key.string.utf8.count, attached: attached.count)
    var resized = Array(record[0..<headerLength])
    resized.append(contentsOf: repeatElement(0, count: keyMessageLength))
    resized.append(contentsOf: record[(headerLength + Int(header.keyLength))...])
    resized.withUnsafeMutableBytes {
      $0.storeBytes(
        of: UInt32(keyMessageLength).littleEndian, toByteOffset: CaskFormat.recordKeyLengthOffset, as: UInt32.self)
    }
    record = resized
  }

  /// Appends `record` (whose key is `key`, copied from `location`) to the newest output through
  /// `buffer`, as a batch of its own, sealed for its new place from version 3 on.
  private mutating func append(
    _ record: inout [UInt8], header: RecordHeader, key: IndexKey, from location: RecordLocation, attached: [UInt8],
    buffer: inout [UInt8]
  ) throws {
    try makeRoom(for: record.count, buffer: &buffer)
    // Changed in place: a copy of the output would copy its hint array on every record.
    let last = outputs.count - 1
    let offset = outputs[last].end + UInt64(buffer.count)
    let to = RecordLocation(segment: outputs[last].segment.id, offset: UInt32(offset), length: UInt32(record.count))
    // Each copy stands alone: mark it as the end of its own batch (and, from version 3
    // on, seal its key message again for its new place; the value message is copied as
    // it is, bound by the key message's digest of it).
    let flags = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
    record[CaskFormat.recordFlagsOffset] = flags
    if cipher.bindsRecords {
      try reseal(
        &record, key: key, attached: attached,
        binding: RecordBinding(
          type: header.type, flags: flags, segmentID: to.segment,
          offset: outputs[last].segment.cipher.boundOffset(offset), sequence: header.sequence,
          valueDigest: record.withUnsafeBytes { RecordBinding.digest(ofValueMessage: $0) }))
    }
    RecordEncoder.setChecksum(in: &record, recordAt: 0, length: record.count)
    outputs[last].hints.append(
      HintEntry(isDelete: false, offset: to.offset, length: to.length, key: key.string, attached: attached))
    outputs[last].maxSequence = max(outputs[last].maxSequence, header.sequence)
    copied.append(CopiedRecord(key: key, from: location, to: to, attached: attached))
    buffer.append(contentsOf: record)
    if buffer.count >= CaskFormat.compactionIOLength { try flush(&buffer) }
  }

  /// Makes the newest output the one a record of `length` bytes goes into: flushes `buffer`
  /// when the record would take the output past the segment size limit, and starts a new
  /// output when the newest holds records already and the record does not fit behind them.
  private mutating func makeRoom(for length: Int, buffer: inout [UInt8]) throws {
    let limit = min(store.options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
    guard outputs.isEmpty || outputs[outputs.count - 1].end + UInt64(buffer.count + length) > limit else { return }
    try flush(&buffer)
    guard
      outputs.isEmpty
        || outputs[outputs.count - 1].end + UInt64(length) > limit
          && outputs[outputs.count - 1].end > outputs[outputs.count - 1].segment.recordsStart
    else { return }
    // Only a segment header the engine did not write has an order sub this close to
    // 2^32 (each compaction adds its output count to the last input's).
    let orderBase = newestInput
    let (sub, overflow) = orderBase.order.sub.addingReportingOverflow(UInt32(clamping: outputs.count + 1))
    guard !overflow else {
      throw CaskError.corrupt(
        file: Segment.fileName(id: orderBase.id), offset: 0,
        reason: "the segment's order leaves no room for compaction output")
    }
    outputs.append(try startOutput(order: SegmentOrder(base: orderBase.order.base, sub: sub)))
  }

  /// A reason a record is left out of a compaction.
  struct Problem: Error {
    var reason: String
  }

  /// The attachment section (empty for none) of `record`, read from `location` of `input`, or
  /// why it is not the record its key message was sealed for (or does not authenticate).
  func opened(
    _ record: [UInt8], key: IndexKey, header: RecordHeader, at location: RecordLocation, in input: Segment
  ) -> Result<[UInt8], Problem> {
    let keyStart = CaskFormat.recordHeaderLength
    let keyEnd = keyStart + Int(header.keyLength)
    let scanned = record.withUnsafeBytes { bytes in
      ScannedRecord(
        offset: UInt64(location.offset), header: header, keyMessage: Data(bytes[keyStart..<keyEnd]),
        valueDigest: header.isDelete
          ? [UInt8](repeating: 0, count: CaskFormat.valueDigestLength)
          : RecordBinding.digest(ofValueMessage: UnsafeRawBufferPointer(rebasing: bytes[keyEnd...])))
    }
    let name = Segment.fileName(id: input.id)
    do {
      let plaintext = try input.cipher.open(scanned.keyMessage, file: name, offset: scanned.offset)
      let sealed = try input.cipher.boundKeyAndAttachments(plaintext, of: scanned, inSegment: input.id, file: name)
      return sealed.key == key.string
        ? .success(sealed.attached) : .failure(Problem(reason: "record holds another key than the index"))
    } catch CaskError.corrupt(_, _, let reason) {
      return .failure(Problem(reason: reason))
    } catch {
      return .failure(Problem(reason: "record does not authenticate"))
    }
  }

  /// Opens the value message of `record`, read from `input` (under an older key epoch), and
  /// seals its plaintext again under the outputs' keys in the same bytes.
  ///
  /// - Throws: `CaskError.corrupt` when it does not open.
  func resealValue(_ record: inout [UInt8], keyLength: Int, from input: Segment) throws {
    let valueStart = CaskFormat.recordHeaderLength + keyLength
    let name = Segment.fileName(id: input.id)
    try record.withUnsafeMutableBytes { bytes in
      let message = UnsafeMutableRawBufferPointer(rebasing: bytes[valueStart...])
      try withUnsafeTemporaryAllocation(byteCount: max(message.count, 1), alignment: 16) { plaintext in
        defer { plaintext.initializeMemory(as: UInt8.self, repeating: 0) }
        let length = try input.cipher.open(
          UnsafeRawBufferPointer(message), into: plaintext, file: name, offset: UInt64(valueStart))
        guard RecordCipher.messageLength(plaintextLength: length) == message.count else {
          throw CaskError.corrupt(file: name, offset: UInt64(valueStart), reason: "value message has a stray length")
        }
        do {
          try RNCryptor.seal(
            prefix: UnsafeRawBufferPointer(start: nil, count: 0),
            body: UnsafeRawBufferPointer(rebasing: plaintext[0..<length]), keys: cipher.keys, into: message)
        } catch {
          throw CaskError.crypto(String(describing: error))
        }
      }
    }
  }

  /// Seals the key message of `record` again, for `binding` and with `attached` after the key
  /// (the room `resize` made for it).
  func reseal(_ record: inout [UInt8], key: IndexKey, attached: [UInt8] = [], binding: RecordBinding) throws {
    let keyStart = CaskFormat.recordHeaderLength
    try record.withUnsafeMutableBytes { bytes in
      let keyLength = Int(
        loadLittleEndian(UnsafeRawBufferPointer(bytes), at: CaskFormat.recordKeyLengthOffset, as: UInt32.self))
      try IndexKey.withUTF8(of: key.string) { keyBytes in
        try cipher.sealKey(
          keyBytes, binding: binding, attached: attached,
          into: UnsafeMutableRawBufferPointer(rebasing: bytes[keyStart..<keyStart + keyLength]))
      }
    }
  }

  /// Appends what `buffer` holds to the newest output, and empties it.
  mutating func flush(_ buffer: inout [UInt8]) throws {
    guard !buffer.isEmpty, let last = outputs.indices.last else { return }
    let output = outputs[last].segment
    let end = outputs[last].end
    try buffer.withUnsafeBytes { try output.file.write($0, at: end) }
    outputs[last].end += UInt64(buffer.count)
    buffer.removeAll(keepingCapacity: true)
  }

  /// Creates an output segment under a temporary name, with an id from the writer's sequence.
  func startOutput(order: SegmentOrder) throws -> OutputSegment {
    let id = try store.writer.withLock { writer in
      let id = try store.allocateSegmentID(&writer)
      // Named as pending in every manifest until the compaction's own: after a crash the
      // output may be in place without being listed.
      writer.pendingOutputs[id] = cipher.epoch
      return id
    }
    let finalPath = "\(store.path)/\(Segment.fileName(id: id))"
    let temporaryPath = finalPath + CaskFormat.temporarySuffix
    let file = try store.fileSystem.open(temporaryPath, mode: .createNew)
    // A version 5 output names its store but no predecessor: the chain is the ordinary segments'.
    let link = store.keyRing.withLock { $0.identity }.map { SegmentLink(identity: $0) }
    do {
      try file.write(try Segment.encodeHeader(id: id, order: order, cipher: cipher, link: link), at: 0)
    } catch {
      // Not yet among the outputs the caller's cleanup removes.
      file.close()
      try? store.fileSystem.removeFile(temporaryPath)
      throw error
    }
    let segment = Segment(id: id, order: order, file: file, cipher: cipher, link: link)
    return OutputSegment(
      segment: segment, temporaryPath: temporaryPath, finalPath: finalPath, end: segment.recordsStart, hints: [],
      maxSequence: 0)
  }
}
