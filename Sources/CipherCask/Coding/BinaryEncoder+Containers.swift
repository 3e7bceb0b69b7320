import Foundation

/// A keyed container: each entry is the key's UTF-8 (varint length first) and the value.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let encoding: BinaryEncoding
  let body: BinaryContainerBody

  var codingPath: [any CodingKey] { encoding.codingPath }

  private func appendKey(_ key: Key) {
    body.bytes.appendCounted(key.stringValue)
  }

  mutating func encodeNil(forKey key: Key) throws {
    appendKey(key)
    body.bytes.append(BinaryFormat.Kind.null.rawValue)
  }

  mutating func encode(_ value: Bool, forKey key: Key) throws {
    appendKey(key)
    body.bytes.append(value ? BinaryFormat.Kind.true.rawValue : BinaryFormat.Kind.false.rawValue)
  }

  mutating func encode(_ value: String, forKey key: Key) throws {
    appendKey(key)
    BinaryEncoding.appendString(value, to: &body.bytes)
  }

  mutating func encode(_ value: Double, forKey key: Key) throws {
    appendKey(key)
    BinaryEncoding.appendDouble(value, to: &body.bytes)
  }

  mutating func encode(_ value: Int, forKey key: Key) throws {
    appendKey(key)
    BinaryEncoding.appendSigned(Int64(value), to: &body.bytes)
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    try put(value, forKey: key)
  }

  mutating func encode(_ value: Float, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(value, forKey: key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(value, forKey: key) }

  private func put<T: Encodable>(_ value: T, forKey key: Key) throws {
    appendKey(key)
    try BinaryEncoding.append(value, into: body, parent: encoding, key: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    pendingEncoding(forKey: key).container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    pendingEncoding(forKey: key).unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    if let key = Key(stringValue: "super") { return pendingEncoding(forKey: key) }
    return pendingEncoding(forKey: BinaryIndexKey(stringValue: "super"))
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    pendingEncoding(forKey: key)
  }

  /// An entry whose value is written when this container is.
  private func pendingEncoding(forKey key: some CodingKey) -> BinaryEncoding {
    body.bytes.appendCounted(key.stringValue)
    let child = BinaryEncoding(parent: encoding, key: key)
    body.pending.append((body.bytes.count, child))
    return child
  }
}

/// An unkeyed container: a count, then the elements.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
  let encoding: BinaryEncoding
  let body: BinaryContainerBody

  var codingPath: [any CodingKey] { encoding.codingPath }
  var count: Int { body.count }

  mutating func encodeNil() throws {
    body.count += 1
    body.bytes.append(BinaryFormat.Kind.null.rawValue)
  }

  mutating func encode(_ value: String) throws {
    body.count += 1
    BinaryEncoding.appendString(value, to: &body.bytes)
  }

  mutating func encode<T: Encodable>(_ value: T) throws { try put(value) }
  mutating func encode(_ value: Bool) throws { try put(value) }
  mutating func encode(_ value: Double) throws { try put(value) }
  mutating func encode(_ value: Int) throws { try put(value) }
  mutating func encode(_ value: Float) throws { try put(value) }
  mutating func encode(_ value: Int8) throws { try put(value) }
  mutating func encode(_ value: Int16) throws { try put(value) }
  mutating func encode(_ value: Int32) throws { try put(value) }
  mutating func encode(_ value: Int64) throws { try put(value) }
  mutating func encode(_ value: UInt) throws { try put(value) }
  mutating func encode(_ value: UInt8) throws { try put(value) }
  mutating func encode(_ value: UInt16) throws { try put(value) }
  mutating func encode(_ value: UInt32) throws { try put(value) }
  mutating func encode(_ value: UInt64) throws { try put(value) }

  private func put<T: Encodable>(_ value: T) throws {
    let key = BinaryIndexKey(intValue: body.count)
    body.count += 1
    try BinaryEncoding.append(value, into: body, parent: encoding, key: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
    NestedKey
  > {
    pendingEncoding().container(keyedBy: keyType)
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    pendingEncoding().unkeyedContainer()
  }

  mutating func superEncoder() -> any Encoder {
    pendingEncoding()
  }

  private func pendingEncoding() -> BinaryEncoding {
    let child = BinaryEncoding(parent: encoding, key: BinaryIndexKey(intValue: body.count))
    body.count += 1
    body.pending.append((body.bytes.count, child))
    return child
  }
}

/// A single value: its bytes replace whatever the encoding held.
struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
  let encoding: BinaryEncoding

  var codingPath: [any CodingKey] { encoding.codingPath }

  mutating func encodeNil() throws {
    encoding.storage = .single([BinaryFormat.Kind.null.rawValue])
  }

  mutating func encode<T: Encodable>(_ value: T) throws { try put(value) }
  mutating func encode(_ value: Bool) throws { try put(value) }
  mutating func encode(_ value: String) throws { try put(value) }
  mutating func encode(_ value: Double) throws { try put(value) }
  mutating func encode(_ value: Int) throws { try put(value) }
  mutating func encode(_ value: Float) throws { try put(value) }
  mutating func encode(_ value: Int8) throws { try put(value) }
  mutating func encode(_ value: Int16) throws { try put(value) }
  mutating func encode(_ value: Int32) throws { try put(value) }
  mutating func encode(_ value: Int64) throws { try put(value) }
  mutating func encode(_ value: UInt) throws { try put(value) }
  mutating func encode(_ value: UInt8) throws { try put(value) }
  mutating func encode(_ value: UInt16) throws { try put(value) }
  mutating func encode(_ value: UInt32) throws { try put(value) }
  mutating func encode(_ value: UInt64) throws { try put(value) }

  private func put<T: Encodable>(_ value: T) throws {
    var bytes: [UInt8] = []
    // The value is encoded as this encoding's own value, not as a child of it.
    try BinaryEncoding.append(value, to: &bytes, parent: encoding.parent, key: encoding.key)
    encoding.storage = .single(bytes)
  }
}

/// The key of an element of an unkeyed container (and of `super` where a type's keys have no
/// such case), for coding paths.
struct BinaryIndexKey: CodingKey {
  let stringValue: String
  let intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
    self.intValue = nil
  }

  init(intValue: Int) {
    self.stringValue = "Index \(intValue)"
    self.intValue = intValue
  }
}
