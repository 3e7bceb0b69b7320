import Foundation

/// The `Decoder` of one value of a `JSONTapeDecoding` text: the value at token `index`.
/// Every failure gives the whole text up (`JSONTapeDecoding.giveUp()`).
final class JSONTapeDecoder: Decoder {
  let state: JSONTapeDecoding
  let index: Int
  let parent: JSONTapeDecoder?
  let key: (any CodingKey)?
  /// For an object: the key token where the next lookup starts (fields are mostly read in
  /// the order they are written).
  var hint = 0

  init(state: JSONTapeDecoding, index: Int, parent: JSONTapeDecoder?, key: (any CodingKey)?) {
    self.state = state
    self.index = index
    self.parent = parent
    self.key = key
  }

  /// Built on demand: only a few custom `init(from:)`s read it.
  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var node: JSONTapeDecoder? = self
    while let current = node {
      if let key = current.key { path.append(key) }
      node = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { state.userInfo }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard state.token(index).kind == .object else { throw state.giveUp() }
    return KeyedDecodingContainer(JSONTapeKeyedContainer<Key>(decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard state.token(index).kind == .array else { throw state.giveUp() }
    return JSONTapeUnkeyedContainer(decoder: self)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    JSONTapeSingleValueContainer(decoder: self)
  }
}

/// A key of a path or of `superDecoder()`.
struct JSONTapeKey: CodingKey {
  var stringValue: String
  var intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
  }

  init(intValue: Int) {
    self.stringValue = "Index \(intValue)"
    self.intValue = intValue
  }
}

struct JSONTapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: JSONTapeDecoder
  var state: JSONTapeDecoding { decoder.state }
  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] {
    var seen = Set<String>()
    var keys: [Key] = []
    forEachMember { keyIndex in
      guard let name = try? name(ofKeyAt: keyIndex) else { return }
      if seen.insert(name).inserted, let key = Key(stringValue: name) { keys.append(key) }
    }
    return keys
  }

  /// Calls `body` with the index of each member's key token, in order.
  private func forEachMember(_ body: (Int) -> Void) {
    let object = state.token(decoder.index)
    var key = decoder.index + 1
    for _ in 0..<Int(object.length) {
      body(key)
      key = Int(state.token(key + 1).end)
    }
  }

  /// The name a key token stands for, as a Swift string.
  private func name(ofKeyAt keyIndex: Int) throws -> String {
    let token = state.token(keyIndex)
    if token.flags & JSONTape.Flags.renamed != 0 {
      return state.tape.withName(of: token, in: state.bytes) { String(decoding: $0, as: UTF8.self) }
    }
    // A key with an escape or a non-ASCII byte is never renamed here: its snake-case name is
    // Foundation's to give.
    if state.snakeCase, token.flags & (JSONTape.Flags.escaped | JSONTape.Flags.nonASCII) != 0 {
      throw state.giveUp()
    }
    return try state.string(token)
  }

  /// The index of the value token of `key`'s member, the first one when two have its name.
  private func find(_ key: Key) throws -> Int? {
    let object = state.token(decoder.index)
    guard object.length > 0 else { return nil }
    var name = key.stringValue
    let plain = name.withUTF8 { utf8 -> Int?? in
      guard object.flags & JSONTape.Flags.slowKeys == 0, utf8.allSatisfy({ $0 < 0x80 }) else { return .none }
      return .some(findPlain(UnsafeRawBufferPointer(utf8), in: object))
    }
    if let plain { return plain }
    // Compared as Swift strings (canonical equivalence), as Foundation's dictionary does.
    var keyIndex = decoder.index + 1
    for _ in 0..<Int(object.length) {
      if try self.name(ofKeyAt: keyIndex) == name { return keyIndex + 1 }
      keyIndex = Int(state.token(keyIndex + 1).end)
    }
    return nil
  }

  /// Looks an ASCII name up among distinct plain ASCII keys, from the hint on.
  private func findPlain(_ name: UnsafeRawBufferPointer, in object: JSONTape.Token) -> Int? {
    let hash = JSONTape.hash(name)
    let first = decoder.index + 1
    let end = Int(object.end)
    var keyIndex = decoder.hint > decoder.index && decoder.hint < end ? decoder.hint : first
    for _ in 0..<Int(object.length) {
      let token = state.token(keyIndex)
      let next = Int(state.token(keyIndex + 1).end)
      if token.hash == hash, Int(token.nameLength) == name.count,
        state.tape.withName(of: token, in: state.bytes, { $0.elementsEqual(name) })
      {
        decoder.hint = next
        return keyIndex + 1
      }
      keyIndex = next == end ? first : next
    }
    return nil
  }

  private func value(_ key: Key) throws -> Int {
    guard let value = try find(key) else { throw state.giveUp() }
    return value
  }

  func contains(_ key: Key) -> Bool {
    (try? find(key)) != nil
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    state.token(try value(key)).kind == .null
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try state.bool(state.token(try value(key))) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try state.string(state.token(try value(key))) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try state.double(state.token(try value(key))) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try state.float(state.token(try value(key))) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
  func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try integer(key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }
  func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try integer(key) }

  private func integer<I: FixedWidthInteger>(_ key: Key) throws -> I {
    try state.integer(I.self, state.token(try value(key)))
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try state.value(type, at: try value(key), in: decoder, key: key)
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let index = try find(key), state.token(index).kind != .null else { return nil }
    return try state.value(type, at: index, in: decoder, key: key)
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try JSONTapeDecoder(state: state, index: try value(key), parent: decoder, key: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try JSONTapeDecoder(state: state, index: try value(key), parent: decoder, key: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    let key = JSONTapeKey(stringValue: "super")
    // Foundation gives a decoder of `null` for a missing key; that one is left to it.
    guard let superKey = Key(stringValue: "super"), let index = try find(superKey) else { throw state.giveUp() }
    return JSONTapeDecoder(state: state, index: index, parent: decoder, key: key)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    JSONTapeDecoder(state: state, index: try value(key), parent: decoder, key: key)
  }
}

struct JSONTapeUnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: JSONTapeDecoder
  let count: Int?
  var currentIndex = 0
  /// The token of the next element.
  private var position: Int

  init(decoder: JSONTapeDecoder) {
    self.decoder = decoder
    self.count = Int(decoder.state.token(decoder.index).length)
    self.position = decoder.index + 1
  }

  var state: JSONTapeDecoding { decoder.state }
  var codingPath: [any CodingKey] { decoder.codingPath }
  var isAtEnd: Bool { currentIndex >= count! }

  /// The next element's token index; moves past it.
  private mutating func next() throws -> Int {
    guard !isAtEnd else { throw state.giveUp() }
    let element = position
    position = Int(state.token(element).end)
    currentIndex += 1
    return element
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd else { throw state.giveUp() }
    guard state.token(position).kind == .null else { return false }
    _ = try next()
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try state.bool(state.token(try next())) }
  mutating func decode(_ type: String.Type) throws -> String { try state.string(state.token(try next())) }
  mutating func decode(_ type: Double.Type) throws -> Double { try state.double(state.token(try next())) }
  mutating func decode(_ type: Float.Type) throws -> Float { try state.float(state.token(try next())) }
  mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
  mutating func decode(_ type: Int128.Type) throws -> Int128 { try integer() }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
  mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try integer() }

  /// Decoded before moving on, so that a failure leaves the container where it was.
  private mutating func integer<I: FixedWidthInteger>() throws -> I {
    guard !isAtEnd else { throw state.giveUp() }
    let value = try state.integer(I.self, state.token(position))
    _ = try next()
    return value
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    guard !isAtEnd else { throw state.giveUp() }
    let value = try state.value(type, at: position, in: decoder, key: JSONTapeKey(intValue: currentIndex))
    _ = try next()
    return value
  }

  /// Past the end Foundation answers `nil` and still counts an element; so does this.
  mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
    guard !isAtEnd else {
      currentIndex += 1
      return nil
    }
    if state.token(position).kind == .null {
      _ = try next()
      return nil
    }
    return try decode(type)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    guard !isAtEnd else { throw state.giveUp() }
    let container = try JSONTapeDecoder(
      state: state, index: position, parent: decoder, key: JSONTapeKey(intValue: currentIndex)
    ).container(keyedBy: type)
    _ = try next()
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard !isAtEnd else { throw state.giveUp() }
    let container = try JSONTapeDecoder(
      state: state, index: position, parent: decoder, key: JSONTapeKey(intValue: currentIndex)
    ).unkeyedContainer()
    _ = try next()
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    guard !isAtEnd else { throw state.giveUp() }
    let element = JSONTapeDecoder(
      state: state, index: position, parent: decoder, key: JSONTapeKey(intValue: currentIndex))
    _ = try next()
    return element
  }
}

struct JSONTapeSingleValueContainer: SingleValueDecodingContainer {
  let decoder: JSONTapeDecoder
  var state: JSONTapeDecoding { decoder.state }
  var codingPath: [any CodingKey] { decoder.codingPath }
  private var token: JSONTape.Token { state.token(decoder.index) }

  func decodeNil() -> Bool { token.kind == .null }
  func decode(_ type: Bool.Type) throws -> Bool { try state.bool(token) }
  func decode(_ type: String.Type) throws -> String { try state.string(token) }
  func decode(_ type: Double.Type) throws -> Double { try state.double(token) }
  func decode(_ type: Float.Type) throws -> Float { try state.float(token) }
  func decode(_ type: Int.Type) throws -> Int { try state.integer(Int.self, token) }
  func decode(_ type: Int8.Type) throws -> Int8 { try state.integer(Int8.self, token) }
  func decode(_ type: Int16.Type) throws -> Int16 { try state.integer(Int16.self, token) }
  func decode(_ type: Int32.Type) throws -> Int32 { try state.integer(Int32.self, token) }
  func decode(_ type: Int64.Type) throws -> Int64 { try state.integer(Int64.self, token) }
  func decode(_ type: Int128.Type) throws -> Int128 { try state.integer(Int128.self, token) }
  func decode(_ type: UInt.Type) throws -> UInt { try state.integer(UInt.self, token) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try state.integer(UInt8.self, token) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try state.integer(UInt16.self, token) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try state.integer(UInt32.self, token) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try state.integer(UInt64.self, token) }
  func decode(_ type: UInt128.Type) throws -> UInt128 { try state.integer(UInt128.self, token) }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try state.value(type, at: decoder.index, in: decoder.parent, key: decoder.key)
  }
}
