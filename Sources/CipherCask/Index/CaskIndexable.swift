import Foundation

/// A value a collection can index: its text in an index entry sorts, byte by byte, as the
/// values sort (Docs/FORMAT.md, "Index entries").
///
/// Conforming: `String`, the integer types, `Double`, `Float`, `Bool`, `Date`, `UUID`, and
/// `Optional` of each (`nil` sorts before every value). The text never contains U+0000, which
/// separates it from the id in an entry's key.
public protocol CaskIndexable: Sendable {
  /// The value's order-preserving text.
  var caskIndexText: String { get }
  /// The name of the value type, part of an index's definition.
  static var caskIndexTypeName: String { get }
}

/// How values become order-preserving text.
enum IndexText {
  /// `texts` without repeats (`==`), first occurrences in order: the texts of an `each:`
  /// index. A few elements, as most arrays hold, are compared pairwise rather than hashed
  /// into a set, which cost a save more than the comparisons.
  static func distinct(_ texts: [String]) -> [String] {
    if texts.count <= 16 {
      var kept: [String] = []
      kept.reserveCapacity(texts.count)
      for text in texts where !kept.contains(text) { kept.append(text) }
      return kept
    }
    var seen = Set<String>()
    return texts.filter { seen.insert($0).inserted }
  }

  /// 16 lower-case hexadecimal digits: sorted as the numbers.
  static func hex(_ value: UInt64) -> String {
    // Written into the string's own storage. Prevents: an array of the digits made and
    // copied into a string for every date or number a save indexes.
    String(unsafeUninitializedCapacity: 16) { digits in
      var rest = value
      for position in stride(from: 15, through: 0, by: -1) {
        let digit = UInt8(truncatingIfNeeded: rest & 0xF)
        digits[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
        rest >>= 4
      }
      return 16
    }
  }

  /// Signed integers, the sign bit flipped so that negative numbers sort first.
  static func signed(_ value: Int64) -> String {
    hex(UInt64(bitPattern: value) ^ (1 << 63))
  }

  /// Doubles in their total order: -infinity ... -0 = +0 ... +infinity, NaN last.
  static func double(_ value: Double) -> String {
    let normalized: Double = value.isNaN ? .nan : (value == 0 ? 0 : value)
    let bits = normalized.bitPattern
    return hex(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63))
  }

  /// The text of a composite index's entry: each text but the last with its U+0001 bytes
  /// written as 01 02 and followed by 01 01, then the last text as it is. Sorts as the texts
  /// do, the first first: the terminator sorts below any byte a longer text continues with,
  /// and no text holds U+0000 (Docs/FORMAT.md, "Index entries").
  static func composite(_ texts: [String]) -> String {
    compositePrefix(texts.dropLast()) + (texts.last ?? "")
  }

  /// The start that every composite text whose leading texts are `texts` has.
  static func compositePrefix(_ texts: some Sequence<String>) -> String {
    texts.reduce(into: "") { result, text in result += string(text) + "\u{1}\u{1}" }
  }

  /// Strings by their UTF-8 bytes, with U+0000 written as 01 01 and U+0001 as 01 02, so that
  /// the text has no zero byte and still sorts as the string's bytes do.
  static func string(_ value: String) -> String {
    guard value.utf8.contains(where: { $0 < 2 }) else { return value }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(value.utf8.count + 4)
    for byte in value.utf8 {
      if byte < 2 {
        bytes.append(1)
        bytes.append(byte + 1)
      } else {
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension String: CaskIndexable {
  public var caskIndexText: String { IndexText.string(self) }
  public static var caskIndexTypeName: String { "String" }
}

extension Bool: CaskIndexable {
  public var caskIndexText: String { self ? "1" : "0" }
  public static var caskIndexTypeName: String { "Bool" }
}

extension Double: CaskIndexable {
  public var caskIndexText: String { IndexText.double(self) }
  public static var caskIndexTypeName: String { "Double" }
}

extension Float: CaskIndexable {
  public var caskIndexText: String { IndexText.double(Double(self)) }
  public static var caskIndexTypeName: String { "Float" }
}

extension Date: CaskIndexable {
  public var caskIndexText: String { IndexText.double(timeIntervalSinceReferenceDate) }
  public static var caskIndexTypeName: String { "Date" }
}

extension UUID: CaskIndexable {
  /// Upper-case hexadecimal with dashes: fixed width, so sorted as the bytes.
  public var caskIndexText: String { uuidString }
  public static var caskIndexTypeName: String { "UUID" }
}

extension Int: CaskIndexable {
  public var caskIndexText: String { IndexText.signed(Int64(self)) }
  public static var caskIndexTypeName: String { "Int" }
}

extension Int8: CaskIndexable {
  public var caskIndexText: String { IndexText.signed(Int64(self)) }
  public static var caskIndexTypeName: String { "Int8" }
}

extension Int16: CaskIndexable {
  public var caskIndexText: String { IndexText.signed(Int64(self)) }
  public static var caskIndexTypeName: String { "Int16" }
}

extension Int32: CaskIndexable {
  public var caskIndexText: String { IndexText.signed(Int64(self)) }
  public static var caskIndexTypeName: String { "Int32" }
}

extension Int64: CaskIndexable {
  public var caskIndexText: String { IndexText.signed(self) }
  public static var caskIndexTypeName: String { "Int64" }
}

extension UInt: CaskIndexable {
  public var caskIndexText: String { IndexText.hex(UInt64(self)) }
  public static var caskIndexTypeName: String { "UInt" }
}

extension UInt8: CaskIndexable {
  public var caskIndexText: String { IndexText.hex(UInt64(self)) }
  public static var caskIndexTypeName: String { "UInt8" }
}

extension UInt16: CaskIndexable {
  public var caskIndexText: String { IndexText.hex(UInt64(self)) }
  public static var caskIndexTypeName: String { "UInt16" }
}

extension UInt32: CaskIndexable {
  public var caskIndexText: String { IndexText.hex(UInt64(self)) }
  public static var caskIndexTypeName: String { "UInt32" }
}

extension UInt64: CaskIndexable {
  public var caskIndexText: String { IndexText.hex(self) }
  public static var caskIndexTypeName: String { "UInt64" }
}

extension Optional: CaskIndexable where Wrapped: CaskIndexable {
  /// `nil` is "0", a value "1" followed by its text: `nil` sorts before every value.
  public var caskIndexText: String {
    switch self {
    case .none: return "0"
    case .some(let value): return "1" + value.caskIndexText
    }
  }
  public static var caskIndexTypeName: String { "Optional<\(Wrapped.caskIndexTypeName)>" }
}
