/// The bytes of one record (or of anything read or written whole), in one allocation with
/// their count.
///
/// Why not `[UInt8]`: a new byte array whose size is known only at run time is allocated by
/// the standard library's generic code, which looks up the array's storage type in the
/// runtime's metadata cache on every call: some 600 instructions, a tenth of a put's work
/// outside the cipher, and as much again for each record a get reads from disk.
///
/// A reference: whoever holds one may change its bytes, so each has one owner while it is
/// being filled (a record being sealed and numbered), and is only read once shared (a record
/// in the record cache).
final class RecordBytes: ManagedBuffer<Int, UInt8> {
  /// Zeroed bytes, `count` of them.
  static func zeroed(count: Int) -> RecordBytes {
    let buffer = unsafeDowncast(create(minimumCapacity: count) { _ in count }, to: RecordBytes.self)
    buffer.withUnsafeMutablePointerToElements { $0.initialize(repeating: 0, count: count) }
    return buffer
  }

  /// A copy of `bytes`.
  static func copy(of bytes: UnsafeRawBufferPointer) -> RecordBytes {
    let buffer = unsafeDowncast(create(minimumCapacity: bytes.count) { _ in bytes.count }, to: RecordBytes.self)
    buffer.withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
    return buffer
  }

  var count: Int { header }

  func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try withUnsafeMutablePointers { count, elements in
      try body(UnsafeRawBufferPointer(start: elements, count: count.pointee))
    }
  }

  func withUnsafeMutableBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
    try withUnsafeMutablePointers { count, elements in
      try body(UnsafeMutableRawBufferPointer(start: elements, count: count.pointee))
    }
  }
}
