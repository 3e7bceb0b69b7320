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

  private let lock = NSLock()
  // Guarded by `lock`.
  private var bytes = [UInt8](repeating: 0, count: RandomPool.capacity)
  private var position = RandomPool.capacity
  private var generation = -1
  private var owner: pid_t = 0

  init() {
    _ = Self.watchingForks
  }

  func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
    // Not `bytes.count`: reading `bytes` outside the lock races with the refill below.
    guard buffer.count <= Self.capacity else { return try LibCrypto.randomBytes(buffer) }
    lock.lock()
    defer { lock.unlock() }
    let current = forkGeneration.load(ordering: .relaxed)
    // Without the fork handler, fall back to checking the process id.
    let forked = current != generation || (!Self.watchingForks && owner != getpid())
    if position + buffer.count > bytes.count || forked {
      try bytes.withUnsafeMutableBytes { try LibCrypto.randomBytes($0) }
      position = 0
      generation = current
      owner = getpid()
    }
    bytes.withUnsafeMutableBytes { pool in
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: pool[position..<position + buffer.count]))
      // Handed-out bytes are not kept.
      LibCrypto.cleanse(UnsafeMutableRawBufferPointer(rebasing: pool[position..<position + buffer.count]))
    }
    position += buffer.count
  }
}
