import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// The checkpoint reader refuses an authentic checkpoint whose tables could not have been
/// written by the engine: the checks behind the HMACs, which the fuzz target reaches by
/// sealing its mutations, shown to catch a table that lies.
@Suite("Checkpoint reader: authentic but incoherent tables are refused")
struct CheckpointReaderTests {
  static let keys = CheckpointFixture.keys
  /// The keys of the directory whose checkpoint the fuzz seeds hold
  /// (`FuzzingEntry.checkpointPlaintexts`): nine outside the sorted group, eight in it.
  static let seedKeys = 17

  /// The file made of `plaintexts` (the root's first), each sealed under `keys`, the root's
  /// page references set to the sealed pages' lengths.
  static func assemble(_ plaintexts: [Data]) throws -> Data {
    let cipher = RecordCipher(keys: keys, version: CaskFormat.boundRecordsVersion)
    var root = plaintexts[0]
    let pages = try plaintexts.dropFirst().map { try cipher.seal($0) }
    var at = root.endIndex - CaskFormat.checkpointPageRefLength * pages.count
    for page in pages {
      withUnsafeBytes(of: UInt32(page.count).littleEndian) { root.replaceSubrange(at..<at + 4, with: $0) }
      at += CaskFormat.checkpointPageRefLength
    }
    let sealedRoot = try cipher.seal(root)
    var file = Data(CaskFormat.checkpointMagic)
    withUnsafeBytes(of: UInt32(sealedRoot.count).littleEndian) { file.append(contentsOf: $0) }
    file.append(sealedRoot)
    for page in pages { file.append(page) }
    return file
  }

  /// A slots page's slots, 32 bytes each as the table holds them (an unused one all zeros).
  static func denseSlots(_ page: Data) -> [UInt8] {
    let count = Int(page[page.startIndex + 12]) | Int(page[page.startIndex + 13]) << 8
    var dense = [UInt8](repeating: 0, count: count * CaskFormat.checkpointSlotLength)
    let expanded = Array(page.dropFirst(CaskFormat.checkpointPageHeadLength)).withUnsafeBytes { contents in
      dense.withUnsafeMutableBytes { CheckpointTableImage.expandSlots(contents, count: count, into: $0) }
    }
    precondition(expanded, "a slots page the engine wrote does not expand")
    return dense
  }

  /// The slots page `page` with its slots changed by `change` (on their 32-byte form).
  static func changingSlots(_ page: Data, _ change: (inout [UInt8]) -> Void) -> Data {
    FuzzingEntry.changingSlots(page, change)
  }

  /// Where each used slot starts among a slots page's 32-byte slots.
  static func usedSlots(in page: Data) -> [Int] {
    let dense = denseSlots(page)
    return stride(from: 0, to: dense.count, by: CaskFormat.checkpointSlotLength).filter { dense[$0 + 28] & 31 != 0 }
  }

  @Test("a true checkpoint loads every key")
  func truth() throws {
    let plaintexts = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == Self.seedKeys)
  }

  @Test("an authentic sorted page whose first key is not the root's, or whose keys are cut short, is refused")
  func sortedPageIncoherent() throws {
    let plaintexts = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let sorted = plaintexts.indices.dropFirst().filter { plaintexts[$0][1] == CaskFormat.checkpointPageSorted }
    #expect(sorted.count == 3)
    let first = try #require(sorted.first)
    var otherFirstKey = plaintexts
    otherFirstKey[first][CaskFormat.checkpointPageHeadLength + CaskFormat.checkpointSortedKeyHeadLength] &+= 1
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(otherFirstKey), dataKeys: Self.keys) == nil)
    var cutShort = plaintexts
    cutShort[first].removeLast(3)
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(cutShort), dataKeys: Self.keys) == nil)
  }

  @Test("a table claiming a key more than its slots hold")
  func countTooHigh() throws {
    var plaintexts = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    plaintexts[0][CaskFormat.checkpointRootFixedLength + CaskFormat.checkpointSegmentLength + 8] &+= 1
    plaintexts[0][72] &+= 1
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == nil)
  }

  @Test("a slot pointing past its segment, and a long key past its chunk")
  func slotsOutside() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    var outside = truth
    let used = try #require(Self.usedSlots(in: truth[1]).first)
    outside[1] = Self.changingSlots(truth[1]) { $0[used + 23] = 0x7F }
    var longKey = truth
    let dense = Self.denseSlots(truth[1])
    let slot = try #require(Self.usedSlots(in: truth[1]).first { dense[$0 + 28] & 31 == 31 })
    longKey[1] = Self.changingSlots(truth[1]) { $0[slot + 4] = 0x40 }
    for plaintexts in [outside, longKey] {
      let loaded = FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys)
      #expect(loaded == nil)
    }
  }

  /// The second used inline slot of table `table`'s first slots page: past the first, which
  /// the sampled hash check covers, so only the group check can refuse a change to it.
  static func secondInlineSlot(ofTable table: UInt8, in plaintexts: [Data]) -> (page: Int, slot: Int)? {
    for (index, page) in plaintexts.enumerated().dropFirst()
    where page[1] == CaskFormat.checkpointPageSlots && page[8] == table {
      let dense = denseSlots(page)
      let used = usedSlots(in: page).filter { dense[$0 + 28] & 31 != 31 }
      if used.count >= 2 { return (index, used[1]) }
    }
    return nil
  }

  @Test("a key in a group's table that is not of the group, and a grouped key among the keys without a group")
  func keyOutsideItsGroup() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    // Table 1 is the group "users": "users\0N" becomes "vsers\0N".
    let grouped = try #require(Self.secondInlineSlot(ofTable: 1, in: truth))
    var otherGroup = truth
    otherGroup[grouped.page] = Self.changingSlots(truth[grouped.page]) { $0[grouped.slot] &+= 1 }
    // Table 0 holds the keys without a group: "kN" becomes "k\0" + one byte.
    let ungrouped = try #require(Self.secondInlineSlot(ofTable: 0, in: truth))
    var separator = truth
    separator[ungrouped.page] = Self.changingSlots(truth[ungrouped.page]) {
      $0[ungrouped.slot + 1] = CaskFormat.keyGroupSeparator
    }
    for plaintexts in [otherGroup, separator] {
      #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == nil)
    }
  }

  @Test("a long key in a chunk that is not of its table's group is refused when a walk hands it out")
  func longKeyOutsideItsGroup() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    // Table 0's first chunk starts with "a-long-key-of-the-store-2" (in byte order, after the
    // 4 bytes of its shared and rest lengths): "a\0long-…" is a key of the group "a", which a
    // table of keys without a group must not hold.
    let chunk = try #require(
      truth.indices.dropFirst().first { truth[$0][1] == CaskFormat.checkpointPageChunk && truth[$0][8] == 0 })
    let second = CaskFormat.checkpointPageHeadLength + CaskFormat.checkpointSortedKeyHeadLength + 1
    var separator = truth
    #expect(separator[chunk][second] == UInt8(ascii: "-"))
    separator[chunk][second] = CaskFormat.keyGroupSeparator
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(separator), dataKeys: Self.keys) == nil)
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(truth), dataKeys: Self.keys) == Self.seedKeys)
  }

  /// A used inline slot of table `table`'s first slots page followed by two empty slots:
  /// its page and the slot's byte offset among the page's 32-byte slots.
  static func inlineSlotBeforeTwoEmpty(ofTable table: UInt8, in plaintexts: [Data]) -> (page: Int, slot: Int)? {
    for (index, page) in plaintexts.enumerated().dropFirst()
    where page[1] == CaskFormat.checkpointPageSlots && page[8] == table {
      let dense = denseSlots(page)
      let tag = { (slot: Int) in slot + 32 < dense.count ? dense[slot + 28] & 31 : 0 }
      let slot = stride(from: 0, to: dense.count - 96, by: 32).first { slot in
        tag(slot) != 0 && tag(slot) != 31 && tag(slot + 32) == 0 && tag(slot + 64) == 0
      }
      if let slot { return (index, slot) }
    }
    return nil
  }

  @Test("an inline key whose meta word is not its own hash is refused, whichever slot holds it")
  func inlineKeyWithAnotherHash() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let grouped = try #require(Self.secondInlineSlot(ofTable: 1, in: truth))
    var otherHash = truth
    // The meta word's top byte: hash bits only (the tag is its low 5 bits).
    otherHash[grouped.page] = Self.changingSlots(truth[grouped.page]) { $0[grouped.slot + 31] ^= 0x40 }
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(otherHash), dataKeys: Self.keys) == nil)
  }

  @Test("a key that no probe reaches, behind an empty slot, or held in a second slot, is refused")
  func keyOffItsProbePath() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let place = try #require(Self.inlineSlotBeforeTwoEmpty(ofTable: 0, in: truth))
    let slot = Self.denseSlots(truth[place.page])[place.slot..<place.slot + 32]
    // Moved two slots on: the slot it left is empty, so a probe from its home stops there.
    var moved = truth
    moved[place.page] = Self.changingSlots(truth[place.page]) {
      $0.replaceSubrange(place.slot + 64..<place.slot + 96, with: slot)
      $0.replaceSubrange(place.slot..<place.slot + 32, with: [UInt8](repeating: 0, count: 32))
    }
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(moved), dataKeys: Self.keys) == nil)
    // Copied into the next slot, the root counting it: the table holds the key twice.
    var twice = truth
    twice[place.page] = Self.changingSlots(truth[place.page]) {
      $0.replaceSubrange(place.slot + 32..<place.slot + 64, with: slot)
    }
    twice[0][CaskFormat.checkpointRootFixedLength + CaskFormat.checkpointSegmentLength + 8] &+= 1
    twice[0][72] &+= 1
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(twice), dataKeys: Self.keys) == nil)
  }
}

extension CheckpointReaderTests {
  @Test("a slots page whose bitmap names a slot it does not hold, or a slot past the page, is refused")
  func slotsPageBitmapIncoherent() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let head = CaskFormat.checkpointPageHeadLength
    // A used slot more in the bitmap than the page holds.
    let unused = try #require((0..<16).first { truth[1][head + $0 / 8] & (1 << UInt8($0 % 8)) == 0 })
    var oneMore = truth
    oneMore[1][head + unused / 8] |= 1 << UInt8(unused % 8)
    // One slot fewer than the page holds: the last used slot's bit cleared.
    let used = try #require((0..<16).last { truth[1][head + $0 / 8] & (1 << UInt8($0 % 8)) != 0 })
    var oneFewer = truth
    oneFewer[1][head + used / 8] &= ~(1 << UInt8(used % 8))
    for plaintexts in [oneMore, oneFewer] {
      #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == nil)
    }
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(truth), dataKeys: Self.keys) == Self.seedKeys)
  }

  @Test("a chunk page whose key shares more than the key before it, or that fills its chunk short, is refused")
  func chunkPageIncoherent() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let chunk = try #require(
      truth.indices.dropFirst().first { truth[$0][1] == CaskFormat.checkpointPageChunk && truth[$0][8] == 0 })
    let head = CaskFormat.checkpointPageHeadLength
    // The first key shares bytes with no key before it.
    var sharesTooMuch = truth
    sharesTooMuch[chunk][head] = 1
    // The last key's last byte cut: the keys fill the chunk one byte short.
    var short = truth
    short[chunk].removeLast()
    for plaintexts in [sharesTooMuch, short] {
      #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == nil)
    }
  }

  @Test("the root's segment lengths give each listed id's first entry and nothing for an id it does not list")
  func segmentLengthsByID() {
    func entry(_ id: UInt32, _ length: UInt64) -> Checkpoint.SegmentEntry {
      Checkpoint.SegmentEntry(
        id: id, order: SegmentOrder(base: id, sub: 0), epoch: 0, length: length, totalBytes: 0, deadBytes: 0)
    }
    let lengths = SegmentLengths([entry(9, 900), entry(2, 200), entry(9, 1), entry(5, 500)])
    #expect(lengths[2] == 200)
    #expect(lengths[5] == 500)
    #expect(lengths[9] == 900)
    for missing: UInt32 in [0, 3, 6, 10, .max] { #expect(lengths[missing] == nil) }
    #expect(SegmentLengths([])[1] == nil)
  }
}
