import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("CaskStore basics")
struct StoreBasicsTests {
  let options = CaskStore.Options(durability: .never)

  @Test("put, get, overwrite, delete and reopen keep the latest values")
  func roundTrip() throws {
    try withTemporaryDirectory("basics") { directory throws in
      let path = directory.file("store.cask")
      do {
        let store = try CaskStore(path: path, password: "pw", options: options)
        try store.put(Data("one".utf8), forKey: "a")
        try store.put(Data("two".utf8), forKey: "b")
        try store.put(Data("three".utf8), forKey: "a")
        #expect(try store.delete("b"))
        #expect(try store.delete("b") == false)
        #expect(try store.get("a") == Data("three".utf8))
        #expect(try store.get("b") == nil)
        #expect(store.count == 1)
        try store.close()
      }
      let reopened = try CaskStore(path: path, password: "pw", options: options)
      #expect(try reopened.get("a") == Data("three".utf8))
      #expect(try reopened.get("b") == nil)
      #expect(try reopened.keys() == ["a"])
      #expect(reopened.stats().recovery.segmentsFromHints == 1)
      try reopened.close()
    }
  }

  @Test("a wrong password is refused at open and nothing is written")
  func wrongPassword() throws {
    try withStore(options: options, password: "right", label: "wrongpw") { store, path throws in
      try store.put(Data("v".utf8), forKey: "k")
      try store.close()
      let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
      #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: "wrong", options: options) }
      #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
    }
  }

  @Test("a second open of the same store in one process says it is already open here")
  func alreadyOpenInThisProcess() throws {
    try withStore(options: options, label: "locked") { store, path throws in
      #expect(throws: CaskError.alreadyOpen(path: path + "/LOCK")) {
        try CaskStore(path: path, password: "pw", options: options)
      }
      try store.close()
      let again = try CaskStore(path: path, password: "pw", options: options)
      try again.close()
    }
  }

  @Test("compaction keeps live values, drops dead ones and survives reopen")
  func compaction() throws {
    var small = options
    small.segmentSizeLimit = 4096
    small.autoCompaction = nil
    try withStore(options: small, label: "compact") { store, path throws in
      for round in 0..<5 {
        for index in 0..<50 { try store.put(Data("value \(round) \(index)".utf8), forKey: "key\(index)") }
      }
      for index in 0..<10 { try store.delete("key\(index)") }
      let before = store.stats()
      let report = try #require(try store.compact())
      let after = store.stats()
      #expect(report.recordsCopied == 40)
      #expect(after.deadBytes == 0)
      #expect(after.liveBytes <= before.liveBytes)
      #expect(after.keys == 40)
      for index in 10..<50 { #expect(try store.get("key\(index)") == Data("value 4 \(index)".utf8)) }
      try store.close()
      let reopened = try CaskStore(path: path, password: "pw", options: small)
      #expect(reopened.count == 40)
      for index in 0..<10 { #expect(try reopened.get("key\(index)") == nil) }
      for index in 10..<50 { #expect(try reopened.get("key\(index)") == Data("value 4 \(index)".utf8)) }
      try reopened.close()
    }
  }
}

@Suite("Password change and verify")
struct PasswordAndVerifyTests {
  @Test("after changePassword the old password is refused and the new one opens every record")
  func changePassword() throws {
    let options = CaskStore.Options(durability: .never)
    try withStore(options: options, password: "old", label: "passwd") { store, path throws in
      for index in 0..<20 { try store.put(Data("v\(index)".utf8), forKey: "k\(index)") }
      try store.changePassword(to: "new")
      try store.put(Data("after".utf8), forKey: "late")
      try store.close()
      #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: "old", options: options) }
      let reopened = try CaskStore(path: path, password: "new", options: options)
      #expect(reopened.count == 21)
      #expect(try reopened.get("k7") == Data("v7".utf8))
      #expect(try reopened.get("late") == Data("after".utf8))
      let report = try reopened.verify()
      #expect(report.isClean)
      #expect(report.recordsChecked == 21)
      try reopened.close()
    }
  }
}
