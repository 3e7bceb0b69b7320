import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// The JSON text `cask export --collection` writes for a binary object reads back, through
/// `JSONCaskCoder`, into the object that was saved (Docs/FORMAT.md, section 16.3).
@Suite("Binary objects as JSON text")
struct BinaryJSONTextTests {
  let binary = BinaryCaskCoder()
  let json = JSONCaskCoder()

  private func text<T: Encodable>(_ value: T) throws -> Data {
    try BinaryJSONText.json(fromBinaryObject: binary.encode(value))
  }

  @Test("random values of every shape read back equal through the JSON text")
  func everyShapeReadsBack() throws {
    var values = CodedValues(random: SeededRandom.make(test: "binaryJSONTextEveryShape"))
    for _ in 0..<testIterations(200) {
      var value = values.everything()
      // JSON has no infinities: the one kind of number it cannot carry.
      if !value.double.isFinite { value.double = 1 }
      if !value.float.isFinite { value.float = 1 }
      if !value.date.timeIntervalSinceReferenceDate.isFinite { value.date = Date(timeIntervalSinceReferenceDate: 2) }
      value.uuidKeys = value.uuidKeys.filter { $0.value.timeIntervalSinceReferenceDate.isFinite }
      value.colorKeys = value.colorKeys.mapValues { $0.filter(\.isFinite) }
      // Enums with associated values, without the random infinite radius a circle may get.
      value.shape = .labeled("x", -3)
      value.shapes = [.rect(width: 1, height: -2), .framed(.point, margin: nil), .group([.circle(radius: 0.5)])]
      value.nested = ["a": ["b": .point, "c": nil]]
      let data = try text(value)
      #expect(try JSONSerialization.jsonObject(with: data) is [String: Any])
      let back = try json.decode(CodedEverything.self, from: data)
      #expect(back == value)
      #expect(back.double.bitPattern == value.double.bitPattern)
      #expect(back.float.bitPattern == value.float.bitPattern)
      #expect(
        back.date.timeIntervalSinceReferenceDate.bitPattern == value.date.timeIntervalSinceReferenceDate.bitPattern)
    }
  }

  @Test("the worked example becomes the JSON a JSON encoder writes")
  func workedExample() throws {
    struct Item: Codable, Equatable {
      var id = "a1"
      var count = -3
      var tags = ["x"]
    }
    #expect(String(decoding: try text(Item()), as: UTF8.self) == #"{"id":"a1","count":-3,"tags":["x"]}"#)
  }

  @Test("strings keep quotes, backslashes and control characters escaped")
  func stringsAreEscaped() throws {
    let value = ["k\"\\\n": "\u{0}\u{1F}\t\r\"é🦊"]
    let data = try text(value)
    #expect(try JSONDecoder().decode([String: String].self, from: data) == value)
  }

  @Test("an infinity or a NaN is refused: JSON cannot hold it")
  func infinityIsRefused() throws {
    #expect(throws: BinaryJSONText.Unrepresentable.self) { try text(["x": Double.infinity]) }
    #expect(throws: BinaryJSONText.Unrepresentable.self) { try text([Float.nan]) }
  }

  @Test("damaged bytes are a decoding error, never a crash: every cut of an object and every byte changed")
  func damageIsAnError() throws {
    var values = CodedValues(random: SeededRandom.make(test: "binaryJSONTextDamage"))
    let object = [UInt8](try binary.encode(values.everything()))
    for cut in 0..<object.count {
      #expect(throws: (any Error).self) { try BinaryJSONText.json(fromBinaryObject: Data(object[..<cut])) }
    }
    var random = SeededRandom.make(test: "binaryJSONTextDamageBytes")
    for _ in 0..<testIterations(500) {
      var damaged = object
      damaged[Int.random(in: 0..<damaged.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
      _ = try? BinaryJSONText.json(fromBinaryObject: Data(damaged))
    }
    #expect(throws: DecodingError.self) { try BinaryJSONText.json(fromBinaryObject: Data("{}".utf8)) }
    #expect(throws: DecodingError.self) { try BinaryJSONText.json(fromBinaryObject: Data([0xC1, 0x01, 0x00, 0x00])) }
  }

  @Test("containers nested past the limit are refused")
  func deepNestingIsRefused() throws {
    var bytes: [UInt8] = [0xC1, 0x01]
    let depth = 600
    // Each level is an unkeyed container of one element: kind, body length, count 1.
    var body: [UInt8] = [0x00]
    for _ in 0..<depth {
      var next: [UInt8] = [0x01]
      next += body
      var container: [UInt8] = [0x09]
      var length = UInt64(next.count)
      while length >= 0x80 {
        container.append(UInt8(truncatingIfNeeded: length) | 0x80)
        length >>= 7
      }
      container.append(UInt8(length))
      body = container + next
    }
    bytes += body
    #expect(throws: DecodingError.self) { try BinaryJSONText.json(fromBinaryObject: Data(bytes)) }
  }
}
