import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// Random puts and deletes of objects with attached keys, and of attached keys on their own,
/// with compactions and reopens (from hints, from a checkpoint, by a scan) in between, checked
/// against `AttachedKeyModel` after every step that can change what the directory holds.
@Suite("Attached keys against a model")
struct AttachedKeyPropertyTests {
  typealias Fixture = AttachedKeyFixture

  @Test("random writes, compactions and reopens keep the directory equal to the model")
  func randomHistory() throws {
    var random = SeededRandom.make(test: "AttachedKeyPropertyTests")
    let steps = testIterations(300)
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      var options = Fixture.options
      options.segmentSizeLimit = 2048
      options.checkpoints = CaskStore.Checkpoints(minimumKeys: 1)
      var store = try Fixture.open(path, keys: keys, options: options)
      var model = AttachedKeyModel()
      let texts = ["a", "b", "c", "xa", "xb"]
      // The last steps, named, for the failure message (no secret: the test's own keys).
      var recent: [String] = []
      for step in 0..<steps {
        let id = "\(Int.random(in: 0..<12, using: &random))"
        let roll = Int.random(in: 0..<100, using: &random)
        recent = Array((recent + ["\(step): roll \(roll) id \(id)"]).suffix(12))
        switch roll {
        case 0..<55:
          let chosen = texts.filter { _ in Bool.random(using: &random) }.joined(separator: ",")
          recent[recent.count - 1] += " put [\(chosen)]"
          try store.put(Data(chosen.utf8), forKey: Fixture.objectKey(id))
          model.put(Data(chosen.utf8), forKey: Fixture.objectKey(id))
        case 55..<70:
          try store.delete(Fixture.objectKey(id))
          model.delete(Fixture.objectKey(id))
        case 70..<78:
          // An entry written on its own, as an index build writes it.
          let key = Fixture.entryKey(texts.randomElement(using: &random)!, id)
          try store.put(Data(), forKey: key)
          model.put(Data(), forKey: key)
        case 78..<84:
          let key = Fixture.entryKey(texts.randomElement(using: &random)!, id)
          try store.delete(key)
          model.delete(key)
        case 84..<90:
          recent[recent.count - 1] += " compact"
          _ = try store.compact()
        default:
          try store.close()
          let mode = Int.random(in: 0..<3, using: &random)
          recent[recent.count - 1] += " reopen \(["scan", "hints", "checkpoint"][mode])"
          switch mode {
          case 0: try Fixture.removeHintsAndCheckpoint(path)
          case 1: try? FileManager.default.removeItem(atPath: "\(path)/\(CaskFormat.checkpointFileName)")
          default: break
          }
          store = try Fixture.open(path, keys: keys, options: options)
        }
        let contents = try Fixture.contents(store)
        if contents != model.values {
          let extra = Set(contents.keys).subtracting(model.values.keys).map { $0.debugDescription }
          let missing = Set(model.values.keys).subtracting(contents.keys).map { $0.debugDescription }
          Issue.record(
            "step \(step) (seed \(random.seed)): too many \(extra), missing \(missing); after \(recent)")
          break
        }
      }
      #expect(try store.verify().isClean)
      try store.close()
    }
  }
}
