import Foundation

/// The `Encoder` behind `BinaryCaskCoder.encode`: one per value that encodes itself (a struct,
/// an enum, an array...), writing the layout of Docs/FORMAT.md ("Object encoding").
///
/// Each container gathers its body in its own buffer; a value that encodes itself is written
/// into its parent's buffer as soon as its `encode(to:)` returns, so only containers handed out
/// by `nestedContainer` and `superEncoder` (which the caller may fill in any order) wait, as
/// `pending`, until their parent is written.
final class BinaryEncoding: Encoder {
  /// What the value asked for: nothing yet, a container, or a single value's bytes.
  enum Storage {
    case empty
    case keyed(BinaryContainerBody)
    case unkeyed(BinaryContainerBody)
    case single([UInt8])
  }

  let parent: BinaryEncoding?
  let key: (any CodingKey)?
  var storage = Storage.empty

  init(parent: BinaryEncoding?, key: (any CodingKey)?) {
    self.parent = parent
    self.key = key
  }

  /// Built on demand: most encodes never read it.
  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var node: BinaryEncoding? = self
    while let current = node {
      if let key = current.key { path.append(key) }
      node = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let body: BinaryContainerBody
    if case .keyed(let existing) = storage {
      body = existing  // a subclass and its superclass may share one container
    } else {
      precondition(isEmpty, "BinaryCaskCoder: a value asked for a keyed container after encoding something else")
      body = BinaryContainerBody()
      storage = .keyed(body)
    }
    return KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(encoding: self, body: body))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let body: BinaryContainerBody
    if case .unkeyed(let existing) = storage {
      body = existing
    } else {
      precondition(isEmpty, "BinaryCaskCoder: a value asked for an unkeyed container after encoding something else")
      body = BinaryContainerBody()
      storage = .unkeyed(body)
    }
    return BinaryUnkeyedEncodingContainer(encoding: self, body: body)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    BinarySingleValueEncodingContainer(encoding: self)
  }

  private var isEmpty: Bool {
    if case .empty = storage { return true }
    if case .single = storage { return false }
    return false
  }

  /// Appends the encoded value to `out`. A value that wrote nothing is an empty keyed
  /// container, as JSON writes `{}`.
  func write(into out: inout [UInt8]) {
    switch storage {
    case .empty: out.append(contentsOf: [BinaryFormat.Kind.keyed.rawValue, 0])
    case .keyed(let body): body.write(.keyed, into: &out)
    case .unkeyed(let body): body.write(.unkeyed, into: &out)
    case .single(let bytes): out.append(contentsOf: bytes)
    }
  }
}

/// The body of one container while it is written: entries (keyed) or elements (unkeyed).
///
/// `@exclusivity(unchecked)`: a body is written by one encode on one thread, and every access
/// ends inside the container method that makes it. Prevents: a run-time exclusivity check
/// (`swift_beginAccess`) at every field written.
final class BinaryContainerBody {
  @exclusivity(unchecked) var bytes: [UInt8]
  /// Elements of an unkeyed container.
  @exclusivity(unchecked) var count = 0
  /// Nested containers and super encoders, with where in `bytes` each goes.
  @exclusivity(unchecked) var pending: [(offset: Int, encoding: BinaryEncoding)] = []

  init() {
    bytes = []
    // Room for a small struct's fields without growing the buffer as they are appended.
    bytes.reserveCapacity(128)
  }

  func write(_ kind: BinaryFormat.Kind, into out: inout [UInt8]) {
    var body: [UInt8]
    if pending.isEmpty {
      body = bytes
    } else {
      body = []
      body.reserveCapacity(bytes.count + 16 * pending.count)
      var from = 0
      for (offset, encoding) in pending {
        body.append(contentsOf: bytes[from..<offset])
        encoding.write(into: &body)
        from = offset
      }
      body.append(contentsOf: bytes[from...])
    }
    out.append(kind.rawValue)
    if kind == .unkeyed {
      var countBytes: [UInt8] = []
      countBytes.appendVarint(UInt64(count))
      out.appendVarint(UInt64(countBytes.count + body.count))
      out.append(contentsOf: countBytes)
    } else {
      out.appendVarint(UInt64(body.count))
    }
    out.append(contentsOf: body)
  }
}

// MARK: Values

extension BinaryEncoding {
  /// Appends `value`: primitives and the Foundation types with a layout of their own directly,
  /// anything else through a child `BinaryEncoding` and its own `encode(to:)`.
  ///
  /// - Throws: `EncodingError.invalidValue` for a URL without text; whatever the value's own
  ///   `encode(to:)` throws.
  static func append<T: Encodable>(
    _ value: T, to out: inout [UInt8], parent: BinaryEncoding?, key: (any CodingKey)?
  ) throws {
    if appendDirectly(value, to: &out) { return }
    let child = BinaryEncoding(parent: parent, key: key)
    try value.encode(to: child)
    child.write(into: &out)
  }

  /// `append` into a container's body. The value's own `encode(to:)` runs before the body's
  /// bytes are touched, and must leave them as they were.
  ///
  /// - Throws: `EncodingError.invalidValue` when the value wrote into this container from
  ///   inside its own `encode(to:)` (through a container it kept). Prevents: those bytes
  ///   landing between the value's key and the value, unnoticed (`bytes` has no run-time
  ///   exclusivity check, which would have stopped the process instead).
  static func append<T: Encodable>(
    _ value: T, into body: BinaryContainerBody, parent: BinaryEncoding?, key: (any CodingKey)?
  ) throws {
    if appendDirectly(value, to: &body.bytes) { return }
    let child = BinaryEncoding(parent: parent, key: key)
    let mark = (body.bytes.count, body.pending.count)
    try value.encode(to: child)
    guard body.bytes.count == mark.0, body.pending.count == mark.1 else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: child.codingPath,
          debugDescription: "A value wrote into its enclosing container while encoding itself."))
    }
    child.write(into: &body.bytes)
  }

  /// Appends `value` when it is one of the kinds with a layout of their own, running no code
  /// of the value's.
  ///
  /// - Returns: whether it was one.
  private static func appendDirectly<T: Encodable>(_ value: T, to out: inout [UInt8]) -> Bool {
    // Type identity checks are pointer compares; the casts below cannot fail.
    if T.self == String.self {
      appendString(unsafeBitCast(value, to: String.self), to: &out)
    } else if T.self == Int.self {
      appendSigned(Int64(unsafeBitCast(value, to: Int.self)), to: &out)
    } else if T.self == Double.self {
      appendDouble(unsafeBitCast(value, to: Double.self), to: &out)
    } else if T.self == Bool.self {
      out.append(
        unsafeBitCast(value, to: Bool.self) ? BinaryFormat.Kind.true.rawValue : BinaryFormat.Kind.false.rawValue)
    } else if T.self == Date.self {
      appendDouble(unsafeBitCast(value, to: Date.self).timeIntervalSinceReferenceDate, to: &out)
    } else if appendInteger(value, to: &out) {
      return true
    } else if T.self == [String].self {
      // The most common array in a model, written without `Array.encode(to:)`'s containers,
      // straight into `out`: the body's length is known from the strings' UTF-8 counts.
      let strings = unsafeBitCast(value, to: [String].self)
      var bodyLength = BinaryFormat.varintLength(UInt64(strings.count))
      for string in strings {
        let count = string.utf8.count
        bodyLength += 1 + BinaryFormat.varintLength(UInt64(count)) + count
      }
      out.append(BinaryFormat.Kind.unkeyed.rawValue)
      out.appendVarint(UInt64(bodyLength))
      out.appendVarint(UInt64(strings.count))
      for string in strings { appendString(string, to: &out) }
    } else if T.self == Float.self {
      out.append(BinaryFormat.Kind.float32.rawValue)
      out.appendFixed32(unsafeBitCast(value, to: Float.self).bitPattern)
    } else if T.self == Data.self {
      let data = unsafeBitCast(value, to: Data.self)
      out.append(BinaryFormat.Kind.bytes.rawValue)
      out.appendVarint(UInt64(data.count))
      out.append(contentsOf: data)
    } else if T.self == UUID.self {
      out.append(BinaryFormat.Kind.uuid.rawValue)
      withUnsafeBytes(of: unsafeBitCast(value, to: UUID.self).uuid) { out.append(contentsOf: $0) }
    } else if T.self == URL.self {
      appendString(unsafeBitCast(value, to: URL.self).absoluteString, to: &out)
    } else {
      return false
    }
    return true
  }

  static func appendString(_ text: String, to out: inout [UInt8]) {
    out.append(BinaryFormat.Kind.string.rawValue)
    out.appendCounted(text)
  }

  static func appendSigned(_ value: Int64, to out: inout [UInt8]) {
    out.append(BinaryFormat.Kind.signed.rawValue)
    out.appendVarint(zigzag(value))
  }

  static func appendDouble(_ value: Double, to out: inout [UInt8]) {
    out.append(BinaryFormat.Kind.float64.rawValue)
    out.appendFixed64(value.bitPattern)
  }

  /// The standard integers of every width: signed ones zigzagged, unsigned ones plain.
  ///
  /// - Returns: whether `value` was one of them.
  static func appendInteger<T>(_ value: T, to out: inout [UInt8]) -> Bool {
    func unsigned(_ wide: UInt64) {
      out.append(BinaryFormat.Kind.unsigned.rawValue)
      out.appendVarint(wide)
    }
    if T.self == Int64.self {
      appendSigned(unsafeBitCast(value, to: Int64.self), to: &out)
    } else if T.self == Int32.self {
      appendSigned(Int64(unsafeBitCast(value, to: Int32.self)), to: &out)
    } else if T.self == Int16.self {
      appendSigned(Int64(unsafeBitCast(value, to: Int16.self)), to: &out)
    } else if T.self == Int8.self {
      appendSigned(Int64(unsafeBitCast(value, to: Int8.self)), to: &out)
    } else if T.self == UInt.self {
      unsigned(UInt64(unsafeBitCast(value, to: UInt.self)))
    } else if T.self == UInt64.self {
      unsigned(unsafeBitCast(value, to: UInt64.self))
    } else if T.self == UInt32.self {
      unsigned(UInt64(unsafeBitCast(value, to: UInt32.self)))
    } else if T.self == UInt16.self {
      unsigned(UInt64(unsafeBitCast(value, to: UInt16.self)))
    } else if T.self == UInt8.self {
      unsigned(UInt64(unsafeBitCast(value, to: UInt8.self)))
    } else {
      return false
    }
    return true
  }
}
