import Foundation

/// Decodes JSON texts as a given `JSONDecoder` would, several times faster, or says it cannot.
///
/// It handles the `JSONDecoder` settings an import uses (default or snake-case keys; dates
/// deferred to `Date`, as seconds or milliseconds since 1970, ISO 8601 or custom; data as
/// base64, deferred or custom; `userInfo`) and, within them, only what it can answer exactly
/// as `JSONDecoder` does. Everything else makes it give up on the text (`decode` returns
/// `nil`), and the caller asks `JSONDecoder` itself: any error, a key, string, number or
/// container it does not read exactly as Foundation does, a `Decimal`. Whatever it returns is
/// what `JSONDecoder` returns for the same text; anything else, errors included, is
/// `JSONDecoder`'s own answer.
///
/// One instance per import, used on one thread at a time.
final class JSONTapeDecoding {
  enum DateStrategy {
    case deferred
    case secondsSince1970
    case millisecondsSince1970
    case iso8601
    case custom(@Sendable (any Decoder) throws -> Date)
  }

  enum DataStrategy {
    case deferred
    case base64
    case custom(@Sendable (any Decoder) throws -> Data)
  }

  /// Thrown inside a decode that this decoder gives up; never escapes `decode`.
  struct GaveUp: Error {}

  let dates: DateStrategy
  let data: DataStrategy
  let snakeCase: Bool
  /// Whether floats may come from strings (a non-throwing non-conforming float strategy):
  /// such strings are left to `JSONDecoder`.
  let floatsFromStrings: Bool
  let userInfo: [CodingUserInfoKey: Any]

  private(set) var tape = JSONTape()
  private(set) var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
  /// Set by every failure of this decoder, so that a failure user code catches (`try?`) still
  /// sends the text to `JSONDecoder`.
  private(set) var gaveUp = false
  /// Snake-case names by the hash of the key they come from.
  private var renamed: [UInt32: [(key: [UInt8], name: [UInt8]?)]] = [:]
  private var renamedCount = 0
  /// ISO 8601 texts not in the form `dates` reads itself, and what Foundation made of them.
  var parsedDates: [String: Date?] = [:]
  /// Unescaped string bytes, reused.
  private var scratch: [UInt8] = []
  /// Made once: a closure made per text would be an allocation per text.
  private lazy var rename: ((UnsafeRawBufferPointer) -> [UInt8]?)? =
    snakeCase ? { [unowned self] in self.snakeCaseName($0) } : nil

  /// The fast form of `decoder`'s settings, or `nil` when they are not ones it handles (a
  /// subclass, JSON5, custom keys, a top-level dictionary assumed, an unknown strategy).
  init?(_ decoder: JSONDecoder) {
    guard type(of: decoder) == JSONDecoder.self, !decoder.allowsJSON5, !decoder.assumesTopLevelDictionary else {
      return nil
    }
    switch decoder.keyDecodingStrategy {
    case .useDefaultKeys: snakeCase = false
    case .convertFromSnakeCase: snakeCase = true
    case .custom: return nil
    @unknown default: return nil
    }
    switch decoder.dateDecodingStrategy {
    case .deferredToDate: dates = .deferred
    case .secondsSince1970: dates = .secondsSince1970
    case .millisecondsSince1970: dates = .millisecondsSince1970
    case .iso8601: dates = .iso8601
    case .custom(let closure): dates = .custom(closure)
    @unknown default: return nil
    }
    switch decoder.dataDecodingStrategy {
    case .deferredToData: data = .deferred
    case .base64: data = .base64
    case .custom(let closure): data = .custom(closure)
    @unknown default: return nil
    }
    switch decoder.nonConformingFloatDecodingStrategy {
    case .throw: floatsFromStrings = false
    default: floatsFromStrings = true
    }
    userInfo = decoder.userInfo
  }

  /// `text` decoded as `type`, or `nil` when the answer is for `JSONDecoder` to give.
  func decode<T: Decodable>(_ type: T.Type, from text: UnsafeRawBufferPointer) -> T? {
    gaveUp = false
    guard tape.parse(text, rename: rename) else { return nil }
    bytes = text
    defer { bytes = UnsafeRawBufferPointer(start: nil, count: 0) }
    guard let value = try? value(type, at: 0, in: nil, key: nil), !gaveUp else { return nil }
    return value
  }

  /// Marks the decode as given up; returns the error to throw.
  func giveUp() -> GaveUp {
    gaveUp = true
    return GaveUp()
  }

  func token(_ index: Int) -> JSONTape.Token { tape.tokens[index] }
}

// MARK: Values

extension JSONTapeDecoding {
  /// The value at token `index` as a `T`, `JSONDecoder`'s way: `Date`, `Data`, `URL`,
  /// `Decimal` and (with snake-case keys) string-keyed dictionaries by its own rules, the
  /// primitives directly, anything else through `T.init(from:)`.
  ///
  /// - Parameters:
  ///   - parent: the decoder of the enclosing container (for the coding path).
  func value<T: Decodable>(_ type: T.Type, at index: Int, in parent: JSONTapeDecoder?, key: (any CodingKey)?) throws
    -> T
  {
    let token = tape.tokens[index]
    if T.self == String.self { return unsafeBitCast(try string(token), to: T.self) }
    if T.self == Int.self { return unsafeBitCast(try integer(Int.self, token), to: T.self) }
    if T.self == Double.self { return unsafeBitCast(try double(token), to: T.self) }
    if T.self == Bool.self { return unsafeBitCast(try bool(token), to: T.self) }
    if T.self == Date.self { return unsafeBitCast(try date(at: index, in: parent, key: key), to: T.self) }
    if T.self == URL.self {
      guard let url = URL(string: try string(token)) else { throw giveUp() }
      return unsafeBitCast(url, to: T.self)
    }
    if T.self == Data.self { return unsafeBitCast(try bytes(at: index, in: parent, key: key), to: T.self) }
    // Foundation reads a `Decimal` from the number's text by rules of its own.
    if T.self == Decimal.self { throw giveUp() }
    if snakeCase, let dictionary = T.self as? any JSONTapeStringKeyed.Type {
      let child = JSONTapeDecoder(state: self, index: index, parent: parent, key: key)
      return try dictionary.decodeKeepingKeys(from: child) as! T
    }
    let child = JSONTapeDecoder(state: self, index: index, parent: parent, key: key)
    return try T(from: child)
  }

  func bool(_ token: JSONTape.Token) throws -> Bool {
    switch token.kind {
    case .true: return true
    case .false: return false
    default: throw giveUp()
    }
  }

  func string(_ token: JSONTape.Token) throws -> String {
    guard token.kind == .string else { throw giveUp() }
    let raw = UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.start + token.length)])
    // The tape checked the UTF-8 of every string and that every escape makes a scalar.
    guard token.flags & JSONTape.Flags.escaped != 0 else { return String(decoding: raw, as: UTF8.self) }
    scratch.removeAll(keepingCapacity: true)
    var position = 0
    while position < raw.count {
      let byte = raw[position]
      guard byte == UInt8(ascii: "\\") else {
        scratch.append(byte)
        position += 1
        continue
      }
      let escape = raw[position + 1]
      position += 2
      switch escape {
      case UInt8(ascii: "b"): scratch.append(0x08)
      case UInt8(ascii: "f"): scratch.append(0x0C)
      case UInt8(ascii: "n"): scratch.append(0x0A)
      case UInt8(ascii: "r"): scratch.append(0x0D)
      case UInt8(ascii: "t"): scratch.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = Self.hex4(raw, at: position)
        position += 4
        if scalar >= 0xD800 && scalar < 0xDC00 {
          let low = Self.hex4(raw, at: position + 2)
          position += 6
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw giveUp() }
        scratch.append(contentsOf: UTF8.encode(unicode)!)
      default: scratch.append(escape)  // " \ /
      }
    }
    return String(decoding: scratch, as: UTF8.self)
  }

  private static func hex4(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
    var value: UInt32 = 0
    for index in offset..<offset + 4 { value = value << 4 | UInt32(JSONTape.hexValue(raw[index]) ?? 0) }
    return value
  }

  /// The number's text.
  private func numberText(_ token: JSONTape.Token) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.start + token.length)])
  }

  /// An integer written without fraction or exponent that fits `I`; anything else (`1.0`,
  /// `1e3`, `-0` for an unsigned type) is left to Foundation.
  func integer<I: FixedWidthInteger>(_ type: I.Type, _ token: JSONTape.Token) throws -> I {
    guard token.kind == .number, token.flags & JSONTape.Flags.integer != 0 else { throw giveUp() }
    let text = numberText(token)
    let negative = token.flags & JSONTape.Flags.negative != 0
    var magnitude: UInt64 = 0
    for byte in text.dropFirst(negative ? 1 : 0) {
      let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
      let (sum, carry) = times.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
      guard !overflow, !carry else { throw giveUp() }
      magnitude = sum
    }
    if negative {
      guard I.isSigned, magnitude <= UInt64(1) << 63 else { throw giveUp() }
      let value = magnitude == UInt64(1) << 63 ? Int64.min : -Int64(magnitude)
      guard let result = I(exactly: value) else { throw giveUp() }
      return result
    }
    guard let result = I(exactly: magnitude) else { throw giveUp() }
    return result
  }

  /// Powers of ten a `Double` holds exactly.
  private static let exactPowers: [Double] = (0...22).map { power in
    var value = 1.0
    for _ in 0..<power { value *= 10 }
    return value
  }

  /// A number as the `Double` nearest its text, as `strtod` gives it; an overflow, or a
  /// non-zero number that rounds to zero, is left to Foundation (which refuses both).
  func double(_ token: JSONTape.Token) throws -> Double {
    guard token.kind == .number else { throw giveUp() }
    let text = numberText(token)
    let value = Self.exactDouble(text) ?? Double(String(decoding: text, as: UTF8.self))
    guard let value, value.isFinite, value != 0 || Self.writesZero(text) else { throw giveUp() }
    return value
  }

  func float(_ token: JSONTape.Token) throws -> Float {
    guard token.kind == .number else { throw giveUp() }
    let text = numberText(token)
    // Parsed as a `Float` directly, as Foundation does: through a `Double` it could round twice.
    guard let value = Float(String(decoding: text, as: UTF8.self)), value.isFinite,
      value != 0 || Self.writesZero(text)
    else { throw giveUp() }
    return value
  }

  /// The classic exact case: at most 15 significant digits and a power of ten up to 22, where
  /// one correctly rounded multiplication or division of two exact `Double`s is the answer.
  private static func exactDouble(_ text: UnsafeRawBufferPointer) -> Double? {
    var mantissa: Int64 = 0
    var digits = 0
    var fraction = 0
    var position = 0
    let negative = text.first == UInt8(ascii: "-")
    if negative { position = 1 }
    var inFraction = false
    while position < text.count {
      let byte = text[position]
      if byte == UInt8(ascii: ".") {
        inFraction = true
      } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
        break
      } else {
        if mantissa != 0 || byte != UInt8(ascii: "0") { digits += 1 }
        guard digits <= 15 else { return nil }
        mantissa = mantissa * 10 + Int64(byte - UInt8(ascii: "0"))
        if inFraction { fraction += 1 }
      }
      position += 1
    }
    var exponent = 0
    if position < text.count {
      position += 1
      var exponentNegative = false
      if text[position] == UInt8(ascii: "+") || text[position] == UInt8(ascii: "-") {
        exponentNegative = text[position] == UInt8(ascii: "-")
        position += 1
      }
      while position < text.count {
        exponent = exponent * 10 + Int(text[position] - UInt8(ascii: "0"))
        guard exponent < 1000 else { return nil }
        position += 1
      }
      if exponentNegative { exponent = -exponent }
    }
    let power = exponent - fraction
    guard abs(power) <= 22 else { return mantissa == 0 ? (negative ? -0.0 : 0.0) : nil }
    var value = Double(mantissa)
    value = power < 0 ? value / exactPowers[-power] : value * exactPowers[power]
    return negative ? -value : value
  }

  /// Whether a number's digits (before any exponent) are all zeros.
  private static func writesZero(_ text: UnsafeRawBufferPointer) -> Bool {
    for byte in text {
      if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return true }
      if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return false }
    }
    return true
  }
}

// MARK: Keys

extension JSONTapeDecoding {
  /// The name `.convertFromSnakeCase` makes of a plain ASCII key, as Foundation makes it:
  /// asked of `JSONDecoder` once per distinct key and kept. `nil` (the text is left to
  /// `JSONDecoder`) when that name is not plain ASCII.
  private func snakeCaseName(_ key: UnsafeRawBufferPointer) -> [UInt8]? {
    let hash = JSONTape.hash(key)
    if let known = renamed[hash]?.first(where: { $0.key.elementsEqual(key) }) { return known.name }
    // Bounded: keys that are data (a dictionary's) would otherwise grow this without end.
    if renamedCount >= 4_096 {
      renamed.removeAll()
      renamedCount = 0
    }
    let name = Self.foundationSnakeCaseName(key)
    renamed[hash, default: []].append((Array(key), name))
    renamedCount += 1
    return name
  }

  /// Asks `JSONDecoder` what `.convertFromSnakeCase` makes of `key` (plain ASCII, no quote,
  /// backslash or control character: a checked key without escapes).
  private static func foundationSnakeCaseName(_ key: UnsafeRawBufferPointer) -> [UInt8]? {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    let text = Data("{\"".utf8) + Data(key) + Data("\":0}".utf8)
    guard let names = try? decoder.decode(KeyNames.self, from: text).names, names.count == 1,
      names[0].utf8.allSatisfy({ $0 < 0x80 })
    else { return nil }
    return Array(names[0].utf8)
  }

  /// The names a keyed container shows.
  private struct KeyNames: Decodable {
    var names: [String]

    init(from decoder: any Decoder) throws {
      names = try decoder.container(keyedBy: JSONTapeKey.self).allKeys.map(\.stringValue)
    }
  }
}
