#if canImport(Glibc)
  import Glibc
#endif

/// The key of an entry in `IndexEntries`' by-id order: the id's 64-bit FNV-1a hash and its
/// UTF-8 length (big-endian, 8 and 4 bytes), the id, then the text. The hash spreads the ids
/// so that sorting them mostly compares one integer.
enum EntryIDKey {
  static let headerLength = 12

  /// The text and id of an entry `text + U+0000 + id` (texts hold no U+0000).
  static func split(entry: UnsafeRawBufferPointer) -> (text: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer)? {
    // `memchr` rather than `firstIndex(of:)`: a walk of a sort index splits every entry it
    // passes, and the generic search, a byte at a time, was a tenth of such a walk.
    guard let base = entry.baseAddress, let found = memchr(base, 0, entry.count) else { return nil }
    let zero = base.distance(to: UnsafeRawPointer(found))
    return (
      UnsafeRawBufferPointer(rebasing: entry[..<zero]), UnsafeRawBufferPointer(rebasing: entry[(zero + 1)...])
    )
  }

  static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return hash
  }

  /// What every key of `id` begins with.
  static func prefix(id: UnsafeRawBufferPointer) -> [UInt8] {
    var key: [UInt8] = []
    key.reserveCapacity(headerLength + id.count)
    appendPrefix(id: id, to: &key)
    return key
  }

  /// Calls `body` with the key of `text` and `id`, made in a temporary buffer (on the stack
  /// when small): an insert or removal under the writer lock allocates nothing for it.
  static func withKey<R>(
    text: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R
  ) -> R {
    let count = headerLength + id.count + text.count
    return withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { buffer in
      buffer.storeBytes(of: hash(id).bigEndian, toByteOffset: 0, as: UInt64.self)
      buffer.storeBytes(of: UInt32(id.count).bigEndian, toByteOffset: 8, as: UInt32.self)
      if let base = buffer.baseAddress {
        if let source = id.baseAddress { (base + headerLength).copyMemory(from: source, byteCount: id.count) }
        if let source = text.baseAddress {
          (base + headerLength + id.count).copyMemory(from: source, byteCount: text.count)
        }
      }
      return body(UnsafeRawBufferPointer(buffer))
    }
  }

  static func append(text: UnsafeRawBufferPointer, id: UnsafeRawBufferPointer, to key: inout [UInt8]) {
    appendPrefix(id: id, to: &key)
    key.append(contentsOf: text)
  }

  private static func appendPrefix(id: UnsafeRawBufferPointer, to key: inout [UInt8]) {
    withUnsafeBytes(of: hash(id).bigEndian) { key.append(contentsOf: $0) }
    withUnsafeBytes(of: UInt32(id.count).bigEndian) { key.append(contentsOf: $0) }
    key.append(contentsOf: id)
  }

  /// The id and text of a key, and where its text starts.
  static func parts(of key: UnsafeRawBufferPointer) -> (
    id: UnsafeRawBufferPointer, text: UnsafeRawBufferPointer, textStart: Int
  ) {
    var length = 0
    for offset in 8..<headerLength { length = length << 8 | Int(key[offset]) }
    let textStart = headerLength + length
    return (
      UnsafeRawBufferPointer(rebasing: key[headerLength..<textStart]),
      UnsafeRawBufferPointer(rebasing: key[textStart...]), textStart
    )
  }
}
