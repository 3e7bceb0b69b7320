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
      BinaryKeyedDecodingContainer<Key>(decoding: self, entries: BinaryEntries(reader: reader, body: body)))
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
    } else if let integer = try integer(type, reader: reader, at: offset, limit: limit, path: path) {
      return integer
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

  /// The standard integers of every width, range-checked.
  ///
  /// - Returns: `nil` when `T` is not one of them.
  private static func integer<T>(
    _ type: T.Type, reader: BinaryReader, at offset: Int, limit: Int, path: BinaryReader.Path
  ) throws -> T? {
    func read<I: FixedWidthInteger>(_ integer: I.Type) throws -> T {
      unsafeBitCast(try reader.integer(integer, at: offset, limit: limit, path: path), to: T.self)
    }
    if T.self == Int64.self { return try read(Int64.self) }
    if T.self == Int32.self { return try read(Int32.self) }
    if T.self == Int16.self { return try read(Int16.self) }
    if T.self == Int8.self { return try read(Int8.self) }
    if T.self == UInt.self { return try read(UInt.self) }
    if T.self == UInt64.self { return try read(UInt64.self) }
    if T.self == UInt32.self { return try read(UInt32.self) }
    if T.self == UInt16.self { return try read(UInt16.self) }
    if T.self == UInt8.self { return try read(UInt8.self) }
    return nil
  }
}
