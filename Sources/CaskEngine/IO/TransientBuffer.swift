/// A large buffer used for a short while (a hint file and its plaintext, at open), mapped
/// straight from the system and returned to it when released.
///
/// Why not the heap: glibc serves a large allocation from its heap once an earlier large block
/// has been freed (its mmap threshold grows), and keeps freed heap memory. Open read and
/// decrypted every hint that way, so the process kept about as much again as the index
/// itself (cask-bench engine measured 100 bytes per key of resident memory for an index of
/// 40). Small buffers come from the heap as usual.
final class TransientBuffer {
  /// Buffers from this size on are mapped.
  static let mappingThreshold = 64 << 10

  let bytes: UnsafeMutableRawBufferPointer
  private let mapped: Bool

  /// `count` bytes, not initialised (zero when mapped).
  init(count: Int, purpose: String) throws {
    let length = Swift.max(count, 1)
    if length >= Self.mappingThreshold {
      bytes = UnsafeMutableRawBufferPointer(
        start: try Syscall.mapAnonymous(length, purpose: purpose), count: count)
      mapped = true
    } else {
      bytes = UnsafeMutableRawBufferPointer(
        start: UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 16), count: count)
      mapped = false
    }
  }

  deinit {
    guard let base = bytes.baseAddress else { return }
    if mapped {
      Syscall.unmap(base, count: Swift.max(bytes.count, 1))
    } else {
      base.deallocate()
    }
  }
}
