import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The last segment number, 0xffffffff, which the engine never hands out (Docs/FORMAT.md,
/// section 14): a leftover that open removes does not take it, and a file that does take it
/// stops only new segments, with an error that names the file.
@Suite("The last segment number")
struct SegmentNumberTests {
  /// A store with a few full segments, closed, and its model.
  private static func prepared(_ random: inout SeededRandom) throws -> (FaultyFileSystem, [String: Data]) {
    let (fileSystem, store, model) = try FaultWorkload.prepared(&random)
    try store.close()
    return (fileSystem, model)
  }

  private static func plant(_ name: String, _ bytes: [UInt8], in fileSystem: FaultyFileSystem) throws {
    let file = try fileSystem.open("\(FaultWorkload.path)/\(name)", mode: .createNew)
    defer { file.close() }
    try bytes.withUnsafeBytes { try file.write($0, at: 0) }
    try file.sync()
    try fileSystem.syncDirectory(FaultWorkload.path)
  }

  /// Writes until at least `segments` new segments were started (the limit is 2048 bytes).
  private static func writeNewSegments(
    _ segments: Int, into store: CaskStore, model: inout [String: Data], random: inout SeededRandom
  ) throws {
    let before = store.stats().segments
    var serial = 10_000
    while store.stats().segments < before + segments {
      let key = "new-\(serial)"
      let value = FaultWorkload.value(serial: &serial, random: &random)
      try store.put(value, forKey: key)
      model[key] = value
    }
  }

  @Test(
    "a leftover with the last number that open removes (an orphan hint, a temporary file) does not stop new segments",
    arguments: ["ffffffff.hint", "ffffffff.seg.tmp", "ffffffff.hint.tmp"])
  func removedLeftoverFreesTheNumber(name: String) throws {
    var random = SeededRandom.make(test: "SegmentNumberTests.removedLeftover.\(name)")
    var (fileSystem, model) = try Self.prepared(&random)
    try Self.plant(name, [], in: fileSystem)
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
    #expect(fileSystem.fileKind("\(FaultWorkload.path)/\(name)") == .missing, "open removed the leftover")
    try Self.writeNewSegments(3, into: store, model: &model, random: &random)
    try store.close()
    // And after a power loss (open synced the directory after its deletions; the new
    // segments' own directory syncs would have made them durable too).
    let afterPowerLoss = fileSystem.crashLosingUnsyncedChanges()
    let reopened = try FaultWorkload.open(FaultWorkload.options(afterPowerLoss))
    defer { try? reopened.close() }
    FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], name)
  }

  /// Planted files, and the one the refusal must name: the one with the highest number, a
  /// segment rather than its hint (a hint beside its segment is not an orphan, and stays).
  static let planted: [([String], String)] = [
    (["ffffffff.seg"], "ffffffff.seg"),
    (["fffffffe.seg"], "fffffffe.seg"),
    (["FFFFFFFF.SEG"], "FFFFFFFF.SEG"),
    (["ffffffff.hint", "ffffffff.seg"], "ffffffff.seg"),
    (["ffffffff.seg", "ffffffff.hint"], "ffffffff.seg"),
  ]

  @Test(
    "a file that keeps the last number stops new segments with an error naming it; reads go on; a rekeyed copy writes",
    arguments: planted)
  func keptFileWithTheLastNumber(names: [String], named: String) throws {
    var random = SeededRandom.make(test: "SegmentNumberTests.keptFile.\(names)")
    var (fileSystem, model) = try Self.prepared(&random)
    for name in names { try Self.plant(name, [UInt8](random.bytes(64)), in: fileSystem) }
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
    defer { try? store.close() }
    #expect(store.stats().recovery.unreadableSegments.contains(named))
    do {
      try Self.writeNewSegments(1, into: store, model: &model, random: &random)
      Issue.record("a segment was started beside ffffffff.seg")
    } catch CaskError.io(let operation, let path, let code) {
      #expect(code == EEXIST)
      #expect(path == "\(FaultWorkload.path)/\(named)", "the error names the file with the highest number")
      #expect(operation.contains("rekeyed copy"), "the error says what to do: \(operation)")
    }
    // Every write acknowledged before the refusal is there, and reads go on.
    FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "reads after the refusal")
    try store.rekeyedCopy(to: "/data/renumbered.cask", password: "renumbered")
    let copy = try CaskStore(
      path: "/data/renumbered.cask", password: "renumbered", options: FaultWorkload.options(fileSystem))
    defer { try? copy.close() }
    try Self.writeNewSegments(3, into: copy, model: &model, random: &random)
    FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "the copy takes new segments")
  }
}
