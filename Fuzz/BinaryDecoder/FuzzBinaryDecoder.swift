import CipherCask
import Foundation
import FuzzSupport

/// fuzz-binary-decoder: `BinaryCaskCoder.decode` on arbitrary bytes, and `BinaryJSONText` (a
/// binary object as JSON text, for `cask export`) on the same bytes.
///
/// Input: a mode byte choosing the type to decode, then the encoded object. Only
/// `DecodingError` may be thrown (JSON input included: the coder hands it to JSON); a value that
/// decodes must encode again and read back to the same bytes (so nothing read was misread
/// silently). Lengths are capped by the bytes left, so no input makes a large allocation,
/// which libFuzzer's `-rss_limit_mb` and `-malloc_limit_mb` catch.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  BinaryDecoderTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

/// A recursive enum with associated values.
indirect enum FuzzShape: Codable, Equatable {
  case point
  case circle(radius: Double)
  case labeled(String, Int8)
  case group([FuzzShape])
}

/// An object with a field of every kind the binary coder has a layout for.
struct FuzzModel: Codable, Equatable {
  var id: String
  var count: Int
  var small: Int8
  var wide: UInt64
  var ratio: Float
  var score: Double?
  var flag: Bool
  var when: Date
  var blob: Data
  var link: URL?
  var uuid: UUID
  var amount: Decimal?
  var tags: [String]
  var keyed: [Int: [UInt16]]
  var shape: FuzzShape
}

enum BinaryDecoderTarget {
  static let coder = BinaryCaskCoder()

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte() % 4
    let data = input.rest()
    switch mode {
    case 0: check(FuzzModel.self, data)
    case 1: check([FuzzShape].self, data)
    case 2: check([String: [Int32?]].self, data)
    default: check(FuzzShape.self, data)
    }
    checkJSONText(data)
  }

  /// JSON text for `data`: a `DecodingError`, `Unrepresentable`, or text a JSON parser reads.
  static func checkJSONText(_ data: Data) {
    do {
      let text = try BinaryJSONText.json(fromBinaryObject: data)
      let parsed = try? JSONSerialization.jsonObject(with: text, options: [.fragmentsAllowed])
      FuzzReplay.check(parsed != nil, "JSON text of a binary object does not parse")
    } catch {
      FuzzReplay.check(
        error is DecodingError || error is BinaryJSONText.Unrepresentable,
        "JSON text threw an unexpected error: \(type(of: error))")
    }
  }

  /// Decodes `data` as `T`: a `DecodingError`, or a value whose encoding is stable.
  static func check<T: Codable>(_ kind: T.Type, _ data: Data) {
    let value: T
    do {
      value = try coder.decode(kind, from: data)
    } catch {
      FuzzReplay.check(error is DecodingError, "decode threw a non-DecodingError: \(type(of: error))")
      return
    }
    do {
      let encoded = try coder.encode(value)
      let again = try coder.encode(coder.decode(kind, from: encoded))
      // Dictionaries may list their entries in another order; sizes still match.
      FuzzReplay.check(again.count == encoded.count, "a decoded value encodes differently after a round trip")
    } catch {
      FuzzReplay.check(false, "a decoded value does not round-trip: \(error)")
    }
  }

  static func seeds() throws -> [(String, Data)] {
    let model = FuzzModel(
      id: "a", count: -3, small: 7, wide: .max, ratio: 0.5, score: nil, flag: true,
      when: Date(timeIntervalSinceReferenceDate: 700_000_000.25), blob: Data([0, 0xC1, 0xFF]),
      link: URL(string: "https://example.com/x"),
      uuid: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)),
      amount: Decimal(string: "12.50"), tags: ["x", "é"], keyed: [1: [2, 3]],
      shape: .group([.point, .circle(radius: 1), .labeled("l", -1)]))
    let encodedModel = try coder.encode(model)
    return [
      ("model", Data([0]) + encodedModel),
      ("model-truncated", Data([0]) + encodedModel.prefix(encodedModel.count / 2)),
      ("shapes", Data([1]) + (try coder.encode([FuzzShape.point, .group([.group([])])]))),
      ("dictionary", Data([2]) + (try coder.encode(["k": [Int32.min, nil, 5]] as [String: [Int32?]]))),
      ("shape", Data([3]) + (try coder.encode(FuzzShape.labeled("", .max)))),
      ("json-model", Data([3]) + Data(#"{"circle":{"radius":2}}"#.utf8)),
      ("huge-length", Data([1, 0xC1, 0x01, 0x09, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x01])),
      ("unknown-version", Data([3, 0xC1, 0x02, 0x00])),
    ]
  }
}
