import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Power loss at every mutating file operation of a compaction and of a password change.
/// Neither changes what the store holds, so after any crash it must open to exactly the
/// same contents.
@Suite("Crash during compaction and password change")
struct MaintenanceCrashTests {
  /// A clean shutdown of a store holding a random workload with overwrites and deletes
  /// spread over several segments, and its model.
  private static func prepared(
    random: inout SeededRandom, serial: inout Int, steps: ClosedRange<Int>, password: String = FaultWorkload.password
  ) throws -> (FaultyFileSystem, [String: Data]) {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let options = FaultWorkload.options(fileSystem, durability: .never)
    var store = try FaultWorkload.open(options, password: password)
    var model: [String: Data] = [:]
    for _ in 0..<Int.random(in: steps, using: &random) {
      let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
      try FaultWorkload.run(step, on: &store, options: options)
      model = FaultWorkload.applying(step, to: model)
    }
    try store.close()
    return (fileSystem, model)
  }

  /// `prepared` under password `old`, then a password change to `new` and a dozen more steps
  /// under the new key: a closed store with segments under two key epochs, and its model.
  private static func passwordChanged(
    random: inout SeededRandom, from old: String, to new: String, steps: ClosedRange<Int>
  ) throws -> (FaultyFileSystem, [String: Data]) {
    var serial = 0
    let (base, before) = try prepared(random: &random, serial: &serial, steps: steps, password: old)
    var model = before
    let options = FaultWorkload.options(base, durability: .never)
    var store = try FaultWorkload.open(options, password: old)
    // A key outside `FaultWorkload.keys`, which the steps below never touch: a record under
    // the older epoch is left. Prevents: twelve random steps overwriting or deleting every
    // record written before the change (one seed in a few hundred).
    let kept = Data("written under the older key".utf8)
    try store.put(kept, forKey: "kept-from-before-the-change")
    model["kept-from-before-the-change"] = kept
    try store.changePassword(to: new)
    for _ in 0..<12 {
      let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
      try FaultWorkload.run(step, on: &store, options: options)
      model = FaultWorkload.applying(step, to: model)
    }
    #expect(store.keyEpochs.olderEpochs.count == 1 && store.keyEpochs.olderRecords > 0)
    try store.close()
    return (base, model)
  }

  @Test("a crash at random points of compact() loses nothing and resurrects nothing")
  func crashDuringCompaction() throws {
    var random = SeededRandom.make(test: "crash during compaction")
    var serial = 0
    for iteration in 0..<testIterations(2) {
      let (base, model) = try Self.prepared(random: &random, serial: &serial, steps: 20...35)
      var finished = false
      var point = Int.random(in: 1...3, using: &random)
      var crashes = 0
      while !finished {
        let context = "iteration \(iteration), crash at mutation \(point)"
        let fileSystem = base.snapshot()
        var expected = model
        let store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
        // A few acknowledged writes in the active segment, which compaction seals first.
        for _ in 0..<Int.random(in: 0...3, using: &random) {
          let key = FaultWorkload.keys.randomElement(using: &random)!
          let value = FaultWorkload.value(serial: &serial, random: &random)
          try store.put(value, forKey: key)
          expected[key] = value
        }
        fileSystem.scheduleCrash(afterMutations: point)
        do {
          try store.compact()
        } catch {
          #expect(fileSystem.isPoweredOff, "\(context): compact failed without a fault: \(error)")
        }
        finished = !fileSystem.isPoweredOff
        let survivor = fileSystem.crash(using: &random)
        let reopened = try FaultWorkload.open(FaultWorkload.options(survivor))
        FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [expected], context)
        let damage = try reopened.verify().damage
        #expect(damage.isEmpty, "\(context): verify found damage: \(damage)")
        // It takes writes and compacts again.
        try reopened.put(Data("v0:after".utf8), forKey: "after")
        expected["after"] = Data("v0:after".utf8)
        try reopened.compact()
        FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [expected], "\(context), again")
        try reopened.close()
        crashes += 1
        // Every point is covered across seeds; each run samples about a third of them.
        point += Int.random(in: 1...5, using: &random)
      }
      #expect(crashes > 5, "compaction took fewer file operations than expected")
    }
  }

  @Test("a crash at any point of changePassword opens with the old or the new password and loses nothing")
  func crashDuringPasswordChange() throws {
    var random = SeededRandom.make(test: "crash during changePassword")
    var serial = 0
    let (base, model) = try Self.prepared(random: &random, serial: &serial, steps: 20...40, password: "old")
    let opened = try Self.crashEveryStepOfPasswordChange(base, model: model, random: &random)
    #expect(opened == ["old", "new"])
  }

  /// Crashes a password change from "old" to "new" after each of its mutations in turn, until
  /// one runs to the end: every time the store must open with one of the two passwords and hold
  /// exactly `model`; `check` then runs on the reopened store.
  ///
  /// - Returns: the passwords that opened a store.
  private static func crashEveryStepOfPasswordChange(
    _ base: FaultyFileSystem, model: [String: Data], random: inout SeededRandom,
    check: (CaskStore, String) throws -> Void = { _, _ in }
  ) throws -> Set<String> {
    var finished = false
    var point = 1
    var opened: Set<String> = []
    while !finished {
      let context = "crash at mutation \(point)"
      let fileSystem = base.snapshot()
      let store = try FaultWorkload.open(FaultWorkload.options(fileSystem), password: "old")
      fileSystem.scheduleCrash(afterMutations: point)
      do {
        try store.changePassword(to: "new")
      } catch {
        #expect(fileSystem.isPoweredOff, "\(context): changePassword failed without a fault: \(error)")
      }
      finished = !fileSystem.isPoweredOff
      let options = FaultWorkload.options(fileSystem.crash(using: &random))
      let reopened: CaskStore
      do {
        reopened = try FaultWorkload.open(options, password: "new")
        opened.insert("new")
      } catch CaskError.wrongPassword {
        #expect(!finished, "\(context): changePassword returned but the new password does not open the store")
        reopened = try FaultWorkload.open(options, password: "old")
        opened.insert("old")
      }
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], context)
      try check(reopened, context)
      try reopened.close()
      point += 1
    }
    return opened
  }

  @Test(
    "a crash at any point of a second password change (older-epoch segments present) opens with the old or the new password, loses nothing, and compaction then finishes the rotation"
  )
  func crashDuringSecondPasswordChange() throws {
    var random = SeededRandom.make(test: "crash during a second changePassword")
    // Epoch 1, with epoch 0 segments still there, and more writes under epoch 1.
    let (base, model) = try Self.passwordChanged(random: &random, from: "first", to: "old", steps: 15...25)
    let opened = try Self.crashEveryStepOfPasswordChange(base, model: model, random: &random) { reopened, context in
      #expect(try reopened.verify().isClean, "\(context)")
      // The rotation finishes from whichever state the crash left.
      try reopened.rotateKeys()
      #expect(reopened.keyEpochs.isRotated, "\(context): \(reopened.keyEpochs)")
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "\(context), rotated")
    }
    #expect(opened == ["old", "new"])
  }

  @Test("a crash at random points of the compaction that re-seals older-epoch records loses nothing")
  func crashDuringRotation() throws {
    var random = SeededRandom.make(test: "crash during a key rotation")
    let (base, model) = try Self.passwordChanged(random: &random, from: "old", to: "new", steps: 20...35)
    var finished = false
    var point = Int.random(in: 1...3, using: &random)
    var crashes = 0
    while !finished {
      let context = "crash at mutation \(point)"
      let fileSystem = base.snapshot()
      let store = try FaultWorkload.open(FaultWorkload.options(fileSystem), password: "new")
      #expect(store.keyEpochs.olderRecords > 0, "\(context)")
      fileSystem.scheduleCrash(afterMutations: point)
      do {
        try store.rotateKeys()
      } catch {
        #expect(fileSystem.isPoweredOff, "\(context): rotateKeys failed without a fault: \(error)")
      }
      finished = !fileSystem.isPoweredOff
      let reopened = try FaultWorkload.open(FaultWorkload.options(fileSystem.crash(using: &random)), password: "new")
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], context)
      let damage = try reopened.verify().damage
      #expect(damage.isEmpty, "\(context): verify found damage: \(damage)")
      if finished { #expect(reopened.keyEpochs.isRotated, "\(context): \(reopened.keyEpochs)") }
      try reopened.rotateKeys()
      #expect(reopened.keyEpochs.isRotated, "\(context), again: \(reopened.keyEpochs)")
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "\(context), again")
      try reopened.close()
      crashes += 1
      point += Int.random(in: 1...4, using: &random)
    }
    #expect(crashes > 5, "the rotation took fewer file operations than expected")
  }
}
