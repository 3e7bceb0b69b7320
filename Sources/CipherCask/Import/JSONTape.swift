import Foundation

/// One JSON text parsed into a flat list of tokens (a tape) for `JSONTapeDecoder`: strict
/// RFC 8259 JSON, every string's escapes and UTF-8 and every number's syntax checked up front.
///
/// It accepts only what Foundation's `JSONDecoder` certainly accepts, and answers `nil` for
/// anything else (invalid JSON, nesting deeper than `maximumDepth`, escapes that encode a lone
/// surrogate, objects with more members than `maximumMembers`): the caller then asks
/// `JSONDecoder`, whose answer (a value or its error) is the one that counts.
///
/// A container's token is followed by its descendants; an object's members are a key token
/// (a string) then the value's tokens. `end` of a container is the index just past its last
/// descendant, so a value is skipped in O(1).
struct JSONTape {
  enum Kind: UInt8 {
    case object, array, string, number, `true`, `false`, null
  }

  struct Token {
    var kind: Kind
    /// `Flags` bits.
    var flags: UInt8
    /// Strings: the first byte after the opening quote; numbers: the first byte.
    var start: Int32
    /// Strings and numbers: byte length (a string's raw bytes, escapes as written).
    /// Containers: how many values (arrays) or members (objects) they hold.
    var length: Int32
    /// Containers: the index of the token after the last descendant; other tokens: own index + 1.
    var end: Int32
    /// Keys: a hash of the name the key strategy gives (for quick comparisons).
    var hash: UInt32
    /// Keys the key strategy renames: where the new name is in `JSONTape.names`, and its length.
    var renamedStart: Int32 = 0
    var renamedLength: Int32 = 0

    /// A plain key's name length: the renamed name's, or the key's own.
    var nameLength: Int32 { flags & Flags.renamed != 0 ? renamedLength : length }
  }

  enum Flags {
    /// A string with at least one backslash escape.
    static let escaped: UInt8 = 1
    /// A string with a byte of 0x80 or more (validated UTF-8).
    static let nonASCII: UInt8 = 2
    /// A number with neither a fraction nor an exponent.
    static let integer: UInt8 = 4
    /// An object whose keys must be compared as Swift strings, first match wins: a key with an
    /// escape or a byte of 0x80 or more, or two keys with the same name.
    static let slowKeys: UInt8 = 8
    /// A key whose name is in `names` (the key strategy changed it), not in the input.
    static let renamed: UInt8 = 16
    /// A number with a minus sign.
    static let negative: UInt8 = 32
  }

  /// Deeper nesting is left to `JSONDecoder` (which stops at 512 levels itself).
  static let maximumDepth = 256
  /// Objects with more members are left to `JSONDecoder`: key lookups here scan the members.
  static let maximumMembers = 128

  var tokens: [Token] = []
  /// The names of renamed keys, back to back.
  var names: [UInt8] = []

  /// Parses `bytes` (one JSON value, whitespace around it allowed), reusing this tape's storage.
  ///
  /// - Parameter rename: gives the name a key strategy makes of a key (its raw bytes,
  ///   without escapes, all below 0x80), or `nil` to keep it; called only for keys that
  ///   contain an underscore.
  /// - Returns: `false` when the text is not strict JSON or is beyond this parser's limits.
  mutating func parse(_ bytes: UnsafeRawBufferPointer, rename: ((UnsafeRawBufferPointer) -> [UInt8]?)?) -> Bool {
    tokens.removeAll(keepingCapacity: true)
    names.removeAll(keepingCapacity: true)
    guard bytes.count < Int(Int32.max) else { return false }
    var parser = Parser(bytes: bytes, rename: rename)
    let parsed = parser.parseValue(into: &self, depth: 0)
    guard parsed else { return false }
    parser.skipWhitespace()
    return parser.position == bytes.count
  }
}

extension JSONTape {
  /// FNV-1a over a name's bytes.
  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var hash: UInt32 = 2_166_136_261
    for byte in bytes { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    return hash
  }

  private struct Parser {
    let bytes: UnsafeRawBufferPointer
    let rename: ((UnsafeRawBufferPointer) -> [UInt8]?)?
    var position = 0

    init(bytes: UnsafeRawBufferPointer, rename: ((UnsafeRawBufferPointer) -> [UInt8]?)?) {
      self.bytes = bytes
      self.rename = rename
    }

    mutating func skipWhitespace() {
      while position < bytes.count {
        switch bytes[position] {
        case 0x20, 0x09, 0x0A, 0x0D: position += 1
        default: return
        }
      }
    }

    private func literal(_ text: StaticString) -> Bool {
      let count = text.utf8CodeUnitCount
      guard bytes.count - position >= count else { return false }
      for index in 0..<count where bytes[position + index] != text.utf8Start[index] { return false }
      return true
    }

    /// Appends the tokens of the value at `position`.
    mutating func parseValue(into tape: inout JSONTape, depth: Int) -> Bool {
      skipWhitespace()
      guard position < bytes.count else { return false }
      let index = tape.tokens.count
      switch bytes[position] {
      case UInt8(ascii: "{"):
        guard depth < JSONTape.maximumDepth else { return false }
        return parseObject(into: &tape, depth: depth)
      case UInt8(ascii: "["):
        guard depth < JSONTape.maximumDepth else { return false }
        return parseArray(into: &tape, depth: depth)
      case UInt8(ascii: "\""):
        guard var token = parseString() else { return false }
        token.end = Int32(index + 1)
        tape.tokens.append(token)
      case UInt8(ascii: "t"):
        guard literal("true") else { return false }
        position += 4
        tape.tokens.append(Token(kind: .true, flags: 0, start: 0, length: 0, end: Int32(index + 1), hash: 0))
      case UInt8(ascii: "f"):
        guard literal("false") else { return false }
        position += 5
        tape.tokens.append(Token(kind: .false, flags: 0, start: 0, length: 0, end: Int32(index + 1), hash: 0))
      case UInt8(ascii: "n"):
        guard literal("null") else { return false }
        position += 4
        tape.tokens.append(Token(kind: .null, flags: 0, start: 0, length: 0, end: Int32(index + 1), hash: 0))
      default:
        guard let token = parseNumber(index: index) else { return false }
        tape.tokens.append(token)
      }
      return true
    }

    private mutating func parseArray(into tape: inout JSONTape, depth: Int) -> Bool {
      let index = tape.tokens.count
      tape.tokens.append(Token(kind: .array, flags: 0, start: Int32(position), length: 0, end: 0, hash: 0))
      position += 1
      skipWhitespace()
      var count: Int32 = 0
      if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
        position += 1
      } else {
        while true {
          guard parseValue(into: &tape, depth: depth + 1) else { return false }
          count += 1
          skipWhitespace()
          guard position < bytes.count else { return false }
          let byte = bytes[position]
          position += 1
          if byte == UInt8(ascii: "]") { break }
          guard byte == UInt8(ascii: ",") else { return false }
        }
      }
      tape.tokens[index].length = count
      tape.tokens[index].end = Int32(tape.tokens.count)
      return true
    }

    private mutating func parseObject(into tape: inout JSONTape, depth: Int) -> Bool {
      let index = tape.tokens.count
      tape.tokens.append(Token(kind: .object, flags: 0, start: Int32(position), length: 0, end: 0, hash: 0))
      position += 1
      skipWhitespace()
      var count: Int32 = 0
      var flags: UInt8 = 0
      if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
        position += 1
      } else {
        while true {
          skipWhitespace()
          guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), var key = parseString() else {
            return false
          }
          count += 1
          guard count <= JSONTape.maximumMembers else { return false }
          if key.flags & (Flags.escaped | Flags.nonASCII) != 0 {
            flags |= Flags.slowKeys
          } else {
            let raw = UnsafeRawBufferPointer(rebasing: bytes[Int(key.start)..<Int(key.start + key.length)])
            if let rename, raw.contains(UInt8(ascii: "_")), let name = rename(raw) {
              key.flags |= Flags.renamed
              key.renamedStart = Int32(tape.names.count)
              key.renamedLength = Int32(name.count)
              tape.names.append(contentsOf: name)
              key.hash = name.withUnsafeBytes { JSONTape.hash($0) }
            } else {
              key.hash = JSONTape.hash(raw)
            }
          }
          key.end = Int32(tape.tokens.count + 1)
          tape.tokens.append(key)
          skipWhitespace()
          guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return false }
          position += 1
          guard parseValue(into: &tape, depth: depth + 1) else { return false }
          skipWhitespace()
          guard position < bytes.count else { return false }
          let byte = bytes[position]
          position += 1
          if byte == UInt8(ascii: "}") { break }
          guard byte == UInt8(ascii: ",") else { return false }
        }
      }
      if flags & Flags.slowKeys == 0, hasRepeatedName(objectAt: index, count: Int(count), in: tape) {
        flags |= Flags.slowKeys
      }
      tape.tokens[index].flags = flags
      tape.tokens[index].length = count
      tape.tokens[index].end = Int32(tape.tokens.count)
      return true
    }

    /// Whether two keys of the object at `index` (all plain ASCII) have the same name.
    private func hasRepeatedName(objectAt index: Int, count: Int, in tape: JSONTape) -> Bool {
      guard count > 1 else { return false }
      return withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { keys in
        var key = index + 1
        for member in 0..<count {
          keys[member] = key
          key = Int(tape.tokens[key + 1].end)
        }
        for first in 0..<count - 1 {
          let a = tape.tokens[keys[first]]
          for second in first + 1..<count {
            let b = tape.tokens[keys[second]]
            if a.hash == b.hash, a.nameLength == b.nameLength,
              tape.withName(of: a, in: bytes, { nameA in tape.withName(of: b, in: bytes) { nameA.elementsEqual($0) } })
            {
              return true
            }
          }
        }
        return false
      }
    }

    /// A string token; `position` is on its opening quote.
    private mutating func parseString() -> Token? {
      position += 1
      let start = position
      var flags: UInt8 = 0
      while position < bytes.count {
        let byte = bytes[position]
        if byte == UInt8(ascii: "\"") {
          let token = Token(
            kind: .string, flags: flags, start: Int32(start), length: Int32(position - start), end: 0, hash: 0)
          position += 1
          if flags & Flags.nonASCII != 0 {
            // Prevents: a value Foundation refuses (invalid UTF-8) passing here.
            guard
              String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<position - 1]), as: UTF8.self)
                != nil
            else { return nil }
          }
          return token
        }
        if byte < 0x20 { return nil }
        if byte >= 0x80 { flags |= Flags.nonASCII }
        if byte == UInt8(ascii: "\\") {
          flags |= Flags.escaped
          guard position + 1 < bytes.count else { return nil }
          switch bytes[position + 1] {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            position += 2
          case UInt8(ascii: "u"):
            guard let unit = hex4(at: position + 2) else { return nil }
            position += 6
            if unit >= 0xD800 && unit < 0xDC00 {
              // A high surrogate must be followed by an escaped low one.
              guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                bytes[position + 1] == UInt8(ascii: "u"), let low = hex4(at: position + 2), low >= 0xDC00, low < 0xE000
              else { return nil }
              position += 6
            } else if unit >= 0xDC00 && unit < 0xE000 {
              return nil
            }
          default:
            return nil
          }
          continue
        }
        position += 1
      }
      return nil
    }

    private func hex4(at offset: Int) -> UInt32? {
      guard offset + 4 <= bytes.count else { return nil }
      var value: UInt32 = 0
      for index in offset..<offset + 4 {
        guard let digit = JSONTape.hexValue(bytes[index]) else { return nil }
        value = value << 4 | UInt32(digit)
      }
      return value
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func parseNumber(index: Int) -> Token? {
      let start = position
      var flags = Flags.integer
      if bytes[position] == UInt8(ascii: "-") {
        flags |= Flags.negative
        position += 1
      }
      guard position < bytes.count, isDigit(bytes[position]) else { return nil }
      if bytes[position] == UInt8(ascii: "0") {
        position += 1
      } else {
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
      }
      if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
        flags &= ~Flags.integer
        position += 1
        guard position < bytes.count, isDigit(bytes[position]) else { return nil }
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
      }
      if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
        flags &= ~Flags.integer
        position += 1
        if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
          position += 1
        }
        guard position < bytes.count, isDigit(bytes[position]) else { return nil }
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
      }
      return Token(
        kind: .number, flags: flags, start: Int32(start), length: Int32(position - start), end: Int32(index + 1),
        hash: 0)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// Runs `body` on the bytes of a plain key's name: the input's, or the renamed one.
  func withName<R>(
    of token: Token, in bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R
  ) rethrows -> R {
    if token.flags & Flags.renamed != 0 {
      let range = Int(token.renamedStart)..<Int(token.renamedStart + token.renamedLength)
      return try names.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
    return try body(UnsafeRawBufferPointer(rebasing: bytes[Int(token.start)..<Int(token.start + token.length)]))
  }
}

/// Checks JSON texts as strictly as an import's own decoding does, for tools that store the
/// text as it is (`cask import`): what it accepts, Foundation's `JSONDecoder` accepts too, so
/// only what it does not take needs `JSONDecoder`'s verdict.
package final class StrictJSONChecker {
  private var tape = JSONTape()

  package init() {}

  /// Whether `bytes` is one JSON object by RFC 8259, every string valid UTF-8 and every escape
  /// a Unicode scalar, nested at most 256 deep with at most 128 members an object; `false`
  /// says nothing either way.
  package func isObject(_ bytes: Data) -> Bool {
    bytes.withUnsafeBytes { tape.parse($0, rename: nil) } && tape.tokens.first?.kind == .object
  }
}
