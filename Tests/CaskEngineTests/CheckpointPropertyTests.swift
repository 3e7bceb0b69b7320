import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Open from a checkpoint gives what open from the hints and the log gives, whatever came
/// before: random puts, deletes and batches over small segments (so seals and checkpoints
/// come often, some in the middle of a segment), compactions, clean reopens and crashes (the
/// directory copied as it is while the store is open).
@Suite("Checkpoint: open from it equals open without it")
struct CheckpointPropertyTests {
  /// One key of the small key space: outside groups, in a group, or longer than a slot holds.
  private static func key(_ number: UInt64) -> String {
    switch number % 3 {
    case 0: return "k\(number)"
    case 1: return "users\u{0}\(number)"
    default: return "a-key-longer-than-sixteen-bytes-\(number)"
    }
  }

  @Test("random writes, seals, compactions, reopens and crashes: the same contents and figures either way")
  func equalsOpenWithout() throws {
    var random = SeededRandom.make(test: "CheckpointPropertyTests.equalsOpenWithout")
    try withTemporaryDirectory("checkpoint-property") { directory in
      var path = directory.file("store-0")
      var generation = 0
      var model: [String: Data] = [:]
      var usedCheckpoint = 0
      var store = try CheckpointFixture.open(path, interval: 4 << 10)
      for step in 0..<testIterations(300) {
        switch random.next() % 20 {
        case 0..<8:
          let key = Self.key(random.next() % 90)
          let value = random.bytes(Int(random.next() % 200))
          try store.put(value, forKey: key)
          model[key] = value
        case 8..<11:
          let key = Self.key(random.next() % 90)
          try store.delete(key)
          model[key] = nil
        case 11..<14:
          var changes: [(String, Data?)] = []
          for _ in 0..<(1 + random.next() % 8) {
            let key = Self.key(random.next() % 90)
            changes.append((key, random.next() % 4 == 0 ? nil : random.bytes(Int(random.next() % 120))))
          }
          try store.batch { batch in
            for (key, value) in changes {
              if let value { try batch.put(value, forKey: key) } else { try batch.delete(key) }
            }
          }
          for (key, value) in changes { model[key] = value }
        case 14:
          _ = try store.compact()
        case 15..<18:
          try store.close()
          usedCheckpoint += try Self.expectSameOpen(path, model: model, step: step, afterCleanClose: true)
          store = try CheckpointFixture.open(path, interval: 4 << 10)
        default:
          // A crash: the files as they are, with no close; the next writer works on the copy.
          store.hintQueue.drain()
          generation += 1
          let crashed = directory.file("store-\(generation)")
          try CheckpointFixture.copy(path, to: crashed)
          try store.close()
          path = crashed
          usedCheckpoint += try Self.expectSameOpen(path, model: model, step: step, afterCleanClose: false)
          store = try CheckpointFixture.open(path, interval: 4 << 10)
        }
      }
      try store.close()
      usedCheckpoint += try Self.expectSameOpen(path, model: model, step: -1, afterCleanClose: true)
      print("[CheckpointPropertyTests.equalsOpenWithout] opens from a checkpoint: \(usedCheckpoint)")
      #expect(usedCheckpoint > 0, "no open used a checkpoint: the test did not test it")
    }
  }

  /// Opens `path` read-only as it is and a copy without its checkpoint; both must serve the
  /// model and report the same figures. Returns 1 when the first used the checkpoint.
  private static func expectSameOpen(_ path: String, model: [String: Data], step: Int, afterCleanClose: Bool) throws
    -> Int
  {
    let without = path + "-without"
    try? FileManager.default.removeItem(atPath: without)
    try CheckpointFixture.copy(path, to: without)
    try? FileManager.default.removeItem(atPath: CheckpointFixture.file(without))
    defer { try? FileManager.default.removeItem(atPath: without) }
    let hadCheckpoint = FileManager.default.fileExists(atPath: CheckpointFixture.file(path))
    let fromCheckpoint = try CheckpointFixture.open(path, readOnly: true)
    let fromLog = try CheckpointFixture.open(without, readOnly: true)
    defer {
      try? fromCheckpoint.close()
      try? fromLog.close()
    }
    let recovery = fromCheckpoint.stats().recovery
    if afterCleanClose && hadCheckpoint {
      #expect(recovery.checkpointIgnored == nil, "step \(step): \(recovery.checkpointIgnored ?? "")")
    }
    #expect(try CheckpointFixture.contents(of: fromCheckpoint) == model, "step \(step): from the checkpoint")
    #expect(try CheckpointFixture.contents(of: fromLog) == model, "step \(step): from the hints and the log")
    let (a, b) = (fromCheckpoint.stats(), fromLog.stats())
    #expect(a.keys == b.keys && a.liveBytes == b.liveBytes && a.deadBytes == b.deadBytes, "step \(step): \(a) \(b)")
    return recovery.segmentsFromCheckpoint > 0 ? 1 : 0
  }
}
