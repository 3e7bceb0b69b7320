import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// scripts/read-store.py, written from Docs/FORMAT.md alone, reads a store whose records carry
/// attached keys, from its hints too: the hints name each group once ("CCHINTS3", section 6).
@Suite(
  "Independent reader: attached keys and their hints",
  .enabled(
    if: StoreReaderScript.available != nil,
    "python3 with the `cryptography` module is needed to run scripts/read-store.py"))
struct IndependentReaderAttachedTests {
  @Test("a store whose puts attach keys, over several segments with overwrites and deletes, reads the same")
  func attachedKeysReadFromTheirHints() throws {
    var random = SeededRandom.make(test: "IndependentReaderAttachedTests.attachedKeysReadFromTheirHints")
    try withTemporaryDirectory("independent-reader-attached") { directory throws in
      let path = directory.file("store.cask")
      var options = AttachedKeyFixture.options
      options.segmentSizeLimit = 16 << 10
      let store = try CaskStore(path: path, password: IndependentReaderTests.password, options: options)
      store.extensions.setCommitHook { writes in
        var additions = CommitAdditions()
        for write in writes {
          guard let value = write.value else { continue }
          let keys = AttachedKeyFixture.attached(key: write.key, value: value)
          if !keys.isEmpty { additions.attachments[write.key] = keys }
        }
        return additions
      }
      var model: [String: Data] = [:]
      for _ in 0..<testIterations(400) {
        let id = "o\(random.next() % 60)"
        let key = AttachedKeyFixture.objectKey(id)
        if random.next() % 5 == 0 {
          try store.delete(key)
        } else {
          let texts = (0..<(random.next() % 4)).map { _ in ["a", "b", "xa", "xb", "c"][Int(random.next() % 5)] }
          try store.put(Data(texts.joined(separator: ",").utf8), forKey: key)
        }
      }
      model = try AttachedKeyFixture.contents(store)
      try store.close()
      let hints = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".hint") }
      let named = try hints.filter {
        try Data(contentsOf: URL(fileURLWithPath: "\(path)/\($0)")).prefix(8) == Data(CaskFormat.hintMagicNamed)
      }
      #expect(!named.isEmpty, "no hint names its groups among \(hints)")
      let expected = Dictionary(uniqueKeysWithValues: model.map { (Data($0.key.utf8), $0.value) })
      try IndependentReaderTests.compare(
        path, password: IndependentReaderTests.password, model: expected, checkHints: true, context: "after close")
    }
  }
}
