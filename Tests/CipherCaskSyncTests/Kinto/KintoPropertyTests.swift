import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// Three devices make random offline creates, updates, deletes and batches; a fourth party
/// edits and deletes on the server over HTTP; devices sync in random order with a random
/// policy. The test keeps a model of what the server must hold: after a device's sync, each
/// of its changes that was not reported in conflict (all of them under `.clientWins`) is on
/// the server, and everything else is as before. So no change the server accepted is lost,
/// and none is invented. At the end every device syncs twice with `.serverWins` and all equal
/// the server and the model.
final class KintoPropertyTests: XCTestCase {
  func testThreeDevicesAndAFourthPartyConverge() async throws {
    var random = SeededRandom.make(test: "KintoPropertyTests")
    let steps = 14 * max(1, Int(ProcessInfo.processInfo.environment["CASK_TEST_ITERATIONS"] ?? "") ?? 1)
    let failures = try await run(steps: steps, random: &random)
    XCTAssertEqual(failures, [])
  }

  /// The checker catches a pull that overwrites local changes without a conflict.
  func testPlantedLostUpdateIsCaught() async throws {
    var random = SeededRandom(seed: 17_471_636_002_309_590_969)
    let failures = try await run(steps: 56, random: &random, planted: true)
    XCTAssertFalse(failures.isEmpty, "the property test missed lost updates")
  }

  /// Runs the random steps and returns what differed from the model.
  private func run(steps: Int, random: inout SeededRandom, planted: Bool = false) async throws -> [String] {
    let kinto = try KintoProcess(batchLimit: 3)
    let devices = try (0..<3).map { try Device("d\($0)", url: kinto.url) }
    if planted { for device in devices { device.sync.cache.withLock { $0.plantedLostUpdate = true } } }
    var failures: [String] = []
    let server = KintoHTTP(kinto.url)
    var model: [String: Note] = [:]
    // Each device's changes since its last sync: the newest value per id (nil: deleted).
    var changes: [[String: Note?]] = Array(repeating: [:], count: devices.count)
    var operation = 0
    try await devices[0].sync.sync()  // makes the bucket and the collection
    let pool = (0..<10).map { "p\($0)" }

    for step in 0..<steps {
      let actor = Int.random(in: 0...4, using: &random)
      if actor < 3 {
        let device = devices[actor]
        let writes = Int.random(in: 1...4, using: &random)
        var planned: [(String, Note?)] = []
        for _ in 0..<writes {
          operation += 1
          let id = pool.randomElement(using: &random)!
          let deletes = Int.random(in: 0..<4, using: &random) == 0
          planned.append((id, deletes ? nil : Note(id: id, title: "\(device.name)-\(operation)", count: operation)))
        }
        if Bool.random(using: &random) {
          try Self.batch(planned, on: device)
        } else {
          for (id, note) in planned {
            if let note { try device.save(note) } else { _ = try device.delete(id) }
          }
        }
        // A delete of an object the device does not hold is no change.
        for (id, note) in planned { changes[actor][id] = .some(note) }
      } else if actor == 3 {
        operation += 1
        let id = pool.randomElement(using: &random)!
        if Bool.random(using: &random) {
          let note = Note(id: id, title: "server-\(operation)", count: operation)
          let status = try await server.put(note)
          if !(200..<300).contains(status) { failures.append("fourth party PUT answered \(status)") }
          model[id] = note
        } else {
          _ = try await server.delete(id)
          model[id] = nil
        }
      } else {
        let index = Int.random(in: 0..<devices.count, using: &random)
        let policy: SyncConflictPolicy = Bool.random(using: &random) ? .serverWins : .clientWins
        failures += try await syncAndCheck(
          devices[index], policy, changes: &changes[index], model: &model, step: "step \(step)")
      }
    }

    for round in 0..<2 {
      for (index, device) in devices.enumerated() {
        failures += try await syncAndCheck(
          device, .serverWins, changes: &changes[index], model: &model, step: "final \(round)")
      }
    }
    for device in devices where try device.all() != model {
      failures.append("\(device.name) differs from the server at the end")
    }
    return failures
  }

  /// Syncs `device` and checks the server and the device against the model, which it updates:
  /// each change the device had marked is on the server unless it was reported in conflict
  /// under `.serverWins`; nothing else changed there.
  private func syncAndCheck(
    _ device: Device, _ policy: SyncConflictPolicy, changes: inout [String: Note?], model: inout [String: Note],
    step: String
  ) async throws -> [String] {
    let marked = Set(try device.sync.ledger.pendingMarks(in: device.store).map(\.id))
    let report = try await device.sync.sync(conflicts: policy)
    print(
      "[KintoPropertyTests] \(step) \(device.name) \(policy): pulled \(report.pulled), deleted \(report.deleted), pushed \(report.pushed), conflicts \(report.conflicts.count)"
    )
    let conflicted = Set(report.conflicts.map(\.id))
    for (id, note) in changes where marked.contains(id) && (policy == .clientWins || !conflicted.contains(id)) {
      model[id] = note
    }
    changes = [:]
    var failures: [String] = []
    let held = try await KintoHTTP(device.serverURL).notes()
    if held != model {
      failures.append("\(step): the server after \(device.name)'s \(policy) sync: \(held) != \(model)")
    }
    if try device.all() != model { failures.append("\(step): \(device.name) differs from the model after its sync") }
    let pending = try await device.pending()
    if pending != 0 { failures.append("\(step): \(device.name) still has \(pending) changes to send") }
    return failures
  }

  private static func batch(_ planned: [(String, Note?)], on device: Device) throws {
    try device.store.batch { batch in
      for (id, note) in planned {
        if let note { try batch.save(note, in: device.notes) } else { try batch.delete(id: id, from: device.notes) }
      }
    }
  }
}
