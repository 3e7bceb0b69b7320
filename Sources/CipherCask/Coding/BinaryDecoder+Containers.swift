import Foundation

/// A keyed container over `BinaryEntries`.
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  // One reference, not two. Prevents: the standard library's type-erasing box copying the
  // container (two retains and releases) around every field it decodes.
  let entries: BinaryEntries

  var decoding: BinaryDecoding { entries.decoding }

  var codingPath: [any CodingKey] { decoding.codingPath }

  /// The coding path of `key`'s value, for errors. Called from closures written at each call
  /// site: a function returning the closure instead allocated its context for every field read.
  private func path(_ key: some CodingKey) -> [any CodingKey] {
    decoding.codingPath + [key]
  }

  var allKeys: [Key] {
    guard let all = try? entries.all(path: { [] }) else { return [] }
    return all.compactMap { Key(stringValue: entries.key(of: $0)) }
  }

  func contains(_ key: Key) -> Bool {
    (try? entries.find(key.stringValue, path: { path(key) })) != nil
  }

  /// Where the value under `key` starts.
  ///
  /// - Throws: `DecodingError.keyNotFound` when there is none.
  private func offset(of key: some CodingKey) throws -> Int {
    guard let offset = try entries.find(key.stringValue, path: { path(key) }) else {
      throw DecodingError.keyNotFound(
        key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value for key \(key.stringValue)."))
    }
    return offset
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    try entries.reader.kind(at: try offset(of: key), limit: entries.end, path: { path(key) }) == .null
  }

  private func value<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try BinaryDecoding.value(
      type, reader: entries.reader, at: try offset(of: key), limit: entries.end, parent: decoding, key: key,
      depth: decoding.depth)
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(type, forKey: key) }
  // The common kinds read directly. Prevents: each field of those kinds going through the
  // generic `value` and its chain of type checks (a third of a small struct's decode).
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try entries.reader.bool(at: try offset(of: key), limit: entries.end, path: { path(key) })
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try entries.reader.string(at: try offset(of: key), limit: entries.end, path: { path(key) })
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try entries.reader.double(at: try offset(of: key), limit: entries.end, path: { path(key) })
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(type, forKey: key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try entries.reader.integer(Int.self, at: try offset(of: key), limit: entries.end, path: { path(key) })
  }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(type, forKey: key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(type, forKey: key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(type, forKey: key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(type, forKey: key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(type, forKey: key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(type, forKey: key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(type, forKey: key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(type, forKey: key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(type, forKey: key) }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let offset = try entries.find(key.stringValue, path: { path(key) }),
      try entries.reader.kind(at: offset, limit: entries.end, path: { path(key) }) != .null
    else { return nil }
    return try BinaryDecoding.value(
      type, reader: entries.reader, at: offset, limit: entries.end, parent: decoding, key: key, depth: decoding.depth)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try child(forKey: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(forKey: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    try child(forKey: BinaryIndexKey(stringValue: "super"))
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    try child(forKey: key)
  }

  private func child(forKey key: some CodingKey) throws -> BinaryDecoding {
    guard decoding.depth < BinaryFormat.maximumDepth else {
      throw entries.reader.corrupted("values nested too deeply", { path(key) })
    }
    return BinaryDecoding(
      reader: entries.reader, offset: try offset(of: key), limit: entries.end, parent: decoding, key: key,
      depth: decoding.depth + 1)
  }
}

/// An unkeyed container: its count, then elements read in order.
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
  let decoding: BinaryDecoding
  let end: Int
  let count: Int?
  private(set) var currentIndex = 0
  /// Where the next element starts.
  private var position: Int

  init(decoding: BinaryDecoding, body: Range<Int>) throws {
    self.decoding = decoding
    self.end = body.upperBound
    var position = body.lowerBound
    let count = try decoding.reader.varint(at: &position, limit: end, path: { decoding.codingPath })
    // Every element takes at least a byte: a larger count is damage, not a reason to allocate.
    guard count <= UInt64(end - position) else {
      throw decoding.reader.corrupted("an array counts more elements than it has bytes", { decoding.codingPath })
    }
    self.count = Int(count)
    self.position = position
  }

  var codingPath: [any CodingKey] { decoding.codingPath }
  var isAtEnd: Bool { currentIndex >= (count ?? 0) }

  private var key: BinaryIndexKey { BinaryIndexKey(intValue: currentIndex) }

  private func path() -> [any CodingKey] { decoding.codingPath + [key] }

  private func checkNotAtEnd(_ type: Any.Type) throws {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type, DecodingError.Context(codingPath: path(), debugDescription: "The array has no more elements."))
    }
  }

  mutating func decodeNil() throws -> Bool {
    try checkNotAtEnd(Never.self)
    guard try decoding.reader.kind(at: position, limit: end, path: path) == .null else { return false }
    position += 1
    currentIndex += 1
    return true
  }

  private mutating func next<T: Decodable>(_ type: T.Type) throws -> T {
    try checkNotAtEnd(type)
    let valueEnd = try decoding.reader.end(ofValueAt: position, limit: end, path: path)
    let value = try BinaryDecoding.value(
      type, reader: decoding.reader, at: position, limit: valueEnd, parent: decoding, key: key, depth: decoding.depth)
    position = valueEnd
    currentIndex += 1
    return value
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) }
  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) }
  mutating func decode(_ type: String.Type) throws -> String { try next(type) }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try nextChild().container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try nextChild().unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder {
    try nextChild()
  }

  private mutating func nextChild() throws -> BinaryDecoding {
    try checkNotAtEnd(Any.self)
    guard decoding.depth < BinaryFormat.maximumDepth else {
      throw decoding.reader.corrupted("values nested too deeply", path)
    }
    let valueEnd = try decoding.reader.end(ofValueAt: position, limit: end, path: path)
    let child = BinaryDecoding(
      reader: decoding.reader, offset: position, limit: valueEnd, parent: decoding, key: key,
      depth: decoding.depth + 1)
    position = valueEnd
    currentIndex += 1
    return child
  }
}

/// A single value: the decoding's own value.
struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
  let decoding: BinaryDecoding

  var codingPath: [any CodingKey] { decoding.codingPath }

  func decodeNil() -> Bool {
    (try? decoding.reader.kind(at: decoding.offset, limit: decoding.limit, path: { [] })) == .null
  }

  private func value<T: Decodable>(_ type: T.Type) throws -> T {
    try BinaryDecoding.value(
      type, reader: decoding.reader, at: decoding.offset, limit: decoding.limit, parent: decoding.parent,
      key: decoding.key, depth: decoding.depth)
  }

  func decode<T: Decodable>(_ type: T.Type) throws -> T { try value(type) }
  func decode(_ type: Bool.Type) throws -> Bool { try value(type) }
  func decode(_ type: String.Type) throws -> String { try value(type) }
  func decode(_ type: Double.Type) throws -> Double { try value(type) }
  func decode(_ type: Float.Type) throws -> Float { try value(type) }
  func decode(_ type: Int.Type) throws -> Int { try value(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try value(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try value(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try value(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try value(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try value(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try value(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try value(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try value(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try value(type) }
}
