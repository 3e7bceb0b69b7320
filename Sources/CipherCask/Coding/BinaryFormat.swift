import Foundation

/// The constants of `BinaryCaskCoder`'s object encoding, all in one place. Docs/FORMAT.md
/// ("Object encoding") describes every byte; change one here and there together.
enum BinaryFormat {
  /// The first byte of every binary object. 0xC1 never begins JSON text (JSON starts with
  /// whitespace, `{`, `[`, `"`, a digit, `-`, `t`, `f`, `n`, or a UTF-8 byte order mark 0xEF)
  /// and is not valid anywhere in UTF-8, so the coders tell the two formats apart by it.
  static let tag: UInt8 = 0xC1
  /// The second byte: the version of the layout below.
  static let version: UInt8 = 0x01
  /// Bytes before the value: tag and version.
  static let headerSize = 2

  /// Deepest nesting of containers a decode follows. Prevents: a recursive type (an indirect
  /// enum, a tree of classes) overflowing the stack on crafted bytes.
  static let maximumDepth = 512

  /// The byte that starts every value and says what follows.
  enum Kind: UInt8 {
    /// Nothing follows.
    case null = 0x00
    case `false` = 0x01
    case `true` = 0x02
    /// A signed integer, zigzag-encoded as a varint (LEB128, at most 10 bytes).
    case signed = 0x03
    /// An unsigned integer as a varint.
    case unsigned = 0x04
    /// The 8 bytes of a `Double`'s bit pattern, little-endian.
    case float64 = 0x05
    /// The 4 bytes of a `Float`'s bit pattern, little-endian.
    case float32 = 0x06
    /// Varint byte count, then that many bytes of UTF-8.
    case string = 0x07
    /// Varint byte count of the body, then entries: varint key length, UTF-8 key, value.
    case keyed = 0x08
    /// Varint byte count of the body, then a varint element count and the elements.
    case unkeyed = 0x09
    /// Varint byte count, then the raw bytes of a `Data`.
    case bytes = 0x0A
    /// The 16 bytes of a `UUID`, in its textual order.
    case uuid = 0x0B
  }

  /// How many bytes `appendVarint` writes for `value`.
  static func varintLength(_ value: UInt64) -> Int {
    max(1, (64 - value.leadingZeroBitCount + 6) / 7)
  }
}

// MARK: Writing

extension Array where Element == UInt8 {
  /// Appends `value` as a LEB128 varint: 7 bits a byte, low bits first, high bit set on every
  /// byte but the last.
  @inline(__always)
  mutating func appendVarint(_ value: UInt64) {
    var value = value
    while value >= 0x80 {
      append(UInt8(truncatingIfNeeded: value) | 0x80)
      value >>= 7
    }
    append(UInt8(truncatingIfNeeded: value))
  }

  /// Appends the 8 bytes of `value`, little-endian.
  @inline(__always)
  mutating func appendFixed64(_ value: UInt64) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }

  /// Appends the 4 bytes of `value`, little-endian.
  @inline(__always)
  mutating func appendFixed32(_ value: UInt32) {
    Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
  }

  /// Appends `text` as a varint length and its UTF-8 bytes (a key or a string body).
  @inline(__always)
  mutating func appendCounted(_ text: String) {
    var text = text
    text.withUTF8 { utf8 in
      appendVarint(UInt64(utf8.count))
      append(contentsOf: utf8)
    }
  }
}

/// Zigzag encoding: small negative numbers become small unsigned ones (0, -1, 1, -2 -> 0, 1, 2, 3).
@inline(__always)
func zigzag(_ value: Int64) -> UInt64 {
  UInt64(bitPattern: (value << 1) ^ (value >> 63))
}

@inline(__always)
func unzigzag(_ value: UInt64) -> Int64 {
  Int64(bitPattern: (value >> 1) ^ (0 &- (value & 1)))
}
