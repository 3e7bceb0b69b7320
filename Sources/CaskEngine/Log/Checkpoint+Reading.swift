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
  /// - Throws: `Rejection` for anything but a well-formed, authentic root whose pages are
  ///   the ones its tables imply and end exactly at the end of the file.
  static func readRoot(size: UInt64, cipher: RecordCipher, read: (UInt64, Int) -> [UInt8]?) throws(Rejection)
    -> Checkpoint
  {
    let headLength = CaskFormat.checkpointHeadLength
    guard size >= UInt64(headLength), let head = read(0, headLength),
      head.prefix(CaskFormat.checkpointMagic.count).elementsEqual(CaskFormat.checkpointMagic)
    else { throw Rejection(reason: "not a checkpoint") }
    let rootLength = head.withUnsafeBytes {
      loadLittleEndian($0, at: CaskFormat.checkpointRootLengthOffset, as: UInt32.self)
    }
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
    // Every page the tables imply, each no longer than its contents can make it and no
    // shorter than a slot page's bitmap or one key of a chunk: so a table's slots and chunks
    // are reserved only for pages the file holds.
    let before = root.tablePageCount + root.sortedPageCount
    guard before <= root.pages.count, root.tombstoneCount > 0 || before == root.pages.count else {
      throw Rejection(reason: "malformed root")
    }
    var number = 0
    var fits = true
    root.forEachTablePagePlan { plan in
      let slots = plan.kind == CaskFormat.checkpointPageSlots
      let count = Int(plan.count)
      let least = slots ? CheckpointTableImage.bitmapLength(slots: count) : CaskFormat.checkpointSortedKeyHeadLength + 1
      let most =
        slots
        ? CheckpointTableImage.maximumSlotPageLength(slots: count)
        : CheckpointTableImage.maximumChunkPageLength(length: count)
      let head = CaskFormat.checkpointPageHeadLength
      let length = root.pages[number].length
      number += 1
      fits =
        length >= RecordCipher.messageLength(plaintextLength: head + least)
        && length <= RecordCipher.messageLength(plaintextLength: head + most)
      return fits
    }
    guard fits else { throw Rejection(reason: "malformed root") }
    let pageBytes = root.pages.reduce(UInt64(0)) { $0 + UInt64($1.length) }
    guard UInt64(headLength) + UInt64(rootLength) + pageBytes == size else {
      throw Rejection(reason: "the file is not as long as its root says")
    }
    return root
  }

  /// Parses a root's plaintext; `nil` when anything is out of place.
  static func decodeRoot(_ buffer: UnsafeRawBufferPointer) -> Checkpoint? {
    var reader = ByteReader(buffer)
    guard reader.readUInt8() == CaskFormat.messageTagCheckpointRoot, let flags = reader.readUInt8(),
      flags & ~CaskFormat.checkpointFlagNoAttachedKeys == 0,
      reader.readUInt16() == CaskFormat.checkpointLayoutVersion, let recordVersion = reader.readUInt16(),
      reader.readUInt16() == 0, let epoch = reader.readUInt32(),
      let identity = reader.readBytes(CaskFormat.checkpointIdentityLength), let generation = reader.readUInt64(),
      let coveredSegment = reader.readUInt32(), let coveredOffset = reader.readUInt64(),
      let lastSequence = reader.readUInt64(), let keyCount = reader.readUInt64(), let k0 = reader.readUInt64(),
      let k1 = reader.readUInt64(), let tombstoneCount = reader.readUInt32(), let segmentCount = reader.readUInt32(),
      let tableCount = reader.readUInt32(), let pageCount = reader.readUInt32(), let nonceFirst = reader.readUInt64(),
      let nonceSecond = reader.readUInt64(), tableCount > 0,
      // Every count bounded by the bytes left, before anything is reserved for it.
      UInt64(segmentCount) * UInt64(CaskFormat.checkpointSegmentLength)
        + UInt64(tableCount) * UInt64(CaskFormat.checkpointTableFixedLength)
        + UInt64(pageCount) * UInt64(CaskFormat.checkpointPageRefLength) <= UInt64(reader.remaining)
    else { return nil }
    var segments: [SegmentEntry] = []
    segments.reserveCapacity(Int(segmentCount))
    for _ in 0..<segmentCount {
      guard let id = reader.readUInt32(), let base = reader.readUInt32(), let sub = reader.readUInt32(),
        let segmentEpoch = reader.readUInt32(), let length = reader.readUInt64(), let total = reader.readUInt64(),
        let dead = reader.readUInt64(), length >= UInt64(CaskFormat.segmentHeaderLength),
        length <= CaskFormat.maximumSegmentLength,
        // A segment's records lie inside it and its dead bytes among them: counts beyond
        // would overflow the usage that later records add to.
        total <= length, dead <= total
      else { return nil }
      let entry = SegmentEntry(
        id: id, order: SegmentOrder(base: base, sub: sub), epoch: segmentEpoch, length: length, totalBytes: total,
        deadBytes: dead)
      // In history order, each segment once.
      if let previous = segments.last, (previous.order, previous.id) >= (entry.order, entry.id) { return nil }
      segments.append(entry)
    }
    guard Set(segments.map(\.id)).count == segments.count else { return nil }
    var tables: [TableEntry] = []
    var keys: UInt64 = 0
    for number in 0..<tableCount {
      guard let capacity = reader.readUInt64(), let count = reader.readUInt64(), let live = reader.readUInt64(),
        let dead = reader.readUInt64(), let used = reader.readUInt32(), let chunkCount = reader.readUInt32(),
        let nameLength = reader.readUInt16(), let name = reader.readBytes(Int(nameLength)),
        // The first table is the one of keys outside groups; a group's table is never empty.
        (number == 0) == (nameLength == 0), number == 0 || count > 0,
        capacity <= UInt64(Int32.max), count <= capacity,
        UInt64(chunkCount) * 4 <= UInt64(reader.remaining)
      else { return nil }
      var lengths: [UInt32] = []
      for _ in 0..<chunkCount {
        guard let length = reader.readUInt32(), length > 0,
          length <= UInt32(max(KeyArena.largestChunkLength, CaskFormat.maximumKeyLength))
        else { return nil }
        lengths.append(length)
      }
      guard used <= lengths.last ?? 0 else { return nil }
      keys += count
      tables.append(
        TableEntry(
          name: Array(name), capacity: capacity, count: count, arenaLive: live, arenaDead: dead, arenaUsed: used,
          chunkLengths: lengths))
    }
    guard Set(tables.map(\.name)).count == tables.count,
      let sortedGroups = decodeSortedGroups(&reader, tables: tables),
      UInt64(pageCount) * UInt64(CaskFormat.checkpointPageRefLength) <= UInt64(reader.remaining)
    else { return nil }
    var pages: [PageReference] = []
    pages.reserveCapacity(Int(pageCount))
    for _ in 0..<pageCount {
      guard let length = reader.readUInt32(), length <= CaskFormat.maximumCheckpointPageLength else { return nil }
      pages.append(PageReference(length: length))
    }
    guard reader.remaining == 0, keys == keyCount else { return nil }
    // The covered segment is the last one described, at the length the root gives it.
    guard let last = segments.last, last.id == coveredSegment, last.length == coveredOffset else { return nil }
    var root = Checkpoint(
      recordVersion: recordVersion, epoch: epoch, identity: Array(identity), generation: generation,
      coveredSegment: coveredSegment, coveredOffset: coveredOffset, lastSequence: lastSequence, keyCount: keyCount,
      hashKey: KeyHashKey(k0: k0, k1: k1), tombstoneCount: tombstoneCount, segments: segments, tables: tables,
      pages: pages, sortedGroups: sortedGroups)
    root.carriesNoAttachedKeys = flags & CaskFormat.checkpointFlagNoAttachedKeys != 0
    root.nonce = Nonce(first: nonceFirst, second: nonceSecond)
    return root
  }
}
