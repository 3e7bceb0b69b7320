import CaskTestSupport
import Foundation
import Testing

@testable import RNCryptorCodec

/// Whether this process runs under AddressSanitizer (CI runs the codec tests so too).
private let underAddressSanitizer = dlsym(nil, "__asan_init") != nil

/// `encrypt(secret:)` and `decryptSecret` promise that the secret is not copied into memory
/// that is not wiped. Prevents the last, partial block of a secret from staying behind in an
/// OpenSSL cipher context (its block buffer) that goes back to the key's pool unwiped and lives
/// as long as the keys.
@Suite(
  "Secrets leave no copy in pooled cipher contexts", .serialized,
  .disabled(if: underAddressSanitizer, "ASan's terabytes of shadow mappings are no place to scan"))
struct SecretResidueTests {
  /// A 31-byte secret: its last 15 bytes make the last, padded block.
  private static let secretLength = 31
  private static let mask: UInt8 = 0xA5

  /// A secret of `length` bytes made straight in its wiping buffer, and the bytes of its last,
  /// partial block XOR `mask` (so that the test itself holds no plain copy).
  private static func makeSecret(_ random: inout SeededRandom, length: Int = secretLength) -> (SecureBytes, [UInt8]) {
    let secret = SecureBytes(count: length) { buffer in
      for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: random.next()) }
    }
    let masked = secret.withUnsafeBytes { bytes in (length / 16 * 16..<length).map { bytes[$0] ^ mask } }
    return (secret, masked)
  }

  /// The whole of a file the kernel makes up as it is read, with `read` until it returns 0.
  /// Prevents: `String(contentsOfFile:)` returning the first part of `/proc/self/maps` only
  /// (seen in full test runs: the scan then saw none of the threads' heaps and missed a
  /// secret that was alive).
  private static func readToEnd(_ path: String) throws -> String {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { throw CocoaError(.fileReadNoPermission) }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { throw CocoaError(.fileReadUnknown) }
      if count == 0 { break }
      bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Whether the readable, writable private memory of this process holds the bytes `masked`
  /// XOR `mask`. Shared mappings are left out: they are files' page cache (the segments of
  /// stores other tests have open, mapped for reads and appends), not memory a cipher context
  /// or a buffer of this process could leave a secret in, and they span gigabytes.
  private static func memoryHolds(masked: [UInt8]) throws -> Bool {
    let maps = try readToEnd("/proc/self/maps")
    let descriptor = open("/proc/self/mem", O_RDONLY)
    guard descriptor >= 0 else { throw CocoaError(.fileReadNoPermission) }
    defer { close(descriptor) }
    let window = 1 << 20
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: window + masked.count, alignment: 16)
    // Wiped before it is freed: it holds copies of what it scanned, the secret included.
    defer {
      LibCrypto.cleanse(buffer)
      buffer.deallocate()
    }
    for line in maps.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      guard fields.count >= 2, fields[1].hasPrefix("rw"), fields[1].hasSuffix("p"), !line.contains("[vvar]"),
        !line.contains("[vsyscall]")
      else { continue }
      let range = fields[0].split(separator: "-")
      // Mappings of more than 4 GiB are reservations (a sanitizer's shadow, say), not heap.
      guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16),
        end - start <= 1 << 32
      else { continue }
      var address = start
      while address < end {
        let length = Int(Swift.min(UInt64(window + masked.count), end - address))
        let got = pread(descriptor, buffer.baseAddress, length, off_t(Int64(bitPattern: address)))
        if got >= masked.count {
          for offset in 0...(got - masked.count) where buffer[offset] ^ mask == masked[0] {
            var same = true
            for index in 1..<masked.count where buffer[offset + index] ^ mask != masked[index] {
              same = false
              break
            }
            if same { return true }
          }
        }
        address += UInt64(window)
      }
    }
    return false
  }

  @Test("encrypt(secret:) leaves no copy of the secret's last block in memory")
  func encryptLeavesNoCopy() throws {
    var random = SeededRandom.make(test: "SecretResidueTests.encryptLeavesNoCopy")
    let keys = try Fixture.keys()
    var masked: [UInt8] = []
    do {
      let (secret, pattern) = Self.makeSecret(&random)
      masked = pattern
      #expect(try Self.memoryHolds(masked: masked), "the scan finds the secret while it is alive")
      _ = try RNCryptor.encrypt(secret: secret, keys: keys)
    }
    #expect(!(try Self.memoryHolds(masked: masked)), "the secret's last block is still in memory")
  }

  /// Also short secrets (a 14-byte plaintext fits in a `Data` without a heap buffer, so a
  /// `Data` cut down to it may move the bytes and free the old buffer unwiped), and ones that
  /// end on a block boundary.
  @Test("decryptSecret leaves no copy of the secret's last block in memory", arguments: [31, 14, 9, 32])
  func decryptLeavesNoCopy(length: Int) throws {
    var random = SeededRandom.make(test: "SecretResidueTests.decryptLeavesNoCopy.\(length)")
    var masked: [UInt8] = []
    var message = Data()
    do {
      // Written under another Keys value, whose contexts are freed (and wiped) with it.
      let writer = try Fixture.keys()
      let (secret, pattern) = Self.makeSecret(&random, length: length)
      masked = length % 16 == 0 ? secret.withUnsafeBytes { bytes in bytes.suffix(16).map { $0 ^ Self.mask } } : pattern
      message = try RNCryptor.encrypt(secret: secret, keys: writer)
    }
    let keys = try Fixture.keys()
    do {
      let opened = try RNCryptor.decryptSecret(message, keys: keys)
      #expect(opened.count == length)
    }
    #expect(!(try Self.memoryHolds(masked: masked)), "the secret's last block is still in memory")
  }
}
