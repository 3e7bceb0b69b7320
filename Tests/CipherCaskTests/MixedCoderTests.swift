import CaskTestSupport
import CipherCask
import Foundation
import Testing

// MARK: Guide: stores written with JSON need no migration

func convertToBinary(_ store: CaskStore) throws {
  let members = store.collection(Member.self, named: "members", coder: BinaryCaskCoder())
  try members.save(contentsOf: members.all())
}

/// One collection holds JSON objects (from `JSONCaskCoder`, or raw JSON as `cask import`
/// writes it) and binary ones side by side: both coders read both, told apart by the first
/// byte, so a store moves to the binary coder without a migration, object by object as each is
/// saved again.
@Suite("JSON and binary objects in one collection")
struct MixedCoderTests {
  /// The first byte of the stored object under `id`.
  private func firstByte(_ collection: CaskCollection<Counter>, _ id: Int) throws -> UInt8? {
    try collection.store.get(collection.storageKey(for: id))?.first
  }

  @Test("objects saved with JSON read with the binary coder, and re-saved ones turn binary")
  func jsonStoreMovesToBinaryLazily() throws {
    try withStore("mixed-lazy") { store throws in
      let json = store.collection(Counter.self, named: "counters", coder: JSONCaskCoder())
      let saved = (1...6).map { Counter(id: $0, value: $0 * 10, label: "n\($0)") }
      try json.save(contentsOf: saved)
      #expect(try firstByte(json, 1) == UInt8(ascii: "{"))

      let binary = store.collection(Counter.self, named: "counters", coder: BinaryCaskCoder())
      #expect(try binary.all().sorted { $0.id < $1.id } == saved)
      try binary.update(id: 2) { $0.value += 1 }
      try binary.save(Counter(id: 7, value: 70))
      #expect(try firstByte(binary, 2) == 0xC1)
      #expect(try firstByte(binary, 7) == 0xC1)
      #expect(try firstByte(binary, 3) == UInt8(ascii: "{"))

      // Both coders read the mix: every object, whichever wrote it.
      var expected = saved + [Counter(id: 7, value: 70)]
      expected[1].value += 1
      for reader in [json, binary] {
        #expect(try reader.all().sorted { $0.id < $1.id } == expected)
        #expect(try reader.get(id: 2) == expected[1])
        #expect(try reader.get(id: 3) == expected[2])
      }
    }
  }

  @Test("the guide's conversion turns every JSON object of a collection binary, unchanged")
  func guideConversion() throws {
    try withStore("mixed-convert") { store throws in
      let json = store.collection(Member.self, named: "members", coder: JSONCaskCoder())
      try json.save(contentsOf: [
        Member(id: "m1", name: "Ann", city: "Amsterdam"), Member(id: "m2", name: "Bob", city: "Utrecht"),
      ])
      try convertToBinary(store)
      let members = store.collection(Member.self, named: "members", coder: BinaryCaskCoder())
      for id in ["m1", "m2"] {
        #expect(try store.get(members.storageKey(for: id))?.first == 0xC1)
      }
      #expect(try members.get(id: "m2")?.city == "Utrecht")
      #expect(try json.get(id: "m1")?.name == "Ann")
    }
  }

  @Test("raw JSON as cask import writes it (leading whitespace too) reads with the binary coder")
  func importedJSONReadsWithBinary() throws {
    try withStore("mixed-import") { store throws in
      let binary = store.collection(Counter.self, named: "counters", coder: BinaryCaskCoder())
      try store.put(Data(#"  {"id":1,"value":5,"label":"raw"}"#.utf8), forKey: binary.storageKey(for: 1))
      try binary.importJSON(Data(#"[{"id":2,"value":6,"label":"imported"}]"#.utf8))
      #expect(try binary.get(id: 1) == Counter(id: 1, value: 5, label: "raw"))
      #expect(try binary.get(id: 2) == Counter(id: 2, value: 6, label: "imported"))
      #expect(try firstByte(binary, 2) == 0xC1)
    }
  }

  @Test("JSON damage read through the binary coder is still CollectionError.decoding")
  func damagedJSONThroughBinary() throws {
    try withStore("mixed-damage") { store throws in
      let binary = store.collection(Counter.self, named: "counters", coder: BinaryCaskCoder())
      try store.put(Data(#"{"id":1,"val"#.utf8), forKey: binary.storageKey(for: 1))
      #expect(throws: CollectionError.decoding(collection: "counters", id: "1", underlying: CancellationError())) {
        try binary.get(id: 1)
      }
    }
  }
}
