internal import CLibCrypto
import Foundation
import Synchronization

/// A fixed-size buffer for secrets (passwords, derived keys) that wipes itself.
///
/// The bytes live in memory this class allocates and owns; `deinit` overwrites them with
/// `OPENSSL_cleanse` (which the compiler may not optimise away) before freeing them. Copies
/// made by callers through `withUnsafeBytes` are theirs to wipe.
///
/// Instances are immutable after `init`, so sharing them between threads is safe.
public final class SecureBytes: @unchecked Sendable {
  private let pointer: UnsafeMutableRawPointer
  /// Number of bytes held.
  public let count: Int

  /// Copies `bytes` into a new wiping buffer.
  public init<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
    count = bytes.count
    pointer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
    let destination = UnsafeMutableRawBufferPointer(start: pointer, count: count)
    // Callers outside this module reach the unspecialised generic: one copy of contiguous
    // bytes instead of a witness call per byte.
    let copied = bytes.withContiguousStorageIfAvailable { source -> Bool in
      destination.copyMemory(from: UnsafeRawBufferPointer(source))
      return true
    }
    if copied == nil { _ = destination.initializeMemory(as: UInt8.self, from: bytes) }
  }

  /// Copies `bytes` into a new wiping buffer: the non-generic form, which a store opening
  /// takes for the data key it unwraps (no generic metadata or witness lookups on that path).
  public init(_ bytes: UnsafeRawBufferPointer) {
    count = bytes.count
    pointer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
    UnsafeMutableRawBufferPointer(start: pointer, count: count).copyMemory(from: bytes)
  }

  /// Allocates `count` bytes and lets `fill` write them (for example a key derivation).
  ///
  /// - Throws: whatever `fill` throws; the buffer is wiped and freed (by `deinit`) before the
  ///   error reaches the caller.
  public init(
    count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void
  ) rethrows {
    self.count = count
    pointer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(count, 1), alignment: 16)
    pointer.initializeMemory(as: UInt8.self, repeating: 0, count: Swift.max(count, 1))
    // Every stored property is set, so if `fill` throws, Swift releases the instance and
    // `deinit` wipes and frees the buffer. Doing either here as well would free it twice.
    try fill(UnsafeMutableRawBufferPointer(start: pointer, count: count))
  }

  /// Copies the UTF-8 bytes of `string`.
  public convenience init(utf8 string: String) {
    self.init(string.utf8)
  }

  deinit {
    OPENSSL_cleanse(pointer, Swift.max(count, 1))
    SecureBytes.wipeObserver.withLock { observer in
      observer?(UnsafeRawBufferPointer(start: pointer, count: count))
    }
    pointer.deallocate()
  }

  /// Calls `body` with a view of the bytes, valid only during the call.
  public func withUnsafeBytes<R>(
    _ body: (UnsafeRawBufferPointer) throws -> R
  ) rethrows -> R {
    try body(UnsafeRawBufferPointer(start: pointer, count: count))
  }

  /// Compares two buffers in constant time for equal lengths.
  public func constantTimeEquals(_ other: SecureBytes) -> Bool {
    withUnsafeBytes { mine in other.withUnsafeBytes { theirs in constantTimeEqual(mine, theirs) } }
  }

  /// Test hook: called from `deinit` after the wipe and before the memory is freed, with the
  /// wiped bytes, so a test can prove they are zero. `nil` outside tests.
  package static let wipeObserver = Mutex<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)
}
