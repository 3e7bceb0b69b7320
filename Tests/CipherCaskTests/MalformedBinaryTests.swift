import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Damaged binary objects fail with a typed `DecodingError` (`.dataCorrupted` for damage),
/// wrapped in `CollectionError.decoding` by a collection: never a crash, never a large allocation,
/// never a silently different value.
@Suite("Malformed binary objects")
struct MalformedBinaryTests {
  let coder = BinaryCaskCoder()

  struct Wide: Codable { var value: Int }
  struct Narrow: Codable { var value: Int8 }
  struct Unsigned: Codable { var value: UInt32 }
  struct Text: Codable { var value: String }

  /// A chain as deep as it is long: each link nests two containers.
  indirect enum Chain: Codable {
    case end
    case link(Chain)

    static func of(length: Int) -> Chain { (0..<length).reduce(.end) { chain, _ in .link(chain) } }
  }

  /// The fields `Decimal` encodes itself with, so their values can be out of its range.
  struct DecimalFields: Codable {
    var exponent: Int32
    var length: UInt32
    var isNegative: Bool
    var isCompact: Bool
    var mantissa: [UInt16]
  }

  private func isDataCorrupted(_ error: any Error) -> Bool {
    if case DecodingError.dataCorrupted = error { return true }
    return false
  }

  /// Decodes `bytes` as `T`, which must fail with `.dataCorrupted`.
  private func expectCorrupted<T: Decodable>(
    _ type: T.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    do {
      _ = try coder.decode(type, from: Data(bytes))
      Issue.record("decoded damaged bytes \(bytes.prefix(16)) as \(type)", sourceLocation: sourceLocation)
    } catch {
      #expect(isDataCorrupted(error), "\(error)", sourceLocation: sourceLocation)
    }
  }

  @Test("every truncation of a valid object is dataCorrupted")
  func truncationsAreDataCorrupted() throws {
    var values = CodedValues(random: SeededRandom.make(test: "truncationsAreDataCorrupted"))
    for _ in 0..<testIterations(5) {
      let bytes = [UInt8](try coder.encode(values.everything()))
      for count in 1..<bytes.count { expectCorrupted(CodedEverything.self, Array(bytes.prefix(count))) }
    }
  }

  @Test("random damage throws a DecodingError or reads a value, never crashes")
  func randomDamageIsTyped() throws {
    var values = CodedValues(random: SeededRandom.make(test: "randomDamageIsTyped"))
    for _ in 0..<testIterations(200) {
      var bytes = [UInt8](try coder.encode(values.everything()))
      for _ in 0..<Int.random(in: 1...4, using: &values.random) {
        let index = Int.random(in: 2..<bytes.count, using: &values.random)
        bytes[index] = UInt8.random(in: 0...255, using: &values.random)
      }
      do {
        _ = try coder.decode(CodedEverything.self, from: Data(bytes))
      } catch {
        #expect(error is DecodingError, "\(error)")
      }
    }
  }

  @Test("a length or count beyond the bytes left is dataCorrupted before anything is allocated")
  func hugeLengthsAreRefused() {
    // An array claiming 2^35 bytes, then 2^35 elements in a small body; a string claiming 2^62.
    expectCorrupted([Int].self, [0xC1, 0x01, 0x09, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00])
    expectCorrupted([Int].self, [0xC1, 0x01, 0x09, 0x06, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])
    expectCorrupted(String.self, [0xC1, 0x01, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40])
    expectCorrupted(Data.self, [0xC1, 0x01, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00])
  }

  @Test("a varint longer than 64 bits, an unknown kind, version or trailing bytes are dataCorrupted")
  func malformedStructure() {
    expectCorrupted(UInt64.self, [0xC1, 0x01, 0x04] + Array(repeating: 0xFF, count: 10) + [0x01])
    expectCorrupted(UInt64.self, [0xC1, 0x01, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02])
    expectCorrupted(Int.self, [0xC1, 0x01, 0x7F])
    expectCorrupted(Int.self, [0xC1, 0x02, 0x03, 0x02])
    expectCorrupted(Int.self, [0xC1, 0x01, 0x03, 0x02, 0x00])
    expectCorrupted(Int.self, [0xC1])
    expectCorrupted(Int.self, [0xC1, 0x01])
    // A keyed entry whose value runs past its container.
    expectCorrupted(Wide.self, [0xC1, 0x01, 0x08, 0x07, 0x05] + Array("value".utf8) + [0x07, 0x05])
  }

  @Test("an integer out of its type's range is dataCorrupted, not truncated")
  func integersOutOfRange() throws {
    let big = try coder.encode(Wide(value: 300))
    #expect(throws: DecodingError.self) { try coder.decode(Narrow.self, from: big) }
    do {
      _ = try coder.decode(Narrow.self, from: big)
    } catch {
      #expect(isDataCorrupted(error))
    }
    let negative = try coder.encode(Wide(value: -1))
    do {
      _ = try coder.decode(Unsigned.self, from: negative)
      Issue.record("-1 decoded as UInt32")
    } catch {
      #expect(isDataCorrupted(error))
    }
    #expect(try coder.decode(Narrow.self, from: coder.encode(Wide(value: -128))).value == -128)
  }

  @Test("a string that is not UTF-8 is dataCorrupted")
  func invalidUTF8() throws {
    var bytes = [UInt8](try coder.encode(Text(value: "ab")))
    bytes[bytes.count - 1] = 0xFF
    expectCorrupted(Text.self, bytes)
  }

  @Test("values nested deeper than the limit are dataCorrupted, not a stack overflow")
  func deepNesting() throws {
    #expect(throws: Never.self) { try coder.decode(Chain.self, from: coder.encode(Chain.of(length: 100))) }
    let deep = try coder.encode(Chain.of(length: 2_000))
    do {
      _ = try coder.decode(Chain.self, from: deep)
      Issue.record("a 4,000-container chain decoded")
    } catch {
      #expect(isDataCorrupted(error))
    }
  }

  @Test("a Decimal with fields out of range is a DecodingError or a value, never a crash")
  func decimalFieldsOutOfRange() throws {
    for fields in [
      DecimalFields(exponent: .max, length: 100, isNegative: true, isCompact: false, mantissa: []),
      DecimalFields(
        exponent: .min, length: 8, isNegative: false, isCompact: true, mantissa: Array(repeating: 0xFFFF, count: 8)),
      DecimalFields(exponent: 200, length: 0, isNegative: true, isCompact: false, mantissa: [1, 2, 3]),
    ] {
      do {
        _ = try coder.decode(Decimal.self, from: coder.encode(fields))
      } catch {
        #expect(error is DecodingError, "\(error)")
      }
    }
  }

  @Test("damaged bytes in a collection are CollectionError.decoding around dataCorrupted")
  func collectionWrapsDamage() throws {
    try withStore("binary-malformed") { store throws in
      let items = store.collection(Counter.self, named: "items", coder: BinaryCaskCoder())
      try items.save(Counter(id: 1, value: 5, label: "x"))
      let key = try items.storageKey(for: 1)
      let bytes = try #require(try store.get(key))
      try store.put(bytes.prefix(bytes.count - 1), forKey: key)
      do {
        _ = try items.get(id: 1)
        Issue.record("a truncated object decoded")
      } catch CollectionError.decoding(let collection, let id, let underlying) {
        #expect(collection == "items" && id == "1")
        #expect(isDataCorrupted(underlying))
      }
    }
  }
}
