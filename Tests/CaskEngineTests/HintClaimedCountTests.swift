import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Open sizes its index from the entry count each hint's first blocks claim, read without
/// authentication; the count must be the hint's own, and a forged one must stay bounded.
@Suite("The entry count a hint claims, read before the hint is authenticated")
struct HintClaimedCountTests {
  @Test("equals the count of the authenticated hint; damage gives nil or a bounded count, never a crash")
  func claimedCountMatchesAndIsBounded() throws {
    try withTemporaryDirectory("hint-claimed") { directory throws in
      let path = directory.file("s.cask")
      var options = CaskStore.Options(durability: .never)
      options.segmentSizeLimit = 64 * 1024
      let store = try CaskStore(path: path, password: "pw", options: options)
      for index in 0..<400 { try store.put(Data(repeating: UInt8(index % 251), count: 300), forKey: "key-\(index)") }
      for index in stride(from: 0, to: 400, by: 7) { try store.delete("key-\(index)") }
      let cipher = store.cipher
      try store.close()

      let hints = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".hint") }.sorted()
      #expect(hints.count > 2, "expected several segments, got hints \(hints)")
      var puts = 0
      for name in hints {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
        let hint = try bytes.withUnsafeBytes { try HintPayload(file: $0, cipher: cipher, path: name) }
        let authenticated = hint.count
        puts += hint.sizes.ungrouped
        // Only the head, as open reads it.
        let claimed = bytes.prefix(HintPayload.headLength).withUnsafeBytes {
          HintPayload.claimedCount(head: $0, fileLength: UInt64(bytes.count), cipher: cipher)
        }
        #expect(claimed == authenticated, "\(name)")
        #expect(authenticated > 0, "\(name)")

        // A file shorter than the head, a foreign magic: no claim.
        #expect(
          bytes.prefix(HintPayload.headLength - 1).withUnsafeBytes {
            HintPayload.claimedCount(head: $0, fileLength: UInt64(HintPayload.headLength - 1), cipher: cipher)
          } == nil)
        var foreign = bytes
        foreign[0] ^= 0xFF
        #expect(
          foreign.withUnsafeBytes {
            HintPayload.claimedCount(head: $0, fileLength: UInt64(foreign.count), cipher: cipher)
          } == nil)
        // Any flipped ciphertext byte of the head: whatever count it decrypts to is bounded by
        // what the file's length can hold.
        let bound = (bytes.count - CaskFormat.hintMagic.count - 18 - 32 - 28) / (CaskFormat.hintEntryFixedLength + 1)
        for offset in CaskFormat.hintMagic.count + 2..<HintPayload.headLength {
          var damaged = bytes
          damaged[offset] ^= 0x5A
          let count = damaged.prefix(HintPayload.headLength).withUnsafeBytes {
            HintPayload.claimedCount(head: $0, fileLength: UInt64(damaged.count), cipher: cipher)
          }
          #expect(count.map { $0 <= bound } ?? true, "\(name), byte \(offset): \(String(describing: count))")
        }
      }
      // And the store opens from those hints with every key.
      let reopened = try CaskStore(path: path, password: "pw", options: options)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.segmentsFromHints == hints.count)
      #expect(reopened.count == 400 - (0..<400).filter { $0 % 7 == 0 }.count)
      // Sized once from the claims (every put entry of every hint), never grown while indexing:
      // a table that doubled would hold about twice as many slots.
      let capacity = reopened.state.withLock { $0.directory.ungroupedCapacity }
      #expect(capacity == (puts * 5 + 3) / 4 + 1, "\(capacity) slots for \(puts) put entries")
    }
  }
}
