import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Model changes the binary coder meets beyond those `SchemaDriftTests` covers for every
/// coder: keys in another order (the decoder's in-order fast path must fall back to a search),
/// fields added in the middle, widened integers, an enum case gaining an optional value.
@Suite("Binary objects survive model changes")
struct BinaryCoderDriftTests {
  let coder = BinaryCaskCoder()

  struct Version1: Codable, Equatable {
    var a: Int8
    var b: String
    var c: [Int]
  }

  /// Fields in another order, one added in the middle, `a` widened.
  struct Reordered: Codable, Equatable {
    var c: [Int]
    var added: Date?
    var b: String
    var a: Int64
  }

  /// `a` read as a Double, `c` as unsigned: values that fit convert exactly.
  struct Converted: Codable, Equatable {
    var a: Double
    var c: [UInt16]
  }

  enum EventV1: Codable, Equatable {
    case started(at: Int)
    case stopped
  }

  enum EventV2: Codable, Equatable {
    case started(at: Int, by: String?)
    case stopped
    case paused
  }

  /// Many fields, read in reverse: past the size where the decoder indexes keys.
  struct Wide: Codable, Equatable {
    var f0 = 0, f1 = 1, f2 = 2, f3 = 3, f4 = 4, f5 = 5, f6 = 6, f7 = 7, f8 = 8, f9 = 9
    var f10 = 10, f11 = 11, f12 = 12, f13 = 13, f14 = 14, f15 = 15, f16 = 16, f17 = 17, f18 = 18, f19 = 19
  }

  struct WideReversed: Codable, Equatable {
    var f19: Int, f18: Int, f17: Int, f16: Int, f15: Int, f14: Int, f13: Int, f12: Int, f11: Int, f10: Int
    var f9: Int, f8: Int, f7: Int, f6: Int, f5: Int, f4: Int, f3: Int, f2: Int, f1: Int, f0: Int
    var missing: String?
  }

  @Test("fields reordered, added in the middle and widened read old objects")
  func reorderedAndWidened() throws {
    var random = SeededRandom.make(test: "reorderedAndWidened")
    for _ in 0..<testIterations(50) {
      let old = Version1(
        a: Int8.random(in: .min ... .max, using: &random), b: String(random.next()),
        c: (0..<Int.random(in: 0...5, using: &random)).map { _ in Int.random(in: 0...65_535, using: &random) })
      let data = try coder.encode(old)
      #expect(
        try coder.decode(Reordered.self, from: data) == Reordered(c: old.c, added: nil, b: old.b, a: Int64(old.a)))
      #expect(try coder.decode(Converted.self, from: data) == Converted(a: Double(old.a), c: old.c.map { UInt16($0) }))
      // And back: the old model reads what the new one wrote.
      let newer = Reordered(c: old.c, added: Date(), b: old.b, a: Int64(old.a))
      #expect(try coder.decode(Version1.self, from: coder.encode(newer)) == old)
    }
  }

  @Test("an enum case gaining an optional associated value reads old objects")
  func enumGainsOptionalValue() throws {
    #expect(try coder.decode(EventV2.self, from: coder.encode(EventV1.started(at: 5))) == .started(at: 5, by: nil))
    #expect(try coder.decode(EventV2.self, from: coder.encode(EventV1.stopped)) == .stopped)
    #expect(throws: DecodingError.self) { try coder.decode(EventV1.self, from: coder.encode(EventV2.paused)) }
  }

  @Test("many keys read in another order find each value")
  func manyKeysOutOfOrder() throws {
    let back = try coder.decode(WideReversed.self, from: coder.encode(Wide()))
    #expect(back.f0 == 0 && back.f7 == 7 && back.f19 == 19 && back.missing == nil)
    let fields = [
      back.f0, back.f1, back.f2, back.f3, back.f4, back.f5, back.f6, back.f7, back.f8, back.f9, back.f10, back.f11,
      back.f12, back.f13, back.f14, back.f15, back.f16, back.f17, back.f18, back.f19,
    ]
    #expect(fields == Array(0..<20))
  }
}
