import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A hint's group section tells open how many keys each table of the index gets, so that every
/// table is sized once. Its counts only size tables: a hint without one (written before it
/// existed) opens as before, and counts that lie change no answer and allocate within bounds.
@Suite("Hint group sections: tables sized once, counts never trusted")
struct HintGroupSizesTests {
  private static func options(readOnly: Bool = false) -> CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil, readOnly: readOnly)
    options.segmentSizeLimit = 64 * 1024
    return options
  }

  /// A store of two groups and plain keys over several segments, some keys deleted; returns
  /// what it should hold.
  private static func fill(_ path: String) throws -> [String: Data] {
    let store = try CaskStore(path: path, password: "pw", options: options())
    var expected: [String: Data] = [:]
    for index in 0..<600 {
      let key =
        switch index % 3 {
        case 0: "events\u{0}e\(index)"
        case 1: "\u{1}cask.index\u{1}city\u{0}City \(index % 7)\u{0}e\(index)"
        default: "plain-\(index)"
        }
      let value = Data(repeating: UInt8(index % 251), count: 200)
      try store.put(value, forKey: key)
      expected[key] = value
    }
    for index in stride(from: 0, to: 600, by: 11) {
      let key = index % 3 == 0 ? "events\u{0}e\(index)" : index % 3 == 2 ? "plain-\(index)" : nil
      if let key {
        try store.delete(key)
        expected[key] = nil
      }
    }
    try store.close()
    return expected
  }

  private static func hintNames(_ path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".hint") }.sorted()
  }

  private static func expectHolds(
    _ store: CaskStore, _ expected: [String: Data], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    #expect(store.stats().keys == expected.count, sourceLocation: sourceLocation)
    for (key, value) in expected {
      #expect(try store.get(key) == value, "\(key.debugDescription)", sourceLocation: sourceLocation)
    }
    let groups = Dictionary(grouping: expected.keys.compactMap { KeyDirectory.group(of: IndexKey($0))?.string }) { $0 }
    #expect(
      store.groups()
        == groups.map { CaskStore.GroupCount(group: $0.key, count: $0.value.count) }
        .sorted { $0.group.utf8.lexicographicallyPrecedes($1.group.utf8) }, sourceLocation: sourceLocation)
  }

  /// Rewrites every hint of the store at `path` with `transform` applied to its decoded form.
  private static func rewriteHints(
    _ path: String, cipher: RecordCipher, _ transform: (HintFile) throws -> [UInt8]
  ) throws {
    for name in try hintNames(path) {
      let file = "\(path)/\(name)"
      let hint = try HintFile.decode(try Data(contentsOf: URL(fileURLWithPath: file)), cipher: cipher, path: name)
      try Data(try transform(hint)).write(to: URL(fileURLWithPath: file))
    }
  }

  @Test("every table is sized once from the hints' group sections, which match their entries")
  func tablesSizedOnceFromGroupSections() throws {
    try withTemporaryDirectory("hint-groups") { directory throws in
      let path = directory.file("s.cask")
      let expected = try Self.fill(path)
      let names = try Self.hintNames(path)
      #expect(names.count > 2, "expected several segments, got hints \(names)")
      let probe = try CaskStore(path: path, password: "pw", options: Self.options())
      let cipher = probe.cipher
      try probe.close()

      var claimed: [HintSizes] = []
      for name in try Self.hintNames(path) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        #expect(Array(bytes.prefix(8)) == CaskFormat.hintMagicGrouped, "\(name)")
        let hint = try bytes.withUnsafeBytes { try HintPayload(file: $0, cipher: cipher, path: name) }
        #expect(hint.isGrouped)
        let sizes = bytes.prefix(HintPayload.sizingHeadLength).withUnsafeBytes {
          HintPayload.claimedSizes(head: $0, fileLength: UInt64(bytes.count), cipher: cipher)
        }
        // What the head claims is what the authenticated hint lists, and what its entries give.
        #expect(sizes == hint.sizes, "\(name)")
        var counter = GroupCounter()
        try hint.forEachEntry { isDelete, _, _, key in if !isDelete { counter.add(key) } }
        let counted = counter.sizes
        #expect(counted.ungrouped == hint.sizes.ungrouped, "\(name)")
        #expect(Set(counted.groups.map(\.name)) == Set(hint.sizes.groups.map(\.name)), "\(name)")
        for group in counted.groups {
          #expect(hint.sizes.groups.first { $0.name == group.name }?.puts == group.puts, "\(name)")
        }
        claimed.append(hint.sizes)
      }
      let total = HintSizes.total(claimed)
      let store = try CaskStore(path: path, password: "pw", options: Self.options())
      defer { try? store.close() }
      #expect(store.stats().recovery.segmentsFromHints == names.count)
      try Self.expectHolds(store, expected)
      // Sized once each: a table grown while indexing would have doubled past these.
      func slots(_ keys: Int) -> Int { (keys * 5 + 3) / 4 + 1 }
      store.state.withLock { state in
        #expect(state.directory.ungroupedCapacity == slots(total.ungrouped))
        for group in total.groups {
          let name = String(decoding: group.name, as: UTF8.self)
          #expect(state.directory.capacity(inGroup: name) == slots(group.puts), "\(name.debugDescription)")
        }
      }
    }
  }

  @Test("hints written before the group section existed open with every key, value and group")
  func hintsWithoutGroupSectionStillOpen() throws {
    try withTemporaryDirectory("hint-ungrouped") { directory throws in
      let path = directory.file("s.cask")
      let expected = try Self.fill(path)
      let probe = try CaskStore(path: path, password: "pw", options: Self.options())
      let cipher = probe.cipher
      try probe.close()
      try Self.rewriteHints(path, cipher: cipher) { try $0.encoded(cipher: cipher, grouped: false) }
      let names = try Self.hintNames(path)
      for name in names {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        #expect(Array(bytes.prefix(8)) == CaskFormat.hintMagic)
        // No group section: nothing to size with up front.
        #expect(
          bytes.prefix(HintPayload.sizingHeadLength).withUnsafeBytes {
            HintPayload.claimedSizes(head: $0, fileLength: UInt64(bytes.count), cipher: cipher)
          } == nil)
      }
      let reader = try CaskStore(path: path, password: "pw", options: Self.options(readOnly: true))
      #expect(reader.stats().recovery.segmentsFromHints == names.count)
      #expect(reader.stats().recovery.isClean)
      try Self.expectHolds(reader, expected)
      #expect(try reader.verify().isClean)
      try reader.close()
      // A read-only open leaves them as they are; a writable one rewrites them with a group
      // section (the last segment's too: a store closed cleanly keeps it until its next write).
      for name in names {
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)")).prefix(8)) == CaskFormat.hintMagic)
      }
      let writer = try CaskStore(path: path, password: "pw", options: Self.options())
      try Self.expectHolds(writer, expected)
      let rewritten = try Self.hintNames(path)
      #expect(Set(rewritten) == Set(names), "\(rewritten)")
      for name in rewritten {
        #expect(
          Array(try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)")).prefix(8)) == CaskFormat.hintMagicGrouped,
          "\(name)")
      }
      try writer.close()
      let again = try CaskStore(path: path, password: "pw", options: Self.options(readOnly: true))
      defer { try? again.close() }
      #expect(again.stats().recovery.segmentsFromHints == names.count)
      try Self.expectHolds(again, expected)
      #expect(try again.verify().isClean)
    }
  }

  @Test("a group section whose counts lie changes no answer and sizes no table past the file's bound")
  func lyingCountsAreBounded() throws {
    try withTemporaryDirectory("hint-lying") { directory throws in
      let path = directory.file("s.cask")
      let expected = try Self.fill(path)
      let probe = try CaskStore(path: path, password: "pw", options: Self.options())
      let cipher = probe.cipher
      try probe.close()
      // Authenticated hints whose sections claim the most of everything, name a group no key
      // is in, and give the real groups nothing.
      let lie = HintSizes(
        ungrouped: Int(UInt32.max),
        groups: [
          HintSizes.Group(name: Array("ghost".utf8), puts: Int(UInt32.max)),
          HintSizes.Group(name: Array("events".utf8), puts: 0),
        ])
      try Self.rewriteHints(path, cipher: cipher) { try $0.encoded(cipher: cipher, section: lie) }
      var bound = 0
      for name in try Self.hintNames(path) {
        let size = try FileDamage.size(of: "\(path)/\(name)")
        bound += (size - 8 - 18 - 32 - CaskFormat.hintPayloadHeaderLength) / (CaskFormat.hintEntryFixedLength + 1)
      }
      let store = try CaskStore(path: path, password: "pw", options: Self.options())
      defer { try? store.close() }
      try Self.expectHolds(store, expected)
      #expect(!store.groups().contains { $0.group == "ghost" })
      store.state.withLock { state in
        #expect(state.directory.ungroupedCapacity <= (bound * 5 + 3) / 4 + 1)
        #expect(state.directory.capacity(inGroup: "ghost") == 0)
      }
    }
  }
}
