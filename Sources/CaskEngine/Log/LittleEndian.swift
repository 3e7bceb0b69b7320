import Foundation

/// Appends little-endian integers and raw bytes to a byte array.
struct ByteWriter {
  var bytes: [UInt8] = []

  init(capacity: Int = 0) {
    bytes.reserveCapacity(capacity)
  }

  mutating func append(_ value: UInt8) { bytes.append(value) }
  mutating func append(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
  mutating func append(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
  mutating func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
  mutating func append<Bytes: Sequence<UInt8>>(contentsOf data: Bytes) { bytes.append(contentsOf: data) }
}

/// Reads little-endian integers from a byte buffer, failing softly (returning `nil`) at the end.
struct ByteReader {
  private let buffer: UnsafeRawBufferPointer
  private(set) var offset: Int

  init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
    self.buffer = buffer
    self.offset = offset
  }

  var remaining: Int { buffer.count - offset }

  mutating func readUInt8() -> UInt8? {
    guard remaining >= 1 else { return nil }
    defer { offset += 1 }
    return buffer[offset]
  }

  mutating func readUInt16() -> UInt16? { read(UInt16.self).map { UInt16(littleEndian: $0) } }
  mutating func readUInt32() -> UInt32? { read(UInt32.self).map { UInt32(littleEndian: $0) } }
  mutating func readUInt64() -> UInt64? { read(UInt64.self).map { UInt64(littleEndian: $0) } }

  /// The next `count` bytes as a view into the buffer, valid while the buffer is.
  mutating func readBytes(_ count: Int) -> UnsafeRawBufferPointer? {
    guard count >= 0, remaining >= count else { return nil }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
  }

  /// The bytes read since `start`, a view into the buffer.
  func bytes(from start: Int) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: buffer[start..<offset])
  }

  private mutating func read<T: FixedWidthInteger>(_: T.Type) -> T? {
    let size = MemoryLayout<T>.size
    guard remaining >= size else { return nil }
    defer { offset += size }
    return buffer.loadUnaligned(fromByteOffset: offset, as: T.self)
  }
}

/// Reads a little-endian integer at a fixed offset of a buffer known to be long enough.
@inline(__always)
func loadLittleEndian<T: FixedWidthInteger>(_ buffer: UnsafeRawBufferPointer, at offset: Int, as type: T.Type) -> T {
  T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
}
