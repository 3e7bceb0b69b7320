import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

@Suite("A closed store refuses every operation with closed and touches no file")
struct ClosedStoreTests {
  @Test("reads, writes, compaction, verify, credential changes and sync after close() throw closed")
  func everythingAfterClose() throws {
    try withStore(options: CaskStore.Options(durability: .never, autoCompaction: nil), label: "closed") {
      store, path throws in
      try store.put(Data("one".utf8), forKey: "a")
      try store.put(Data("two".utf8), forKey: "a")
      try store.put(Data("three".utf8), forKey: "b")
      try store.close()
      let before = try DamageFixture.snapshot(path)

      #expect(throws: CaskError.closed) { try store.get("a") }
      #expect(throws: CaskError.closed) { try store.get("absent") }
      #expect(throws: CaskError.closed) { try store.contains("a") }
      #expect(throws: CaskError.closed) { try store.keys() }
      #expect(throws: CaskError.closed) { try store.keys(withPrefix: "a") }
      #expect(throws: CaskError.closed) { try store.put(Data("x".utf8), forKey: "a") }
      #expect(throws: CaskError.closed) { try store.delete("a") }
      #expect(throws: CaskError.closed) { try store.delete("absent") }
      #expect(throws: CaskError.closed) { try store.batch { try $0.put(Data("x".utf8), forKey: "c") } }
      #expect(throws: CaskError.closed) { try store.batch { try $0.delete("b") } }
      #expect(throws: CaskError.closed) { try store.compact() }
      #expect(throws: CaskError.closed) { try store.verify() }
      #expect(throws: CaskError.closed) { try store.changePassword(to: "new") }
      #expect(throws: CaskError.closed) { try store.changeKeys(to: try RNCryptor.Keys.random()) }
      #expect(throws: CaskError.closed) { try store.sync() }
      // A second close is harmless.
      try store.close()
      #expect(try DamageFixture.snapshot(path) == before)

      // The refused writes left the store as it was.
      let reopened = try CaskStore(path: path, password: "pw")
      #expect(try reopened.get("a") == Data("two".utf8))
      #expect(try reopened.keys() == ["a", "b"])
      try reopened.close()
    }
  }
}
