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

  /// The file made of `plaintexts` (the root's first), each sealed under `keys`, the root's
  /// page references set to the sealed pages.
  static func assemble(_ plaintexts: [Data]) throws -> Data {
    let cipher = RecordCipher(keys: keys, version: CaskFormat.boundRecordsVersion)
    var root = plaintexts[0]
    let pages = try plaintexts.dropFirst().map { try cipher.seal($0) }
    var at = root.endIndex - CaskFormat.checkpointPageRefLength * pages.count
    for page in pages {
      withUnsafeBytes(of: UInt32(page.count).littleEndian) { root.replaceSubrange(at..<at + 4, with: $0) }
      root.replaceSubrange(at + 4..<at + 36, with: page.suffix(32))
      at += 36
    }
    let sealedRoot = try cipher.seal(root)
    var file = Data(CaskFormat.checkpointMagic)
    withUnsafeBytes(of: UInt32(sealedRoot.count).littleEndian) { file.append(contentsOf: $0) }
    file.append(sealedRoot)
    for page in pages { file.append(page) }
    return file
  }

  @Test("a true checkpoint loads every key")
  func truth() throws {
    let plaintexts = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == 640)
  }

  @Test("an authentic sorted page whose first key is not the root's, or whose keys are cut short, is refused")
  func sortedPageIncoherent() throws {
    let plaintexts = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let sorted = plaintexts.indices.dropFirst().filter { plaintexts[$0][1] == CaskFormat.checkpointPageSorted }
    #expect(sorted.count == 2)
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
    let used = stride(from: 16, to: truth[1].count, by: 32).first { truth[1][$0 + 28] & 31 != 0 }
    outside[1][try #require(used) + 23] = 0x7F
    var longKey = truth
    let slot = stride(from: 16, to: truth[1].count, by: 32).first { truth[1][$0 + 28] & 31 == 31 }
    longKey[1][try #require(slot) + 4] = 0x40
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
      let used = stride(from: 16, to: page.count, by: 32).filter { page[$0 + 28] & 31 != 0 && page[$0 + 28] & 31 != 31 }
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
    otherGroup[grouped.page][grouped.slot] &+= 1
    // Table 0 holds the keys without a group: "kN" becomes "k\0" + one byte.
    let ungrouped = try #require(Self.secondInlineSlot(ofTable: 0, in: truth))
    var separator = truth
    separator[ungrouped.page][ungrouped.slot + 1] = CaskFormat.keyGroupSeparator
    for plaintexts in [otherGroup, separator] {
      #expect(FuzzingEntry.readCheckpoint(try Self.assemble(plaintexts), dataKeys: Self.keys) == nil)
    }
  }

  @Test("a long key in a chunk that is not of its table's group is refused when a walk hands it out")
  func longKeyOutsideItsGroup() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    // Table 0's first chunk starts with "a-long-key-of-the-store-2": "a\0long-…" is a key of
    // the group "a", which a table of keys without a group must not hold.
    let chunk = try #require(
      truth.indices.dropFirst().first { truth[$0][1] == CaskFormat.checkpointPageChunk && truth[$0][8] == 0 })
    var separator = truth
    #expect(separator[chunk][CaskFormat.checkpointPageHeadLength + 1] == UInt8(ascii: "-"))
    separator[chunk][CaskFormat.checkpointPageHeadLength + 1] = CaskFormat.keyGroupSeparator
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(separator), dataKeys: Self.keys) == nil)
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(truth), dataKeys: Self.keys) == 640)
  }

  /// A used inline slot of table `table`'s first slots page followed by two empty slots:
  /// its page and the slot's byte offset in it.
  static func inlineSlotBeforeTwoEmpty(ofTable table: UInt8, in plaintexts: [Data]) -> (page: Int, slot: Int)? {
    for (index, page) in plaintexts.enumerated().dropFirst()
    where page[1] == CaskFormat.checkpointPageSlots && page[8] == table {
      let tag = { (slot: Int) in slot + 32 < page.count ? page[slot + 28] & 31 : 0 }
      let slot = stride(from: 16, to: page.count - 96, by: 32).first { slot in
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
    otherHash[grouped.page][grouped.slot + 31] ^= 0x40
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(otherHash), dataKeys: Self.keys) == nil)
  }

  @Test("a key that no probe reaches, behind an empty slot, or held in a second slot, is refused")
  func keyOffItsProbePath() throws {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: Self.keys)
    let place = try #require(Self.inlineSlotBeforeTwoEmpty(ofTable: 0, in: truth))
    let slot = truth[place.page][place.slot..<place.slot + 32]
    // Moved two slots on: the slot it left is empty, so a probe from its home stops there.
    var moved = truth
    moved[place.page].replaceSubrange(place.slot + 64..<place.slot + 96, with: slot)
    moved[place.page].replaceSubrange(place.slot..<place.slot + 32, with: Data(count: 32))
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(moved), dataKeys: Self.keys) == nil)
    // Copied into the next slot, the root counting it: the table holds the key twice.
    var twice = truth
    twice[place.page].replaceSubrange(place.slot + 32..<place.slot + 64, with: slot)
    twice[0][CaskFormat.checkpointRootFixedLength + CaskFormat.checkpointSegmentLength + 8] &+= 1
    twice[0][72] &+= 1
    #expect(FuzzingEntry.readCheckpoint(try Self.assemble(twice), dataKeys: Self.keys) == nil)
  }
}
