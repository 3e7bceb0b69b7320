internal import CLibCrypto
import Foundation
import Synchronization

extension LibCrypto {
  /// Fills `buffer` from OpenSSL's CSPRNG.
  static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
    guard buffer.count > 0 else { return }
    guard let base = buffer.baseAddress,
      RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1
    else {
      ERR_clear_error()
      throw RNCryptor.Error.randomGeneratorFailed
    }
  }

  /// Fills a 16-byte IV from a buffer of CSPRNG output refilled 4 KiB at a time, which
  /// spares a `RAND_bytes` call per message. IVs are public once used; the buffer only ever
  /// holds IVs not yet handed out, and a forked child refills before using it.
  static func randomIV(_ buffer: UnsafeMutableRawBufferPointer) throws {
    try ivPool.fill(buffer)
  }

  private static let ivPool = RandomPool()

  /// `count` fresh random bytes.
  static func randomData(count: Int) throws -> Data {
    var data = Data(count: count)
    try data.withUnsafeMutableBytes { (buffer) throws in try randomBytes(buffer) }
    return data
  }
}

/// Counts the forks this process has gone through, as seen by the child (`pthread_atfork`).
private let forkGeneration = Atomic<Int>(0)

/// Random bytes drawn from `RAND_bytes` in blocks of 4 KiB and handed out in order.
///
/// A forked child refills before it hands out anything, so parent and child never share IVs.
/// The fork is noticed through a `pthread_atfork` handler rather than by comparing
/// `getpid()` on every call, which is a system call per message.
private final class RandomPool: @unchecked Sendable {
  private static let capacity = 4096
  private static let watchingForks: Bool = {
    pthread_atfork(nil, nil) { forkGeneration.add(1, ordering: .relaxed) } == 0
  }()

  /// Where the pool stands: the next byte to hand out, and the fork generation and process the
  /// bytes were drawn in.
  private struct Cursor {
    var position = RandomPool.capacity
    var generation = -1
    var owner: pid_t = 0
  }

  private let lock = NSLock()
  // Guarded by `lock`. Held through pointers, allocated once: a class's stored `var`s are
  // checked for exclusive access at run time on every use, four checks per message here.
  private let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: RandomPool.capacity, alignment: 16)
  private let cursor = UnsafeMutablePointer<Cursor>.allocate(capacity: 1)

  init() {
    _ = Self.watchingForks
    bytes.initializeMemory(as: UInt8.self, repeating: 0)
    cursor.initialize(to: Cursor())
  }

  deinit {
    LibCrypto.cleanse(bytes)
    bytes.deallocate()
    cursor.deallocate()
  }

  func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
    guard buffer.count <= Self.capacity else { return try LibCrypto.randomBytes(buffer) }
    lock.lock()
    defer { lock.unlock() }
    let current = forkGeneration.load(ordering: .relaxed)
    // Without the fork handler, fall back to checking the process id.
    let forked = current != cursor.pointee.generation || (!Self.watchingForks && cursor.pointee.owner != getpid())
    if cursor.pointee.position + buffer.count > Self.capacity || forked {
      try LibCrypto.randomBytes(bytes)
      cursor.pointee = Cursor(position: 0, generation: current, owner: getpid())
    }
    let position = cursor.pointee.position
    let handedOut = UnsafeMutableRawBufferPointer(rebasing: bytes[position..<position + buffer.count])
    buffer.copyMemory(from: UnsafeRawBufferPointer(handedOut))
    // Handed-out bytes are not kept.
    LibCrypto.cleanse(handedOut)
    cursor.pointee.position = position + buffer.count
  }
}
