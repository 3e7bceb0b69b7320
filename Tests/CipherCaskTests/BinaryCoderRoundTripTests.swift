import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Every shape Codable can express reads back from `BinaryCaskCoder` equal to what was written:
/// seeded random values (seed printed, `CASK_TEST_SEED` replays, `CASK_TEST_ITERATIONS` makes
/// the run longer).
@Suite("BinaryCaskCoder round trips")
struct BinaryCoderRoundTripTests {
  let coder = BinaryCaskCoder()

  private func roundTrip<T: Codable>(_ value: T) throws -> T {
    try coder.decode(T.self, from: coder.encode(value))
  }

  @Test("random values of every shape read back equal, as objects and in a collection")
  func everyShapeRoundTrips() throws {
    var values = CodedValues(random: SeededRandom.make(test: "everyShapeRoundTrips"))
    for _ in 0..<testIterations(300) {
      let value = values.everything()
      let data = try coder.encode(value)
      #expect(data.first == 0xC1)
      let back = try coder.decode(CodedEverything.self, from: data)
      #expect(back == value)
      // Bit for bit, where == would let a difference through.
      #expect(
        back.date.timeIntervalSinceReferenceDate.bitPattern == value.date.timeIntervalSinceReferenceDate.bitPattern)
      #expect(back.double.bitPattern == value.double.bitPattern)
      #expect(back.float.bitPattern == value.float.bitPattern)
      // Encoding is deterministic for the same value (sets and dictionaries aside).
      var plain = value
      plain.set = []
      plain.stringKeys = [:]
      plain.intKeys = [:]
      plain.uuidKeys = [:]
      plain.colorKeys = [:]
      plain.nested = [:]
      #expect(try coder.encode(plain) == coder.encode(roundTrip(plain)))
    }
  }

  /// Strings through a plain unkeyed container, as `Array.encode(to:)` would write them.
  private struct ElementByElement: Codable {
    var items: [String]

    init(_ items: [String]) { self.items = items }

    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      items = []
      while !container.isAtEnd { items.append(try container.decode(String.self)) }
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.unkeyedContainer()
      for item in items { try container.encode(item) }
    }
  }

  @Test("a list of strings written directly has the bytes an element-by-element container writes, at each varint step")
  func stringListsMatchTheGenericLayout() throws {
    // Lengths where a varint gains a byte: strings of 127 and 128 bytes (with two-byte
    // characters), bodies of 127, 128, 16,383 and 16,384 bytes, and the empty list.
    var lists: [[String]] = [[], [""], [String(repeating: "a", count: 127)], [String(repeating: "é", count: 64)]]
    func varintLength(_ value: Int) -> Int { value < 128 ? 1 : value < 16_384 ? 2 : 3 }
    for total in [127, 128, 16_383, 16_384] {
      // Strings of 1 + 1 + 9 bytes, then one whose length makes the body exactly `total`.
      var list = Array(repeating: "é" + String(repeating: "x", count: 7), count: max(0, total - 300) / 11)
      let count = list.count + 1
      let need = total - varintLength(count) - 11 * list.count
      let last = try #require((need - 3...need - 1).first { 1 + varintLength($0) + $0 == need })
      list.append(String(repeating: "z", count: last))
      lists.append(list)
    }
    for list in lists {
      let direct = try coder.encode(list)
      #expect(direct == (try coder.encode(ElementByElement(list))), "\(list.count) strings")
      #expect(try coder.decode([String].self, from: direct) == list)
      #expect(try coder.decode(ElementByElement.self, from: direct).items == list)
    }
  }

  /// A value that keeps its parent's container and writes into it from its own `encode(to:)`.
  private final class Intruder: Encodable, @unchecked Sendable {
    var parent: KeyedEncodingContainer<Smuggling.CodingKeys>?

    func encode(to encoder: any Encoder) throws {
      try parent?.encode(1, forKey: .extra)
      var container = encoder.singleValueContainer()
      try container.encode([2])
    }
  }

  private struct Smuggling: Encodable {
    enum CodingKeys: String, CodingKey { case inner, extra }
    let inner = Intruder()

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      inner.parent = container
      try container.encode(inner, forKey: .inner)
    }
  }

  @Test("a value writing into its enclosing container while encoding itself is an EncodingError, not a damaged object")
  func writingIntoTheParentWhileEncodingThrows() {
    #expect(throws: EncodingError.self) { try coder.encode(Smuggling()) }
  }

  @Test("the worked example of Docs/FORMAT.md encodes byte for byte")
  func formatWorkedExample() throws {
    struct Item: Codable, Equatable {
      var id = "a1"
      var count = -3
      var tags = ["x"]
    }
    let expected: [UInt8] = [
      0xC1, 0x01, 0x08, 0x1A, 0x02, 0x69, 0x64, 0x07, 0x02, 0x61, 0x31, 0x05, 0x63, 0x6F, 0x75, 0x6E, 0x74, 0x03, 0x05,
      0x04, 0x74, 0x61, 0x67, 0x73, 0x09, 0x04, 0x01, 0x07, 0x01, 0x78,
    ]
    #expect([UInt8](try coder.encode(Item())) == expected)
    #expect(try coder.decode(Item.self, from: Data(expected)) == Item())
  }

  @Test("dates read back to the bit: NaN payloads, infinities, -0 and subnormals")
  func datesKeepEveryBit() throws {
    var random = SeededRandom.make(test: "datesKeepEveryBit")
    let specials: [UInt64] = [
      Double.nan.bitPattern, Double.signalingNaN.bitPattern, 0x7FF8_0000_DEAD_BEEF, Double.infinity.bitPattern,
      (-Double.infinity).bitPattern, (-0.0 as Double).bitPattern, 1, Double.greatestFiniteMagnitude.bitPattern,
    ]
    for bits in specials + (0..<testIterations(500)).map({ _ in random.next() }) {
      let date = Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
      let back = try roundTrip(date)
      #expect(back.timeIntervalSinceReferenceDate.bitPattern == bits)
      let wrapped = try roundTrip(["at": date])
      #expect(wrapped["at"]?.timeIntervalSinceReferenceDate.bitPattern == bits)
    }
  }

  @Test("integers of every width keep their value at the edges")
  func integersAtTheirEdges() throws {
    #expect(try roundTrip([Int8.min, .max, 0, -1]) == [Int8.min, .max, 0, -1])
    #expect(try roundTrip([Int16.min, .max]) == [Int16.min, .max])
    #expect(try roundTrip([Int32.min, .max]) == [Int32.min, .max])
    #expect(try roundTrip([Int64.min, .max, -1]) == [Int64.min, .max, -1])
    #expect(try roundTrip([Int.min, .max]) == [Int.min, .max])
    #expect(try roundTrip([UInt8.max, 0]) == [UInt8.max, 0])
    #expect(try roundTrip([UInt16.max]) == [UInt16.max])
    #expect(try roundTrip([UInt32.max]) == [UInt32.max])
    #expect(try roundTrip([UInt64.max, 1 << 63]) == [UInt64.max, 1 << 63])
    #expect(try roundTrip([UInt.max]) == [UInt.max])
  }

  @Test("top-level values of every kind round-trip")
  func topLevelValues() throws {
    #expect(try roundTrip(42) == 42)
    #expect(try roundTrip("text") == "text")
    #expect(try roundTrip(Optional<Int>.none) == nil)
    #expect(try roundTrip(Optional(7)) == 7)
    #expect(try roundTrip([String]()) == [])
    #expect(try roundTrip(Data()) == Data())
    #expect(try roundTrip(Data([0, 0xC1, 0xFF])) == Data([0, 0xC1, 0xFF]))
    #expect(try roundTrip(CodedShape.point) == .point)
    #expect(
      try roundTrip(Decimal(string: "-12345678901234567890.123456789")!) == Decimal(
        string: "-12345678901234567890.123456789")!)
    let uuid = UUID()
    #expect(try roundTrip(uuid) == uuid)
    #expect(try roundTrip(URL(string: "file:///tmp/a%20b")!) == URL(string: "file:///tmp/a%20b")!)
    #expect(try roundTrip([[Int?]]([[1, nil], [], [nil]])) == [[1, nil], [], [nil]])
  }

  @Test("a subclass sharing its superclass's container round-trips")
  func classHierarchyRoundTrips() throws {
    let back = try roundTrip(CodedDog(name: "Rex", goodBoy: true))
    #expect(back.name == "Rex")
    #expect(back.goodBoy)
  }

  @Test("objects saved in a collection with the binary coder read back equal")
  func collectionRoundTrip() throws {
    struct Item: Codable, Identifiable, Sendable, Equatable {
      var id: Int
      var everything: CodedEverything
    }
    var values = CodedValues(random: SeededRandom.make(test: "collectionRoundTrip"))
    try withStore("binary-roundtrip") { store throws in
      let items = store.collection(Item.self, named: "items", coder: BinaryCaskCoder())
      let saved = (0..<testIterations(40)).map { Item(id: $0, everything: values.everything()) }
      try items.save(contentsOf: saved)
      #expect(try items.all().sorted { $0.id < $1.id } == saved)
      #expect(try items.get(id: 0) == saved[0])
    }
  }
}
