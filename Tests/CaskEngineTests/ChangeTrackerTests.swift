import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("Change marks of tracked groups")
struct ChangeTrackerTests {
  let options = CaskStore.Options(durability: .never)
  let marker = CaskFormat.trackedGroupsGroup + "\u{0}notes"
  let marks = CaskFormat.changeMarkPrefix + "notes"

  @Test("every write of a tracked group gets a mark in its commit, in this process and after a reopen")
  func marksEveryWrite() throws {
    try withTemporaryDirectory("tracker") { directory throws in
      let path = directory.file("store.cask")
      do {
        let store = try CaskStore(path: path, password: "pw", options: options)
        try store.put(Data("before".utf8), forKey: "notes\u{0}early")
        #expect(try store.keys(inGroup: marks).isEmpty, "not tracked yet")
        try store.put(Data("{}".utf8), forKey: marker)
        #expect(try store.keys(inGroup: marks).isEmpty, "the commit that starts tracking is the tracker's own")
        try store.put(Data("1".utf8), forKey: "notes\u{0}a")
        try store.put(Data("1".utf8), forKey: "other\u{0}b")
        let first = try store.get(marks + "\u{0}a")
        #expect(first != nil)
        try store.put(Data("2".utf8), forKey: "notes\u{0}a")
        #expect(try store.get(marks + "\u{0}a") != first, "a new change, a new token")
        try store.close()
      }
      let store = try CaskStore(path: path, password: "pw", options: options)
      #expect(try store.delete("notes\u{0}early"))
      _ = try store.streamedBatch { batch in try batch.put(Data("s".utf8), forKey: "notes\u{0}streamed") }
      #expect(
        try store.keys(inGroup: marks).sorted() == [marks + "\u{0}a", marks + "\u{0}early", marks + "\u{0}streamed"])
      #expect(try store.keys(inGroup: CaskFormat.changeMarkPrefix + "other").isEmpty)
    }
  }

  @Test("a commit that writes the marker or a mark itself gets no marks; deleting the marker stops tracking")
  func exemptCommits() throws {
    try withTemporaryDirectory("tracker-own") { directory throws in
      let store = try CaskStore(path: directory.file("store.cask"), password: "pw", options: options)
      try store.put(Data("{}".utf8), forKey: marker)
      try store.batch { batch in
        try batch.put(Data("pulled".utf8), forKey: "notes\u{0}p")
        try batch.put(Data("{}".utf8), forKey: marker)
      }
      #expect(try store.keys(inGroup: marks).isEmpty)
      try store.put(Data("local".utf8), forKey: "notes\u{0}p")
      #expect(try store.keys(inGroup: marks).count == 1)
      try store.batch { batch in
        try batch.put(Data("sent".utf8), forKey: "notes\u{0}q")
        try batch.delete(marks + "\u{0}p")
      }
      #expect(try store.keys(inGroup: marks).isEmpty)
      #expect(try store.delete(marker))
      try store.put(Data("untracked".utf8), forKey: "notes\u{0}r")
      #expect(try store.keys(inGroup: marks).isEmpty)
    }
  }
}
