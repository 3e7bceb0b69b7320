import CipherCask
import Foundation

/// The id of an imported object: the value at the `--id-key` field, as a string.
///
/// Reading it also parses the whole object, so malformed JSON and values that are not objects
/// are found here. Strings are taken as they are; a number is read from its text, exactly:
/// one with an integer value (`42`, `1.0`, `1e3`, `-0`, `18446744073709551616`) is that
/// integer in decimal, whatever its size; another number is the shortest text Swift prints for
/// a `Double` (`4.5`) when that is exactly the number written, and is refused otherwise
/// (`0.10000000000000001` would become `0.1`, the id of another object). Anything else is refused.
enum ImportID {
  /// Why an object has no usable id; never quotes a value.
  enum Problem: Error {
    case missing(String)
    case unusable(String)
    case empty(String)
    case inexact(String)

    var reason: String {
      switch self {
      case .missing(let field): return "the object has no '\(field)' field"
      case .unusable(let field): return "the value of '\(field)' is not a string or a number"
      case .empty(let field): return "the value of '\(field)' is an empty string"
      case .inexact(let field):
        return "the value of '\(field)' is a number that has no exact id (write the id as a string)"
      }
    }
  }

  /// Parses the whole record and checks that it is an object.
  private struct Object: Decodable {
    private struct AnyKey: CodingKey {
      var stringValue: String
      var intValue: Int? { nil }
      init(stringValue: String) { self.stringValue = stringValue }
      init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
      _ = try decoder.container(keyedBy: AnyKey.self)
    }
  }

  /// The longest id text a number may give: a key is at most this long anyway, and `1e999999`
  /// must not be written out in full before that is found.
  private static let maximumLength = CaskFormat.maximumKeyLength

  /// The id of `record`.
  ///
  /// - Throws: `CollectionError.invalidImport` with the record's line.
  /// - Parameter checker: takes almost every valid object without `JSONDecoder` (which then
  ///   judges only what it leaves).
  static func of(_ record: JSONRecord, field: String, checker: StrictJSONChecker = StrictJSONChecker()) throws
    -> String
  {
    if !checker.isObject(record.bytes) {
      do {
        _ = try JSONDecoder().decode(Object.self, from: record.bytes)
      } catch DecodingError.typeMismatch {
        throw CollectionError.invalidImport(reason: "not a JSON object", line: record.line)
      } catch {
        throw CollectionError.invalidImport(reason: "malformed JSON", line: record.line)
      }
    }
    do {
      return try value(record.bytes, field: field)
    } catch let problem as Problem {
      throw CollectionError.invalidImport(reason: problem.reason, line: record.line)
    }
  }

  /// The id in the (valid JSON) object `bytes`, from the text of its member `field`.
  private static func value(_ bytes: Data, field: String) throws -> String {
    guard let span = MemberSpan.find(field, in: bytes) else { throw Problem.missing(field) }
    let text = bytes[span]
    switch text.first ?? 0 {
    case UInt8(ascii: "\""):
      guard let string = MemberSpan.plainString(text) ?? (try? JSONDecoder().decode(String.self, from: text)) else {
        throw Problem.unusable(field)
      }
      guard !string.isEmpty else { throw Problem.empty(field) }
      return string
    case UInt8(ascii: "n"):
      throw Problem.missing(field)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      guard let number = ExactNumber(text) else { throw Problem.unusable(field) }
      guard let id = number.id(maximumLength: maximumLength) else { throw Problem.inexact(field) }
      return id
    default:
      throw Problem.unusable(field)
    }
  }
}

/// A JSON number as the exact decimal its text writes: `digits × 10^exponent`, with no
/// leading or trailing zero in `digits` (empty for zero).
struct ExactNumber: Equatable {
  var negative: Bool
  var digits: [UInt8]
  var exponent: Int

  /// Reads a JSON number's text (`-?int(.frac)?([eE][+-]?exp)?`); `nil` for anything else.
  init?(_ text: some Collection<UInt8>) {
    var bytes = Array(text)[...]
    negative = bytes.first == UInt8(ascii: "-")
    if negative { bytes = bytes.dropFirst() }
    let integer = bytes.prefix { Self.isDigit($0) }
    bytes = bytes.dropFirst(integer.count)
    guard !integer.isEmpty else { return nil }
    var fraction: ArraySlice<UInt8> = []
    if bytes.first == UInt8(ascii: ".") {
      fraction = bytes.dropFirst().prefix { Self.isDigit($0) }
      guard !fraction.isEmpty else { return nil }
      bytes = bytes.dropFirst(1 + fraction.count)
    }
    var written = 0
    if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
      bytes = bytes.dropFirst()
      let minus = bytes.first == UInt8(ascii: "-")
      if minus || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
      let power = bytes.prefix { Self.isDigit($0) }
      guard !power.isEmpty else { return nil }
      bytes = bytes.dropFirst(power.count)
      // Beyond a billion the value is far past any id's length (or is zero); capped so it adds up.
      let magnitude =
        power.drop { $0 == UInt8(ascii: "0") }.count > 9
        ? 1_000_000_000 : Int(String(decoding: power, as: UTF8.self)) ?? 0
      written = minus ? -magnitude : magnitude
    }
    guard bytes.isEmpty else { return nil }
    var all = Array(integer) + Array(fraction)
    exponent = written - fraction.count
    while all.first == UInt8(ascii: "0") { all.removeFirst() }
    while all.last == UInt8(ascii: "0") {
      all.removeLast()
      exponent += 1
    }
    digits = all
    if digits.isEmpty {
      negative = false
      exponent = 0
    }
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
  }

  /// The id: the integer in decimal, or the shortest `Double` text when it is exactly this
  /// number; `nil` when neither is, or the text would be longer than `maximumLength`.
  func id(maximumLength: Int) -> String? {
    if digits.isEmpty { return "0" }
    if exponent >= 0 {
      guard digits.count + exponent + 1 <= maximumLength else { return nil }
      let text = String(decoding: digits, as: UTF8.self) + String(repeating: "0", count: exponent)
      return (negative ? "-" : "") + text
    }
    let sign = negative ? "-" : ""
    guard let double = Double(sign + String(decoding: digits, as: UTF8.self) + "e\(exponent)"), double.isFinite else {
      return nil
    }
    let text = String(double)
    guard ExactNumber(Array(text.utf8)) == self else { return nil }
    return text
  }
}
