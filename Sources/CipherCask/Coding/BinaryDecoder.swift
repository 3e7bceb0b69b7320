import Foundation

/// The `Decoder` behind `BinaryCaskCoder.decode`: one per value that decodes itself, over the
/// value at `offset`, which must end by `limit` (the end of the enclosing container).
final class BinaryDecoding: Decoder {
  let reader: BinaryReader
  let offset: Int
  let limit: Int
  let parent: BinaryDecoding?
  let key: (any CodingKey)?
  /// Containers between this value and the top.
  let depth: Int

  init(reader: BinaryReader, offset: Int, limit: Int, parent: BinaryDecoding?, key: (any CodingKey)?, depth: Int) {
    self.reader = reader
    self.offset = offset
    self.limit = limit
    self.parent = parent
    self.key = key
    self.depth = depth
  }

  /// Built on demand: only errors and a few custom `init(from:)`s read it.
  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var node: BinaryDecoding? = self
    while let current = node {
      if let key = current.key { path.append(key) }
      node = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    let body = try reader.body(
      of: .keyed, at: offset, limit: limit, type: [String: Any].self, path: { self.codingPath })
    return KeyedDecodingContainer(
      BinaryKeyedDecodingContainer<Key>(entries: BinaryEntries(decoding: self, body: body)))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let body = try reader.body(of: .unkeyed, at: offset, limit: limit, type: [Any].self, path: { self.codingPath })
    return try BinaryUnkeyedDecodingContainer(decoding: self, body: body)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    BinarySingleValueDecodingContainer(decoding: self)
  }
}

// MARK: Values

extension BinaryDecoding {
  /// The value at `offset` as a `T`: primitives and the Foundation types with a layout of
  /// their own directly, anything else through a child `BinaryDecoding` and `T.init(from:)`.
  ///
  /// - Throws: `DecodingError`; `.dataCorrupted` for damaged bytes.
  static func value<T: Decodable>(
    _ type: T.Type, reader: BinaryReader, at offset: Int, limit: Int, parent: BinaryDecoding?,
    key: (any CodingKey)?, depth: Int
  ) throws -> T {
    func path() -> [any CodingKey] {
      var path = parent?.codingPath ?? []
      if let key { path.append(key) }
      return path
    }
    // Type identity checks are pointer compares; the casts below cannot fail.
    if T.self == String.self {
      return unsafeBitCast(try reader.string(at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == Int.self {
      return unsafeBitCast(try reader.integer(Int.self, at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == Double.self {
      return unsafeBitCast(try reader.double(at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == Bool.self {
      return unsafeBitCast(try reader.bool(at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == Date.self {
      let seconds = try reader.double(at: offset, limit: limit, path: path)
      return unsafeBitCast(Date(timeIntervalSinceReferenceDate: seconds), to: T.self)
    } else if let width = integerWidth(type) {
      return try integer(type, width: width, reader: reader, at: offset, limit: limit, path: path)
    } else if T.self == [String].self {
      return unsafeBitCast(try strings(reader: reader, at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == Float.self {
      return unsafeBitCast(try reader.float(at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == UUID.self {
      return unsafeBitCast(try reader.uuid(at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == Data.self, try reader.kind(at: offset, limit: limit, path: path) == .bytes {
      return unsafeBitCast(try reader.data(at: offset, limit: limit, path: path), to: T.self)
    } else if T.self == URL.self, try reader.kind(at: offset, limit: limit, path: path) == .string {
      guard let url = URL(string: try reader.string(at: offset, limit: limit, path: path)) else {
        throw reader.corrupted("not a URL", path)
      }
      return unsafeBitCast(url, to: T.self)
    }
    guard depth < BinaryFormat.maximumDepth else { throw reader.corrupted("values nested too deeply", path) }
    let child = BinaryDecoding(reader: reader, offset: offset, limit: limit, parent: parent, key: key, depth: depth + 1)
    return try T(from: child)
  }

  /// The standard integer types, by width and sign.
  enum IntegerWidth {
    case int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8
  }

  /// Which standard integer `type` is, if it is one. Takes a metatype, not a generic
  /// parameter: a generic `T?` result would instantiate `Optional<T>`'s metadata on every call.
  private static func integerWidth(_ type: Any.Type) -> IntegerWidth? {
    if type == Int64.self { return .int64 }
    if type == Int32.self { return .int32 }
    if type == Int16.self { return .int16 }
    if type == Int8.self { return .int8 }
    if type == UInt.self { return .uint }
    if type == UInt64.self { return .uint64 }
    if type == UInt32.self { return .uint32 }
    if type == UInt16.self { return .uint16 }
    if type == UInt8.self { return .uint8 }
    return nil
  }

  /// A standard integer of type `T` (of width `width`), range-checked.
  private static func integer<T>(
    _ type: T.Type, width: IntegerWidth, reader: BinaryReader, at offset: Int, limit: Int, path: BinaryReader.Path
  ) throws -> T {
    switch width {
    case .int64: unsafeBitCast(try reader.integer(Int64.self, at: offset, limit: limit, path: path), to: T.self)
    case .int32: unsafeBitCast(try reader.integer(Int32.self, at: offset, limit: limit, path: path), to: T.self)
    case .int16: unsafeBitCast(try reader.integer(Int16.self, at: offset, limit: limit, path: path), to: T.self)
    case .int8: unsafeBitCast(try reader.integer(Int8.self, at: offset, limit: limit, path: path), to: T.self)
    case .uint: unsafeBitCast(try reader.integer(UInt.self, at: offset, limit: limit, path: path), to: T.self)
    case .uint64: unsafeBitCast(try reader.integer(UInt64.self, at: offset, limit: limit, path: path), to: T.self)
    case .uint32: unsafeBitCast(try reader.integer(UInt32.self, at: offset, limit: limit, path: path), to: T.self)
    case .uint16: unsafeBitCast(try reader.integer(UInt16.self, at: offset, limit: limit, path: path), to: T.self)
    case .uint8: unsafeBitCast(try reader.integer(UInt8.self, at: offset, limit: limit, path: path), to: T.self)
    }
  }

  /// An array of strings, read directly: the most common array in a model, and the one
  /// `Array.init(from:)` makes slowest.
  private static func strings(
    reader: BinaryReader, at offset: Int, limit: Int, path: BinaryReader.Path
  ) throws -> [String] {
    let body = try reader.body(of: .unkeyed, at: offset, limit: limit, type: [String].self, path: path)
    var position = body.lowerBound
    let count = try reader.varint(at: &position, limit: body.upperBound, path: path)
    guard count <= UInt64(body.upperBound - position) else {
      throw reader.corrupted("an array counts more elements than it has bytes", path)
    }
    var strings: [String] = []
    strings.reserveCapacity(Int(count))
    for _ in 0..<Int(count) {
      let end = try reader.end(ofValueAt: position, limit: body.upperBound, path: path)
      strings.append(try reader.string(at: position, limit: end, path: path))
      position = end
    }
    guard position == body.upperBound else { throw reader.corrupted("an array has bytes after its elements", path) }
    return strings
  }
}
