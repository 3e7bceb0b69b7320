import Foundation
import RNCryptorCodec
import Synchronization
import Testing

/// Records what `SecureBytes.wipeObserver` is handed for chosen buffer addresses only.
///
/// Other suites run in parallel and free `SecureBytes` too; their buffers are ignored. Each
/// address is recorded once, at its first free, so a later allocation that reuses the address
/// cannot overwrite the observation.
private final class WipeRecorder: Sendable {
  private struct State {
    var watched: Set<UInt> = []
    var seen: [UInt: [UInt8]] = [:]
  }
  private let state = Mutex(State())

  func watch(_ address: UInt) {
    state.withLock { _ = $0.watched.insert(address) }
  }

  /// The bytes handed to the observer for `address`, or nil if it was never freed.
  func seen(_ address: UInt) -> [UInt8]? {
    state.withLock { $0.seen[address] }
  }

  /// Called from `SecureBytes.deinit`, inside the observer's lock: must not free a SecureBytes.
  func observe(_ buffer: UnsafeRawBufferPointer) {
    let address = UInt(bitPattern: buffer.baseAddress)
    state.withLock { state in
      guard state.watched.remove(address) != nil else { return }
      state.seen[address] = Array(buffer)
    }
  }

  /// Runs `body` with this recorder installed as the process-wide observer.
  func installed<R>(_ body: () throws -> R) rethrows -> R {
    SecureBytes.wipeObserver.withLock { $0 = { [self] buffer in observe(buffer) } }
    defer { SecureBytes.wipeObserver.withLock { $0 = nil } }
    return try body()
  }
}

private func address(of secret: SecureBytes) -> UInt {
  secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
}

private struct FillFailed: Error {}

/// Proves that secrets are overwritten before their memory is freed, through the test hook
/// `SecureBytes.wipeObserver`, which deinit calls after the wipe and before the free. Prevents
/// a password or key lingering in freed heap memory (a wipe the optimiser removed, a wipe of
/// the wrong length, a path that frees without wiping).
///
/// Serialized: the observer is one process-wide slot.
@Suite("SecureBytes wipes itself", .serialized)
struct SecureBytesWipeTests {
  /// Makes a SecureBytes of `bytes`, checks it holds them, and lets it go; returns its address.
  @inline(never)
  private func makeAndDrop(_ bytes: [UInt8], recorder: WipeRecorder) -> UInt {
    let secret = SecureBytes(bytes)
    let base = address(of: secret)
    recorder.watch(base)
    #expect(secret.withUnsafeBytes { Array($0) } == bytes)
    return base
  }

  @Test("a SecureBytes is all zeros when deinit frees it", arguments: [1, 32, 100])
  func wipedOnDeinit(count: Int) throws {
    let recorder = WipeRecorder()
    let bytes = (0..<count).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0) | 0x01 }
    let base = recorder.installed { makeAndDrop(bytes, recorder: recorder) }
    let seen = try #require(recorder.seen(base), "deinit did not reach the observer")
    #expect(seen.count == count)
    #expect(seen.allSatisfy { $0 == 0 }, "secret bytes survived deinit: \(seen)")
  }

  @Test("keys built from wiping buffers are wiped when the last Keys value goes away")
  func keysWiped() throws {
    let recorder = WipeRecorder()
    let addresses = try recorder.installed { () throws -> [UInt] in
      var keys: RNCryptor.Keys? = try RNCryptor.Keys(
        encryptionKey: SecureBytes(Fixture.encryptionKey), hmacKey: SecureBytes(Fixture.hmacKey))
      let addresses = [keys?.encryptionKey, keys?.hmacKey].compactMap { $0 }.map(address(of:))
      for address in addresses { recorder.watch(address) }
      #expect(
        try RNCryptor.decrypt(RNCryptor.encrypt(Data([1]), keys: #require(keys)), keys: #require(keys)) == Data([1]))
      keys = nil
      return addresses
    }
    #expect(addresses.count == 2)
    for address in addresses {
      let seen = try #require(recorder.seen(address), "a key buffer was not freed through deinit")
      #expect(seen == [UInt8](repeating: 0, count: 32))
    }
  }

  @Test("a throwing fill wipes the buffer and frees it exactly once")
  func throwingFill() throws {
    let recorder = WipeRecorder()
    let base = Mutex<UInt?>(nil)
    _ = recorder.installed {
      #expect(throws: FillFailed.self) {
        try SecureBytes(count: 32) { buffer in
          let start = UInt(bitPattern: buffer.baseAddress)
          base.withLock { $0 = start }
          recorder.watch(start)
          buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
          throw FillFailed()
        }
      }
    }
    // A buffer freed twice (once in init's error path, again in deinit) corrupts the heap:
    // glibc then aborts here, or hands the same block out twice. Take many blocks of the same
    // size while they are all alive: their addresses must differ.
    let blocks = (0..<64).map { _ in UnsafeMutableRawPointer.allocate(byteCount: 32, alignment: 16) }
    let distinct = Set(blocks).count
    if distinct == blocks.count {
      for block in blocks { block.deallocate() }
    }
    #expect(distinct == blocks.count, "the allocator returned one block twice: a double free")
    let start = try #require(base.withLock { $0 })
    let seen = try #require(recorder.seen(start), "the half-made buffer was not wiped through deinit")
    #expect(seen == [UInt8](repeating: 0, count: 32))
  }
}
