import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

@Suite("A read-only open reads everything, writes nothing, and shares the lock with readers only")
struct ReadOnlyTests {
  // Version 2: the torn tail is cut after a clean close, which a version 3 manifest reports.
  private static let writing = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)
    .creatingVersion2
  private static let reading = CaskStore.Options(readOnly: true)

  /// A store of several segments; returns its contents.
  private static func makeStore(_ path: String) throws -> [String: Data] {
    var values: [String: Data] = [:]
    let store = try CaskStore(path: path, password: "pw", options: writing)
    for index in 0..<40 {
      values["key-\(index)"] = Data("value \(index) ".utf8) + Data(repeating: UInt8(index), count: 150)
      try store.put(values["key-\(index)"]!, forKey: "key-\(index)")
    }
    for index in 0..<5 {
      try store.delete("key-\(index)")
      values["key-\(index)"] = nil
    }
    try store.close()
    return values
  }

  @Test("reads work, every write throws readOnly, and no byte of any file changes")
  func readsButNeverWrites() throws {
    try withTemporaryDirectory("readonly") { directory throws in
      let path = directory.file("store.cask")
      let values = try Self.makeStore(path)
      let before = try DamageFixture.snapshot(path)

      let reader = try CaskStore(path: path, password: "pw", options: Self.reading)
      #expect(reader.count == values.count)
      try expectServes(reader, values, except: [])
      #expect(try reader.get("key-0") == nil)
      #expect(try reader.keys(withPrefix: "key-3").count == 10)
      #expect(try reader.verify().isClean)
      #expect(throws: CaskError.readOnly) { try reader.put(Data("x".utf8), forKey: "new") }
      #expect(throws: CaskError.readOnly) { try reader.put(Data("x".utf8), forKey: "key-10") }
      #expect(throws: CaskError.readOnly) { try reader.delete("key-10") }
      #expect(throws: CaskError.readOnly) { try reader.batch { try $0.put(Data("x".utf8), forKey: "new") } }
      #expect(throws: CaskError.readOnly) { try reader.compact() }
      #expect(throws: CaskError.readOnly) { try reader.changePassword(to: "other") }
      #expect(throws: CaskError.readOnly) { try reader.changeKeys(to: try RNCryptor.Keys.random()) }
      try reader.close()
      #expect(try DamageFixture.snapshot(path) == before)
    }
  }

  @Test("two read-only opens coexist; a writer is refused (alreadyOpen here) until both close, and locks them out")
  func sharedLock() throws {
    try withTemporaryDirectory("readonly-lock") { directory throws in
      let path = directory.file("store.cask")
      let values = try Self.makeStore(path)
      let lockPath = "\(path)/\(CaskFormat.lockFileName)"

      let first = try CaskStore(path: path, password: "pw", options: Self.reading)
      let second = try CaskStore(path: path, password: "pw", options: Self.reading)
      try expectServes(first, values, except: [])
      try expectServes(second, values, except: [])
      #expect(throws: CaskError.alreadyOpen(path: lockPath)) {
        try CaskStore(path: path, password: "pw", options: Self.writing)
      }
      try first.close()
      #expect(throws: CaskError.alreadyOpen(path: lockPath)) {
        try CaskStore(path: path, password: "pw", options: Self.writing)
      }
      try second.close()

      let writer = try CaskStore(path: path, password: "pw", options: Self.writing)
      #expect(throws: CaskError.alreadyOpen(path: lockPath)) {
        try CaskStore(path: path, password: "pw", options: Self.reading)
      }
      try writer.put(Data("late".utf8), forKey: "late")
      try writer.close()
      let third = try CaskStore(path: path, password: "pw", options: Self.reading)
      #expect(try third.get("late") == Data("late".utf8))
      try third.close()
    }
  }

  @Test("a read-only open of a torn tail serves complete batches, reports the tail, and cuts nothing")
  func tornTailLeftInPlace() throws {
    try withTemporaryDirectory("readonly-torn") { directory throws in
      let path = directory.file("store.cask")
      var values = try Self.makeStore(path)
      let store = try CaskStore(path: path, password: "pw", options: Self.writing)
      try store.batch { batch in
        for index in 0..<3 { try batch.put(Data("torn \(index)".utf8), forKey: "torn-\(index)") }
      }
      try store.close()
      let last = try #require(try DamageFixture.segmentNames(in: path).last)
      let records = try DamageFixture.records(ofSegment: "\(path)/\(last)", cipher: store.cipher)
      let batch = records.suffix(3)
      try #require(batch.map(\.key) == ["torn-0", "torn-1", "torn-2"])
      // A crash in the middle of the batch's last record; the active segment has no hint.
      try FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: last))")
      try FileDamage.truncate("\(path)/\(last)", to: batch.last!.end - 5)
      let before = try DamageFixture.snapshot(path)

      let reader = try CaskStore(path: path, password: "pw", options: Self.reading)
      let recovery = reader.stats().recovery
      #expect(recovery.truncatedBytes == UInt64(batch.last!.end - 5 - batch.first!.offset))
      #expect(recovery.droppedRecords == 2)
      for key in batch.map(\.key) { #expect(try reader.get(key) == nil) }
      values = values.filter { !$0.key.hasPrefix("torn") }
      try expectServes(reader, values, except: [])
      let report = try reader.verify()
      #expect(report.damage.contains { $0.file == last && $0.offset == UInt64(batch.first!.offset) })
      try reader.close()
      #expect(try DamageFixture.snapshot(path) == before)
    }
  }
}
