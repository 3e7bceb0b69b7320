import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

/// Reading the inputs and writing the outputs of a compaction.
extension Compactor {
  /// The records of a sealed segment, from its hint file, or by scanning it.
  func hintEntries(of segment: Segment, length: UInt64) throws -> [HintEntry] {
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

  /// Copies live records of one input into the outputs, in file order, with large writes.
  mutating func copy(_ live: [(IndexKey, RecordLocation)], from input: Segment) throws {
    let orderBase = newestInput
    let limit = min(store.options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 20)
    var index = 0
    while index < live.count {
      // Read a run of records in one positioned read when they sit close together.
      var runEnd = index + 1
      let runStart = UInt64(live[index].1.offset)
      var runBytes = UInt64(live[index].1.length)
      while runEnd < live.count, UInt64(live[runEnd].1.offset) + UInt64(live[runEnd].1.length) - runStart <= 1 << 20 {
        runBytes = UInt64(live[runEnd].1.offset) + UInt64(live[runEnd].1.length) - runStart
        runEnd += 1
      }
      let run = try input.file.read(upTo: Int(runBytes), at: runStart)
      guard run.count == Int(runBytes) else {
        throw CaskError.corrupt(file: input.path, offset: runStart, reason: "segment ended early during compaction")
      }
      for (key, location) in live[index..<runEnd] {
        let start = run.startIndex + Int(UInt64(location.offset) - runStart)
        var record = Array(run[start..<start + Int(location.length)])
        guard let header = record.withUnsafeBytes({ RecordHeader.parse($0) }),
          header.totalLength == record.count,
          record.withUnsafeBytes({ RecordHeader.checksumMatches($0) })
        else {
          // A damaged record cannot be served anyway (get reports it as corrupt); it is not
          // copied, so the key goes with its segment, and the report says so.
          leaveOut(key, at: location, of: input, reason: "record is damaged (its header or checksum)")
          continue
        }
        // A version 3 record is copied only if it is the record its key message was sealed
        // for: re-sealing it for its new place must not make a moved or forged record valid.
        if input.cipher.bindsRecords,
          let reason = bindingMismatch(of: record, key: key, header: header, at: location, in: input)
        {
          leaveOut(key, at: location, of: input, reason: reason)
          continue
        }
        // A record under an older key epoch: its value is opened and sealed again under the
        // current key (same plaintext, so the same length); one that does not open is left out.
        if input.epoch != cipher.epoch && !header.isDelete {
          do {
            try resealValue(&record, keyLength: Int(header.keyLength), from: input)
          } catch CaskError.corrupt(_, _, let reason) {
            leaveOut(key, at: location, of: input, reason: reason)
            continue
          }
        }

        if outputs.isEmpty || outputs[outputs.count - 1].end + UInt64(buffer.count + record.count) > limit {
          try flush(&buffer)
          if outputs.isEmpty
            || outputs[outputs.count - 1].end + UInt64(record.count) > limit
              && outputs[outputs.count - 1].end > outputs[outputs.count - 1].segment.recordsStart
          {
            // Only a segment header the engine did not write has an order sub this close to
            // 2^32 (each compaction adds its output count to the last input's).
            let (sub, overflow) = orderBase.order.sub.addingReportingOverflow(UInt32(clamping: outputs.count + 1))
            guard !overflow else {
              throw CaskError.corrupt(
                file: Segment.fileName(id: orderBase.id), offset: 0,
                reason: "the segment's order leaves no room for compaction output")
            }
            outputs.append(try startOutput(order: SegmentOrder(base: orderBase.order.base, sub: sub)))
          }
        }
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
            &record, key: key,
            binding: RecordBinding(
              type: header.type, flags: flags, segmentID: to.segment,
              offset: outputs[last].segment.cipher.boundOffset(offset), sequence: header.sequence,
              valueDigest: record.withUnsafeBytes { RecordBinding.digest(ofValueMessage: $0) }))
        }
        RecordEncoder.setChecksum(in: &record, recordAt: 0, length: record.count)
        outputs[last].hints.append(HintEntry(isDelete: false, offset: to.offset, length: to.length, key: key.string))
        outputs[last].maxSequence = max(outputs[last].maxSequence, header.sequence)
        copied.append(CopiedRecord(key: key, from: location, to: to))
        buffer.append(contentsOf: record)
        if buffer.count >= 1 << 20 { try flush(&buffer) }
      }
      index = runEnd
    }
    try flush(&buffer)
  }

  /// Why `record`, read from `location` of `input`, is not the record its key message was
  /// sealed for (or does not authenticate); `nil` when it is.
  func bindingMismatch(
    of record: [UInt8], key: IndexKey, header: RecordHeader, at location: RecordLocation, in input: Segment
  ) -> String? {
    let keyStart = CaskFormat.recordHeaderLength
    let keyEnd = keyStart + Int(header.keyLength)
    let scanned = record.withUnsafeBytes { bytes in
      ScannedRecord(
        offset: UInt64(location.offset), header: header, keyMessage: Data(bytes[keyStart..<keyEnd]),
        valueDigest: header.isDelete
          ? [UInt8](repeating: 0, count: CaskFormat.valueDigestLength)
          : RecordBinding.digest(ofValueMessage: UnsafeRawBufferPointer(rebasing: bytes[keyEnd...])))
    }
    do {
      let sealed = try input.cipher.openKey(of: scanned, inSegment: input.id, file: Segment.fileName(id: input.id))
      return sealed == key.string ? nil : "record holds another key than the index"
    } catch CaskError.corrupt(_, _, let reason) {
      return reason
    } catch {
      return "record does not authenticate"
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

  /// Seals the key message of `record` again, for `binding` (its length does not change).
  func reseal(_ record: inout [UInt8], key: IndexKey, binding: RecordBinding) throws {
    let keyStart = CaskFormat.recordHeaderLength
    try record.withUnsafeMutableBytes { bytes in
      let keyLength = Int(loadLittleEndian(UnsafeRawBufferPointer(bytes), at: 16, as: UInt32.self))
      try IndexKey.withUTF8(of: key.string) { keyBytes in
        try cipher.sealKey(
          keyBytes, binding: binding,
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
