import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// A device that fails with EIO: reads report it instead of returning wrong data, a failed
/// write leaves the store usable, and a failed sync stops writes until the store is reopened.
@Suite("EIO")
struct IOErrorTests {
  /// Segment files, also under the temporary name a new segment's descriptor was opened with.
  private static func isSegment(_ path: String) -> Bool { path.contains(".seg") }

  private static func isEIO(_ error: any Error) -> Bool {
    if case CaskError.io(_, _, let code) = error { return code == EIO }
    return false
  }

  /// A store holding a random workload, and its model.
  private static func filled(
    _ fileSystem: FaultyFileSystem, random: inout SeededRandom, serial: inout Int, steps: Int = 40
  ) throws -> (CaskStore, [String: Data]) {
    let options = FaultWorkload.options(fileSystem)
    var store = try FaultWorkload.open(options)
    var model: [String: Data] = [:]
    for _ in 0..<steps {
      let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
      try FaultWorkload.run(step, on: &store, options: options)
      model = FaultWorkload.applying(step, to: model)
    }
    return (store, model)
  }

  @Test("EIO on read makes get throw CaskError.io, never return other data; reads work once it clears")
  func readErrors() throws {
    var random = SeededRandom.make(test: "EIO on read")
    var serial = 0
    for iteration in 0..<testIterations(5) {
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      let (store, model) = try Self.filled(fileSystem, random: &random, serial: &serial)
      try #require(!model.isEmpty)
      // Some reads pass, then every segment read fails.
      let after = Int.random(in: 0..<model.count, using: &random)
      fileSystem.inject(.init([.read], after: after, paths: Self.isSegment))
      var failures = 0
      for (key, value) in model {
        do {
          #expect(try store.get(key) == value, "iteration \(iteration): \(key) read back wrong")
        } catch {
          #expect(Self.isEIO(error), "iteration \(iteration): expected CaskError.io EIO, got \(error)")
          failures += 1
        }
      }
      #expect(failures == model.count - after)
      fileSystem.clearFaults()
      FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "iteration \(iteration)")
      try store.close()
    }
  }

  @Test("EIO on write fails that put only; the store stays consistent and usable")
  func writeErrors() throws {
    var random = SeededRandom.make(test: "EIO on write")
    var serial = 0
    for iteration in 0..<testIterations(5) {
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      var (store, model) = try Self.filled(fileSystem, random: &random, serial: &serial)
      let options = FaultWorkload.options(fileSystem)
      fileSystem.inject(.init([.write], times: 1, paths: Self.isSegment))
      var failures = 0
      for _ in 0..<20 {
        let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
        do {
          try FaultWorkload.run(step, on: &store, options: options)
          model = FaultWorkload.applying(step, to: model)
        } catch {
          #expect(Self.isEIO(error), "iteration \(iteration): expected EIO, got \(error)")
          failures += 1
        }
      }
      #expect(failures <= 1)
      FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "iteration \(iteration)")
      try store.close()
      let reopened = try FaultWorkload.open(options)
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "iteration \(iteration)")
      let damage = try reopened.verify().damage
      #expect(damage.isEmpty, "iteration \(iteration): verify found damage: \(damage)")
      try reopened.close()
    }
  }

  @Test("EIO on sync under .always fails the put, later writes fail until reopen, nothing acknowledged is lost")
  func syncErrors() throws {
    var random = SeededRandom.make(test: "EIO on sync")
    var serial = 0
    for iteration in 0..<testIterations(5) {
      let context = "iteration \(iteration)"
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      var (store, model) = try Self.filled(fileSystem, random: &random, serial: &serial)
      let options = FaultWorkload.options(fileSystem)
      // One sync fails; the store must not trust a later one.
      fileSystem.inject(.init([.sync], times: 1, paths: Self.isSegment))
      var failedStep: FaultWorkload.Step?
      while failedStep == nil {
        let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
        do {
          try FaultWorkload.run(step, on: &store, options: options)
          model = FaultWorkload.applying(step, to: model)
        } catch {
          #expect(Self.isEIO(error), "\(context): expected EIO, got \(error)")
          failedStep = step
        }
      }
      let failed = try #require(failedStep)
      for _ in 0..<3 {
        let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
        #expect(throws: CaskError.self, "\(context): a write after a failed sync succeeded") {
          try FaultWorkload.run(step, on: &store, options: options)
        }
      }
      #expect(throws: CaskError.self) { try store.sync() }
      #expect(throws: CaskError.self) { try store.compact() }
      // Reads still serve what was acknowledged (or the failed write, which reads saw).
      FaultWorkload.expect(
        try FaultWorkload.contents(of: store), isOneOf: [model, FaultWorkload.applying(failed, to: model)], context)
      try? store.close()

      // Reopen after power loss, the harshest "healthy" restart: the write whose sync failed
      // may be gone, everything acknowledged before it is there.
      let healthy = fileSystem.crash(using: &random)
      let reopened = try FaultWorkload.open(FaultWorkload.options(healthy))
      FaultWorkload.expect(
        try FaultWorkload.contents(of: reopened), isOneOf: [model, FaultWorkload.applying(failed, to: model)],
        "\(context), reopened")
      try reopened.put(Data("v0:healthy".utf8), forKey: "after")
      #expect(try reopened.get("after") == Data("v0:healthy".utf8))
      try reopened.close()
    }
  }

  @Test("with .never, a failed sync is not forgotten: a later successful sync() covers every write before it")
  func syncErrorsWithoutDurability() throws {
    var random = SeededRandom.make(test: "EIO on sync, .never")
    var serial = 0
    for iteration in 0..<testIterations(8) {
      let context = "iteration \(iteration)"
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      let options = FaultWorkload.options(fileSystem, durability: .never)
      var store = try FaultWorkload.open(options)
      var model: [String: Data] = [:]
      // The sync that fails is the one sealing a full segment, or an explicit one.
      fileSystem.inject(
        .init([.sync], after: Int.random(in: 0...4, using: &random), times: 1, paths: Self.isSegment))
      var synced = model
      var pending: [[String: Data]] = []
      for _ in 0..<60 {
        let step = FaultWorkload.step(random: &random, serial: &serial, syncs: true, maintenance: false)
        do {
          try FaultWorkload.run(step, on: &store, options: options)
          model = FaultWorkload.applying(step, to: model)
          if case .sync = step {
            synced = model
            pending = []
          } else {
            pending.append(model)
          }
        } catch {
          #expect(Self.isEIO(error), "\(context): expected EIO, got \(error)")
          pending.append(FaultWorkload.applying(step, to: model))
        }
      }
      try? store.close()
      let survivor = fileSystem.crash(using: &random)
      let reopened = try FaultWorkload.open(FaultWorkload.options(survivor, durability: .never))
      // What survives is the last synced state or a later one: never older.
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [synced] + pending, context)
      try reopened.close()
    }
  }

  @Test("a compaction output whose header cannot be written is removed, not left behind")
  func failedOutputHeaderIsRemoved() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem, durability: .never))
    defer { try? store.close() }
    for index in 0..<40 { try store.put(Data(repeating: UInt8(index), count: 200), forKey: "key-\(index % 10)") }
    fileSystem.inject(FaultyFileSystem.Fault([.write], times: 1, paths: { $0.hasSuffix(".seg.tmp") }))
    #expect(throws: CaskError.self) { try store.compact() }
    let left = try fileSystem.contentsOfDirectory(FaultWorkload.path).filter { $0.hasSuffix(".tmp") }
    #expect(left.isEmpty, "\(left)")
    #expect(try store.compact() != nil, "the next compaction works")
    for index in 0..<10 { #expect(try store.get("key-\(index)") == Data(repeating: UInt8(index + 30), count: 200)) }
  }
}
