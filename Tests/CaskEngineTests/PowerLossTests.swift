import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Power loss at random points of a random workload, on a file system that keeps only what
/// was synced (and a random prefix of the rest). After each crash the store is reopened on
/// what survived and compared with a plain `Dictionary` model.
@Suite("Power loss")
struct PowerLossTests {
  @Test("with .always, every acknowledged write survives a crash and batches are all or nothing")
  func alwaysDurability() throws {
    var random = SeededRandom.make(test: "power loss, .always")
    var serial = 0
    for iteration in 0..<testIterations(6) {
      var fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      var store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
      var model: [String: Data] = [:]
      for crash in 0..<5 {
        let context = "iteration \(iteration), crash \(crash)"
        let options = FaultWorkload.options(fileSystem)
        fileSystem.scheduleCrash(afterMutations: Int.random(in: 1...60, using: &random))
        // The states the store may be in after the crash: the acknowledged one, and the one
        // with the interrupted step applied in full.
        var candidates = [model]
        for _ in 0..<40 {
          let step = FaultWorkload.step(random: &random, serial: &serial)
          let after = FaultWorkload.applying(step, to: model)
          do {
            try FaultWorkload.run(step, on: &store, options: options)
            model = after
            candidates = [model]
          } catch {
            guard fileSystem.isPoweredOff else {
              Issue.record("\(context): \(step) failed without a fault: \(error)")
              return
            }
            candidates = [model, after]
          }
          if fileSystem.isPoweredOff { break }
        }
        fileSystem = fileSystem.crash(using: &random)
        store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
        let recovered = try FaultWorkload.contents(of: store)
        guard let match = FaultWorkload.expect(recovered, isOneOf: candidates, context, fileSystem: fileSystem) else {
          return
        }
        model = candidates[match]
        let damage = try store.verify().damage
        #expect(damage.isEmpty, "\(context): verify found damage after recovery: \(damage)")
      }
      // The store takes writes again, and keeps them across a clean reopen.
      try store.put(Data("after the crashes".utf8), forKey: "final")
      model["final"] = Data("after the crashes".utf8)
      try store.close()
      let reopened = try FaultWorkload.open(FaultWorkload.options(fileSystem))
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "iteration \(iteration) end")
      try reopened.close()
    }
  }

  @Test("with .never, everything before the last successful sync() survives, and the rest is a prefix")
  func neverDurabilityWithSync() throws {
    var random = SeededRandom.make(test: "power loss, .never + sync")
    var serial = 0
    for iteration in 0..<testIterations(6) {
      var fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      var store = try FaultWorkload.open(FaultWorkload.options(fileSystem, durability: .never))
      var model: [String: Data] = [:]
      for crash in 0..<5 {
        let context = "iteration \(iteration), crash \(crash)"
        let options = FaultWorkload.options(fileSystem, durability: .never)
        fileSystem.scheduleCrash(afterMutations: Int.random(in: 1...40, using: &random))
        // Every state since the last successful sync (or clean reopen): the log is appended in
        // order, so what survives is a prefix of the steps, each step whole or absent.
        var candidates = [model]
        for _ in 0..<40 {
          let step = FaultWorkload.step(random: &random, serial: &serial, syncs: true)
          let after = FaultWorkload.applying(step, to: model)
          do {
            try FaultWorkload.run(step, on: &store, options: options)
            model = after
            switch step {
            case .sync, .reopen: candidates = [model]
            default: candidates.append(model)
            }
          } catch {
            guard fileSystem.isPoweredOff else {
              Issue.record("\(context): \(step) failed without a fault: \(error)")
              return
            }
            candidates.append(after)
          }
          if fileSystem.isPoweredOff { break }
        }
        fileSystem = fileSystem.crash(using: &random)
        store = try FaultWorkload.open(FaultWorkload.options(fileSystem, durability: .never))
        let recovered = try FaultWorkload.contents(of: store)
        guard let match = FaultWorkload.expect(recovered, isOneOf: candidates, context, fileSystem: fileSystem) else {
          return
        }
        model = candidates[match]
      }
      try store.put(Data("after the crashes".utf8), forKey: "final")
      try store.sync()
      model["final"] = Data("after the crashes".utf8)
      fileSystem = fileSystem.crash(using: &random)
      let reopened = try FaultWorkload.open(FaultWorkload.options(fileSystem, durability: .never))
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "iteration \(iteration) end")
      try reopened.close()
    }
  }

  @Test("with .always and concurrent writers sharing syncs, every acknowledged write survives a crash")
  func concurrentWriters() throws {
    var random = SeededRandom.make(test: "power loss, concurrent writers")
    let writers = 4
    for iteration in 0..<testIterations(6) {
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      let options = FaultWorkload.options(fileSystem)
      let store = try FaultWorkload.open(options)
      fileSystem.scheduleCrash(afterMutations: Int.random(in: 20...200, using: &random))
      let seeds = (0..<writers).map { _ in random.next() }
      // Each writer owns its keys, so its acknowledged state is known whatever the others did.
      let outcomes = Locked<[Int: (model: [String: Data], interrupted: FaultWorkload.Step?)]>([:])
      let unexpected = Locked<[String]>([])
      DispatchQueue.concurrentPerform(iterations: writers) { writer in
        var random = SeededRandom(seed: seeds[writer])
        var serial = writer * 1_000_000
        var store = store
        let keys = (0..<6).map { "writer-\(writer)-\($0)" }
        var model: [String: Data] = [:]
        var interrupted: FaultWorkload.Step?
        for _ in 0..<60 {
          let step = FaultWorkload.step(random: &random, serial: &serial, keys: keys, maintenance: false)
          do {
            try FaultWorkload.run(step, on: &store, options: options)
            model = FaultWorkload.applying(step, to: model)
          } catch {
            if !fileSystem.isPoweredOff { unexpected.withLock { $0.append("\(step): \(error)") } }
            interrupted = step
            break
          }
        }
        outcomes.withLock { $0[writer] = (model, interrupted) }
      }
      #expect(unexpected.withLock { $0 }.isEmpty, "iteration \(iteration): writes failed without a fault")
      let survivor = fileSystem.crash(using: &random)
      let reopened = try FaultWorkload.open(FaultWorkload.options(survivor))
      let recovered = try FaultWorkload.contents(of: reopened)
      for (writer, outcome) in outcomes.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
        let mine = recovered.filter { $0.key.hasPrefix("writer-\(writer)-") }
        var candidates = [outcome.model]
        if let step = outcome.interrupted { candidates.append(FaultWorkload.applying(step, to: outcome.model)) }
        FaultWorkload.expect(mine, isOneOf: candidates, "iteration \(iteration), writer \(writer)")
      }
      try reopened.close()
    }
  }

  @Test("a stale hint of a full last segment, brought back by a crash, is replaced at open")
  func staleHintOfFullSegment() throws {
    let value = Data(repeating: 7, count: 100)
    let keys = (0..<6).map { "key-\($0)" }
    // The exact size of a segment holding the six records, so that the last one fills it.
    let measuring = FaultyFileSystem(directories: [FaultWorkload.directory])
    let scratch = try FaultWorkload.open(FaultWorkload.options(measuring, segmentSizeLimit: 1 << 20))
    for key in keys { try scratch.put(value, forKey: key) }
    try scratch.close()
    let segment = "\(FaultWorkload.path)/\(Segment.fileName(id: 1))"
    let full = UInt64(try #require(measuring.contents(of: segment)).count)

    var fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    var store = try FaultWorkload.open(FaultWorkload.options(fileSystem, segmentSizeLimit: full))
    for key in keys.prefix(2) { try store.put(value, forKey: key) }
    // A clean close leaves a hint for two records; the reopen removes it, without a
    // directory sync, and the segment fills up.
    try store.close()
    store = try FaultWorkload.open(FaultWorkload.options(fileSystem, segmentSizeLimit: full))
    for key in keys.dropFirst(2) { try store.put(value, forKey: key) }
    #expect(fileSystem.contents(of: segment)?.count == Int(full))
    // Sealing writes the hint for six records; power fails before any directory sync.
    #expect(try store.compact() == nil)
    fileSystem = fileSystem.crashLosingUnsyncedChanges()

    let reopened = try FaultWorkload.open(FaultWorkload.options(fileSystem, segmentSizeLimit: full))
    #expect(reopened.stats().recovery.segmentsScanned == 1)
    for key in keys { #expect(try reopened.get(key) == value) }
    let damage = try reopened.verify().damage
    #expect(damage.isEmpty, "verify found damage: \(damage)")
    try reopened.close()
    let again = try FaultWorkload.open(FaultWorkload.options(fileSystem, segmentSizeLimit: full))
    #expect(again.stats().recovery.segmentsFromHints == 1)
    #expect(again.count == keys.count)
    try again.close()
  }

  @Test("a store created below several new directories survives a power cut right after a durable put")
  func nestedNewDirectories() throws {
    let fileSystem = FaultyFileSystem(directories: ["/data"])
    var options = CaskStore.Options(durability: .always, autoCompaction: nil)
    options.fileSystem = fileSystem
    let path = "/data/users/alice/notes.cask"
    let store = try CaskStore(path: path, password: "pw", options: options)
    try store.put(Data("acknowledged".utf8), forKey: "note")
    // No close: the put returned, so it must survive; and with it every directory on its way.
    let survivor = fileSystem.crashLosingUnsyncedChanges()
    options.fileSystem = survivor
    options.createIfMissing = false
    let reopened = try CaskStore(path: path, password: "pw", options: options)
    #expect(try reopened.get("note") == Data("acknowledged".utf8))
    try reopened.close()
  }
}
