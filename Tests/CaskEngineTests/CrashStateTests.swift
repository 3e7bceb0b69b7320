import CaskEngine
import CaskTestSupport
import Foundation
import Testing

/// Every crash state of small workloads, not a sample: each workload runs once on a
/// `RecordingFileSystem`, and every state its operations can leave on disk under the POSIX
/// minimum and under ext4 `data=ordered` (within `CrashStateBounds`) is written into a real
/// directory, opened by the store and checked (Docs/RELIABILITY.md, "Crash states").
/// `CASK_CRASH_STATES_LONG=1` widens the bounds and has `scripts/read-store.py` read every state.
@Suite("Crash states")
struct CrashStateTests {
  static let runner = CrashStateRunner.standard

  /// Runs `workload` under both models and expects no violation.
  static func expectNoViolation(_ workload: CrashStateWorkload) throws {
    for report in try runner.run(workload) {
      print(report)
      if report.outOfOrder > 0 { print("[crash-states] out of order, e.g. \(report.outOfOrderExamples)") }
      #expect(report.states > 0, "\(report.workload) / \(report.model): no crash state enumerated")
      #expect(
        report.violationCount == 0,
        "\(report.workload) / \(report.model): \(report.violationCount) violations, e.g. \(report.violations)")
    }
  }

  /// A value long enough that a few of them fill a 4 KiB segment.
  static func value(_ name: String, length: Int = 600) -> String {
    String(repeating: name, count: max(1, length / max(1, name.count)))
  }

  /// A store holding `a`, `b` and `c`, made before the recording starts.
  static func prepared(_ workload: inout CrashStateWorkload) {
    workload.initialModel = ["a": Data("a0".utf8), "b": Data("b0".utf8), "c": Data("c0".utf8)]
    workload.prepare = { root, options in
      try CrashStateWorkload.makeStore(root, options) { store in
        for key in ["a", "b", "c"] { try store.put(Data("\(key)0".utf8), forKey: key) }
      }
    }
  }

  @Test("creating a store and two durable puts: every crash leaves nothing, or every acknowledged put")
  func createAndPut() throws {
    try Self.expectNoViolation(CrashStateWorkload("create, put", steps: [.open, .put("x", "1"), .put("y", "2")]))
  }

  @Test("puts, an overwrite and deletes under .always")
  func putsAndDeletes() throws {
    var workload = CrashStateWorkload(
      "puts and deletes", steps: [.put("d", "d1"), .delete("a"), .put("b", "b1"), .delete("d")])
    Self.prepared(&workload)
    try Self.expectNoViolation(workload)
  }

  @Test("batches are whole or absent")
  func batches() throws {
    var workload = CrashStateWorkload(
      "batches",
      steps: [.batch([("x", "x1"), ("a", nil), ("b", "b1")]), .batch([("x", nil), ("y", "y1"), ("c", "c2")])])
    Self.prepared(&workload)
    try Self.expectNoViolation(workload)
  }

  @Test("under .never, everything before sync() survives and the rest is any combination of whole steps")
  func neverWithSync() throws {
    var options = CrashStateWorkload.defaultOptions
    options.durability = .never
    var workload = CrashStateWorkload(
      ".never and sync()", options: options,
      steps: [
        .put("x", "x1", durable: false), .delete("a", durable: false), .sync, .put("y", "y1", durable: false),
        .batch([("b", "b1"), ("z", "z1")], durable: false),
      ])
    Self.prepared(&workload)
    try Self.expectNoViolation(workload)
  }

  @Test("a streamed batch is whole or absent")
  func streamedBatch() throws {
    var workload = CrashStateWorkload(
      "streamed batch",
      steps: [
        CrashStateWorkload.Step(
          "streamed batch", durable: true,
          effect: { model in
            for index in 0..<4 { model["s\(index)"] = Data(Self.value("s\(index)", length: 300).utf8) }
            model["a"] = nil
          }
        ) { session in
          try session.store().streamedBatch { batch in
            for index in 0..<4 {
              _ = try batch.put(Data(Self.value("s\(index)", length: 300).utf8), forKey: "s\(index)")
            }
            try batch.delete("a")
          }
        }
      ])
    Self.prepared(&workload)
    try Self.expectNoViolation(workload)
  }

  @Test("puts that fill a segment seal it and write its hint")
  func segmentSeal() throws {
    var options = CrashStateWorkload.defaultOptions
    options.segmentSizeLimit = 2048
    var workload = CrashStateWorkload(
      "segment seal and hint", options: options,
      steps: (0..<4).map { CrashStateWorkload.Step.put("k\($0)", Self.value("k\($0)")) })
    Self.prepared(&workload)
    try Self.expectNoViolation(workload)
  }

  @Test("compaction writes its outputs and removes its inputs")
  func compaction() throws {
    var options = CrashStateWorkload.defaultOptions
    options.segmentSizeLimit = 2048
    var workload = CrashStateWorkload("compaction", options: options, steps: [.compact, .put("after", "1")])
    workload.initialModel = ["a": Data(Self.value("a2").utf8), "c": Data(Self.value("c").utf8)]
    workload.prepare = { root, options in
      try CrashStateWorkload.makeStore(root, options) { store in
        for round in 0..<3 {
          try store.put(Data(Self.value("a\(round)").utf8), forKey: "a")
          try store.put(Data(Self.value("b\(round)").utf8), forKey: "b")
        }
        try store.put(Data(Self.value("c").utf8), forKey: "c")
        _ = try store.delete("b")
      }
    }
    try Self.expectNoViolation(workload)
  }

  @Test("a password change and the key rotation after it")
  func passwordChangeAndRotation() throws {
    var workload = CrashStateWorkload(
      "password change and key rotation",
      steps: [
        CrashStateWorkload.Step("change password", durable: true) { session in
          try session.store().changePassword(to: "new password", keyDerivation: testKeyDerivation)
        },
        CrashStateWorkload.Step("rotate keys", durable: true) { _ = try $0.store().rotateKeys() },
        .put("after", "1"),
      ])
    workload.passwords = ["new password", testPassword]
    Self.prepared(&workload)
    try Self.expectNoViolation(workload)
  }

  @Test("a backup is missing or whole, and whole once it returned")
  func backup() throws {
    var workload = CrashStateWorkload(
      "backup",
      steps: [
        CrashStateWorkload.Step(
          "backup", durable: true,
          effect: { model in
            for (key, value) in model where !key.hasPrefix("backup/") { model["backup/\(key)"] = value }
          }
        ) { session in _ = try session.store().backup(to: "\(session.root)/backup") }
      ])
    Self.prepared(&workload)
    workload.contents = { store in try Self.withBackup(store) }
    try Self.expectNoViolation(workload)
  }

  /// The store's keys and values, and those of its backup (`backup/` before each key) when
  /// the backup's header is in place.
  static func withBackup(_ store: CaskStore) throws -> [String: Data] {
    var contents = try CrashStateWorkload.keyValues(store)
    let backupPath = URL(fileURLWithPath: store.path).deletingLastPathComponent().appendingPathComponent("backup").path
    guard FileManager.default.fileExists(atPath: "\(backupPath)/CASK") else { return contents }
    var options = CrashStateWorkload.defaultOptions
    options.readOnly = true
    let copy = try CaskStore(path: backupPath, password: testPassword, options: options)
    defer { try? copy.close() }
    for (key, value) in try CrashStateWorkload.keyValues(copy) { contents["backup/\(key)"] = value }
    return contents
  }

  @Test("upgrading a format version 2 store leaves the old store or the new one")
  func upgrade() throws {
    var workload = CrashStateWorkload(
      "upgrade from format 2",
      steps: [
        CrashStateWorkload.Step("upgrade", durable: true) { session in
          try session.close()
          try CaskStore.upgrade(at: session.storePath, password: testPassword, options: session.options)
        }
      ])
    workload.initialModel = ["a": Data("a0".utf8), "b": Data("b0".utf8)]
    workload.prepare = { root, options in
      var old = options
      old.newStoreFormatVersion = 2
      try CrashStateWorkload.makeStore(root, old) { store in
        try store.put(Data("a0".utf8), forKey: "a")
        try store.put(Data("b0".utf8), forKey: "b")
      }
    }
    try Self.expectNoViolation(workload)
  }
}

/// The crash state that split a streamed batch: the batch's write began inside a sector, the
/// crash kept its sectors from the next boundary on and lost its head, so its first record
/// read as zeros up to that boundary (no whole zero sector) and the scan took the rest for a
/// committed batch damaged later.
@Suite("Crash states: regressions")
struct CrashStateRegressionTests {
  @Test("a streamed batch whose write lost its head up to a sector boundary is dropped whole")
  func streamedBatchLostHead() throws {
    var workload = CrashStateWorkload(
      "streamed batch",
      steps: [
        CrashStateWorkload.Step("streamed batch", durable: true) { session in
          try session.store().streamedBatch { batch in
            for index in 0..<4 { _ = try batch.put(Data(String(repeating: "s", count: 300).utf8), forKey: "s\(index)") }
          }
        }
      ])
    CrashStateTests.prepared(&workload)
    let run = try CrashStateRunner(bounds: .standard).record(workload)
    let begin = try #require(run.recording.steps.first { $0.label == "streamed batch" }).begin
    let found = run.recording.operations.indices.first { index in
      guard index >= begin, case .write(_, let offset, let bytes, _) = run.recording.operations[index] else {
        return false
      }
      return offset % 512 != 0 && offset + bytes.count > (offset / 512 + 1) * 512
    }
    let index = try #require(found, "the streamed batch's write starts at a sector boundary")
    guard case .write(_, let offset, let bytes, _) = run.recording.operations[index] else { return }
    let boundary = (offset / 512 + 1) * 512
    let state = CrashState(
      crashPoint: index + 1, lost: [],
      torn: CrashState.Tear(operation: index, kept: boundary..<(offset + bytes.count)))
    try withTemporaryDirectory("crash-regression") { directory in
      try CrashImage(run.recording, state).write(to: directory.path)
      let store = try CaskStore(path: directory.file("store"), password: testPassword, options: workload.options)
      defer { try? store.close() }
      #expect(try CrashStateWorkload.keyValues(store) == workload.initialModel)
    }
  }
}
