import Foundation
import RNCryptorCodec

/// What `fuzz-checkpoint` reaches through: the checkpoint reader as open runs it, short of
/// matching the checkpoint against a store's segments (Docs/FORMAT.md, section 18).
extension FuzzingEntry {
  /// Reads `file` as open reads a `CHECKPOINT` under `dataKeys`: the root, then the pages as
  /// a store loads them (a walk over the covered segment's entries loading only the chunks of
  /// their long keys, lookups of those keys in a second load of the file, whose probes load
  /// each chunk they compare with), then every page and every table's checks. Returns the
  /// number of keys loaded, or `nil` when the checkpoint is ignored or a page fails. Traps when
  /// a loaded directory breaks an invariant: a count other than the root's, or a key that
  /// cannot be looked up again without leaving the table's memory.
  package static func readCheckpoint(_ file: Data, dataKeys: RNCryptor.Keys) -> Int? {
    let cipher = RecordCipher(keys: dataKeys, version: CaskFormat.boundRecordsVersion)
    let bytes = [UInt8](file)
    let read = { (offset: UInt64, count: Int) -> [UInt8]? in
      guard offset <= UInt64(bytes.count), count <= bytes.count - Int(offset) else { return nil }
      return Array(bytes[Int(offset)..<Int(offset) + count])
    }
    guard let root = try? Checkpoint.readRoot(size: UInt64(bytes.count), cipher: cipher, read: read) else {
      return nil
    }
    func lazily() -> KeyDirectory? {
      let pages = CheckpointPages(root: root, cipher: cipher, path: CaskFormat.checkpointFileName, read: read)
      return try? root.load(from: pages, cache: SortedPageCache(limit: 1 << 20)).0
    }
    guard let walked = lazily(), let probed = lazily() else { return nil }
    let entries = walked.hintEntries(inSegment: root.coveredSegment)
    guard walked.damage == nil else { return nil }
    entries.forEachEntry { _, _, _, key in _ = probed.location(forBytes: key) }
    guard let directory = lazily(), directory.loadAllPages() else { return nil }
    precondition(UInt64(directory.count) == root.keyCount, "a loaded checkpoint lost count of its keys")
    // Every sorted group whose pages all check out walks to exactly its count, in order.
    let pages = CheckpointPages(root: root, cipher: cipher, path: CaskFormat.checkpointFileName, read: read)
    guard (try? root.checkSortedPages(pages)) != nil else { return nil }
    for base in root.sortedBases(pages: pages, cache: SortedPageCache(limit: 1 << 20)).values {
      let view = SortedGroupView(base: base, added: SortedKeySet(), removed: SortedKeySet())
      var walked = 0
      var previous: [UInt8]?
      try? view.walk(from: nil, to: nil) { key in
        precondition(previous.map { SortedKeyOrder.compare($0, Array(key)) < 0 } ?? true, "a sorted walk out of order")
        previous = Array(key)
        walked += 1
        return true
      }
      precondition(walked == view.count, "a sorted walk did not reach its count")
    }
    // Every lookup ends (an empty slot is always reached) inside the table's memory.
    for key in directory.allKeys { _ = directory[IndexKey(key)] }
    return directory.count
  }

  /// The plaintext of a slots page, `page` (its head and contents), with its slots changed by
  /// `change` in their 32-byte form (an unused one all zeros) and written again as a slots page
  /// holds them: what the seeds whose slots lie are made of. `page` is returned as it is when
  /// its slots do not expand.
  package static func changingSlots(_ page: Data, _ change: (inout [UInt8]) -> Void) -> Data {
    let head = CaskFormat.checkpointPageHeadLength
    guard page.count >= head else { return page }
    let count = Int(page[page.startIndex + 12]) | Int(page[page.startIndex + 13]) << 8
    var dense = [UInt8](repeating: 0, count: count * KeyTable.slotLength)
    let expanded = Array(page.dropFirst(head)).withUnsafeBytes { contents in
      dense.withUnsafeMutableBytes { CheckpointTableImage.expandSlots(contents, count: count, into: $0) }
    }
    guard expanded else { return page }
    change(&dense)
    return page.prefix(head) + dense.withUnsafeBytes { CheckpointTableImage.encodeSlots($0) }
  }

  /// The plaintexts of the checkpoint of a small directory (keys outside groups, in a group,
  /// longer than a slot holds, and in a sorted group, short and long, over three sorted pages
  /// and two chunks, the writer's limits lowered so that a handful of keys span them; one
  /// segment), the root's first: what the fuzz seeds seal.
  package static func checkpointPlaintexts(dataKeys: RNCryptor.Keys) throws -> [Data] {
    var directory = KeyDirectory(hashKey: KeyHashKey(k0: 1, k1: 2))
    var offset: UInt32 = 32
    for number in 0..<9 {
      let key =
        number % 3 == 0 ? "k\(number)" : number % 3 == 1 ? "users\u{0}\(number)" : "a-long-key-of-the-store-\(number)"
      directory.applyPut(IndexKey(key), at: RecordLocation(segment: 1, offset: offset, length: 100))
      offset += 100
    }
    for number in 0..<8 {
      // Short keys (in their slots) among long ones (in the chunks made from the sorted pages).
      let key = number % 3 == 0 ? "\u{1}idx\u{0}\(number)" : "\u{1}idx\u{0}text-\(number)\u{0}object-\(number)"
      directory.applyPut(IndexKey(key), at: RecordLocation(segment: 1, offset: 32, length: 0))
    }
    return try checkpointPlaintexts(
      of: directory, segmentLength: UInt64(offset), dataKeys: dataKeys,
      limits: Checkpoint.PageLimits(chunk: 80, sortedPage: 48))
  }

  /// The plaintexts of the checkpoint of `directory`, whose keys lie in segment 1 of
  /// `segmentLength` bytes, written with `limits`, the root's first; one tombstone.
  static func checkpointPlaintexts(
    of directory: KeyDirectory, segmentLength: UInt64, dataKeys: RNCryptor.Keys,
    limits: Checkpoint.PageLimits = Checkpoint.PageLimits()
  ) throws -> [Data] {
    let cipher = RecordCipher(keys: dataKeys, version: CaskFormat.boundRecordsVersion)
    let usage = directory.usage[1] ?? SegmentUsage()
    let checkpoint = Checkpoint(
      recordVersion: cipher.version, epoch: 0, identity: [UInt8](repeating: 7, count: 32), generation: 1,
      coveredSegment: 1, coveredOffset: segmentLength, lastSequence: UInt64(directory.count),
      keyCount: UInt64(directory.count), hashKey: directory.hashKey, tombstoneCount: 0,
      segments: [
        Checkpoint.SegmentEntry(
          id: 1, order: SegmentOrder(base: 1, sub: 0), epoch: 0, length: segmentLength,
          totalBytes: usage.totalBytes, deadBytes: usage.deadBytes)
      ], tables: [])
    var tombstones = HintEntries()
    IndexKey.withUTF8(of: "gone") { tombstones.append(isDelete: true, offset: 32, length: 60, key: $0) }
    let file = try checkpoint.encoded(
      directory: directory, tombstones: tombstones, cipher: cipher, limits: limits,
      nonce: Checkpoint.Nonce(first: 0x0706_0504_0302_0100, second: 0x0F0E_0D0C_0B0A_0908))
    let rootLength = Int(
      file.withUnsafeBytes { loadLittleEndian($0, at: CaskFormat.checkpointRootLengthOffset, as: UInt32.self) })
    var position = CaskFormat.checkpointHeadLength
    let root = try cipher.open(Data(file[position..<position + rootLength]), file: "", offset: 0)
    position += rootLength
    guard let parsed = root.withUnsafeBytes({ Checkpoint.decodeRoot($0) }) else {
      throw CaskError.corrupt(file: CaskFormat.checkpointFileName, offset: 0, reason: "seed root")
    }
    var plaintexts = [root]
    for page in parsed.pages {
      plaintexts.append(try cipher.open(Data(file[position..<position + Int(page.length)]), file: "", offset: 0))
      position += Int(page.length)
    }
    return plaintexts
  }
}
