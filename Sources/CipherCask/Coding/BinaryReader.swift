import Foundation

/// Reads the values of a binary object (Docs/FORMAT.md, "Object encoding"), checking every
/// offset against the end of the enclosing container before it reads, and every length against
/// the bytes left before anything is allocated for it.
///
/// Every function takes `path`, which builds the coding path only when an error needs it.
struct BinaryReader {
  typealias Kind = BinaryFormat.Kind
  typealias Path = () -> [any CodingKey]

  let bytes: [UInt8]

  // MARK: Errors

  func corrupted(_ reason: String, _ path: Path) -> DecodingError {
    DecodingError.dataCorrupted(
      DecodingError.Context(codingPath: path(), debugDescription: "Binary object is damaged: \(reason)."))
  }

  func mismatch(_ type: Any.Type, found kind: Kind, _ path: Path) -> DecodingError {
    if kind == .null {
      return DecodingError.valueNotFound(
        type, DecodingError.Context(codingPath: path(), debugDescription: "Expected \(type) but found null."))
    }
    return DecodingError.typeMismatch(
      type, DecodingError.Context(codingPath: path(), debugDescription: "Expected \(type) but found \(kind)."))
  }

  // MARK: Structure

  /// The kind of the value at `offset`.
  @inline(__always)
  func kind(at offset: Int, limit: Int, path: Path) throws -> Kind {
    guard offset < limit else { throw corrupted("a value is cut off", path) }
    guard let kind = Kind(rawValue: bytes[offset]) else { throw corrupted("unknown value kind", path) }
    return kind
  }

  /// A LEB128 varint at `offset`, which moves past it.
  @inline(__always)
  func varint(at offset: inout Int, limit: Int, path: Path) throws -> UInt64 {
    guard offset < limit else { throw corrupted("a number is cut off", path) }
    let first = bytes[offset]
    offset += 1
    if first < 0x80 { return UInt64(first) }
    var result = UInt64(first & 0x7F)
    var shift: UInt64 = 7
    while true {
      guard offset < limit else { throw corrupted("a number is cut off", path) }
      let byte = bytes[offset]
      offset += 1
      guard shift < 63 || byte <= 1 else { throw corrupted("a number is longer than 64 bits", path) }
      result |= UInt64(byte & 0x7F) << shift
      if byte < 0x80 { return result }
      shift += 7
    }
  }

  /// A varint byte count at `offset` that the bytes before `limit` can hold.
  @inline(__always)
  func length(at offset: inout Int, limit: Int, path: Path) throws -> Int {
    let count = try varint(at: &offset, limit: limit, path: path)
    guard count <= UInt64(limit - offset) else { throw corrupted("a length runs past its container", path) }
    return Int(count)
  }

  /// `count` bytes at `offset`, which must lie before `limit`.
  @inline(__always)
  func need(_ count: Int, at offset: Int, limit: Int, path: Path) throws {
    guard count <= limit - offset else { throw corrupted("a value is cut off", path) }
  }

  /// Where the value at `offset` ends: containers and strings by their length, without
  /// reading what they hold.
  @inline(__always)
  func end(ofValueAt offset: Int, limit: Int, path: Path) throws -> Int {
    let kind = try self.kind(at: offset, limit: limit, path: path)
    var position = offset + 1
    switch kind {
    case .null, .false, .true: break
    case .signed, .unsigned: _ = try varint(at: &position, limit: limit, path: path)
    case .float64: position += 8
    case .float32: position += 4
    case .uuid: position += 16
    case .string, .keyed, .unkeyed, .bytes: position += try length(at: &position, limit: limit, path: path)
    }
    guard position <= limit else { throw corrupted("a value is cut off", path) }
    return position
  }

  /// The body of the container at `offset`: where it starts and ends.
  func body(
    of expected: Kind, at offset: Int, limit: Int, type: @autoclosure () -> Any.Type, path: Path
  ) throws -> Range<Int> {
    let kind = try self.kind(at: offset, limit: limit, path: path)
    guard kind == expected else { throw mismatch(type(), found: kind, path) }
    var position = offset + 1
    let count = try length(at: &position, limit: limit, path: path)
    return position..<(position + count)
  }

  // MARK: Values

  func bool(at offset: Int, limit: Int, path: Path) throws -> Bool {
    switch try kind(at: offset, limit: limit, path: path) {
    case .true: return true
    case .false: return false
    case let other: throw mismatch(Bool.self, found: other, path)
    }
  }

  func string(at offset: Int, limit: Int, path: Path) throws -> String {
    let body = try self.body(of: .string, at: offset, limit: limit, type: String.self, path: path)
    // `String(decoding:)` repairs invalid UTF-8; the text is valid exactly when the repair
    // changed nothing. (Faster than `String(validating:)`, which is not specialized here.)
    return try bytes.withUnsafeBufferPointer { all in
      let utf8 = UnsafeBufferPointer(rebasing: all[body])
      var text = String(decoding: utf8, as: UTF8.self)
      let unchanged = text.withUTF8 { decoded in
        guard decoded.count == utf8.count else { return false }
        guard let decodedBase = decoded.baseAddress, let base = utf8.baseAddress else { return true }  // both empty
        return memcmp(decodedBase, base, utf8.count) == 0
      }
      guard unchanged else { throw corrupted("a string is not UTF-8", path) }
      return text
    }
  }

  /// An integer of type `T`, written as a signed or an unsigned varint, if it fits.
  func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int, limit: Int, path: Path) throws -> T {
    let kind = try self.kind(at: offset, limit: limit, path: path)
    var position = offset + 1
    let value: T?
    switch kind {
    case .signed: value = T(exactly: unzigzag(try varint(at: &position, limit: limit, path: path)))
    case .unsigned: value = T(exactly: try varint(at: &position, limit: limit, path: path))
    default: throw mismatch(type, found: kind, path)
    }
    guard let value else { throw corrupted("the number does not fit \(type)", path) }
    return value
  }

  func fixed64(at offset: Int, limit: Int, path: Path) throws -> UInt64 {
    try need(8, at: offset, limit: limit, path: path)
    var value: UInt64 = 0
    for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
    return value
  }

  func fixed32(at offset: Int, limit: Int, path: Path) throws -> UInt32 {
    try need(4, at: offset, limit: limit, path: path)
    var value: UInt32 = 0
    for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
    return value
  }

  /// A `Double`: its own 8 bytes, a `Float`'s 4, or an integer that converts exactly.
  func double(at offset: Int, limit: Int, path: Path) throws -> Double {
    let kind = try self.kind(at: offset, limit: limit, path: path)
    switch kind {
    case .float64: return Double(bitPattern: try fixed64(at: offset + 1, limit: limit, path: path))
    case .float32: return Double(Float(bitPattern: try fixed32(at: offset + 1, limit: limit, path: path)))
    case .signed, .unsigned:
      let integer = try self.integer(Int64.self, at: offset, limit: limit, path: path)
      guard let value = Double(exactly: integer) else { throw corrupted("the number does not fit Double", path) }
      return value
    default: throw mismatch(Double.self, found: kind, path)
    }
  }

  /// A `Float`: its own 4 bytes, or a `Double` within its range.
  func float(at offset: Int, limit: Int, path: Path) throws -> Float {
    let kind = try self.kind(at: offset, limit: limit, path: path)
    if kind == .float32 { return Float(bitPattern: try fixed32(at: offset + 1, limit: limit, path: path)) }
    let value = try double(at: offset, limit: limit, path: path)
    guard !value.isFinite || abs(value) <= Double(Float.greatestFiniteMagnitude) else {
      throw corrupted("the number does not fit Float", path)
    }
    return Float(value)
  }

  func data(at offset: Int, limit: Int, path: Path) throws -> Data {
    Data(bytes[try body(of: .bytes, at: offset, limit: limit, type: Data.self, path: path)])
  }

  /// A `UUID`: 16 bytes, or its text.
  func uuid(at offset: Int, limit: Int, path: Path) throws -> UUID {
    let kind = try self.kind(at: offset, limit: limit, path: path)
    if kind == .string {
      guard let uuid = UUID(uuidString: try string(at: offset, limit: limit, path: path)) else {
        throw corrupted("not a UUID", path)
      }
      return uuid
    }
    guard kind == .uuid else { throw mismatch(UUID.self, found: kind, path) }
    let start = offset + 1
    try need(16, at: start, limit: limit, path: path)
    let b = bytes
    return UUID(
      uuid: (
        b[start], b[start + 1], b[start + 2], b[start + 3], b[start + 4], b[start + 5], b[start + 6], b[start + 7],
        b[start + 8], b[start + 9], b[start + 10], b[start + 11], b[start + 12], b[start + 13], b[start + 14],
        b[start + 15]
      ))
  }
}
