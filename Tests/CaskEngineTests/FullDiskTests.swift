import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// A disk that fills up mid-workload: the failing write reports `ENOSPC`, nothing acknowledged
/// is lost, nothing of the failed write appears, and the store works again once space is free.
@Suite("Full disk")
struct FullDiskTests {
  @Test("a put on a full disk fails with ENOSPC; the store recovers when space is freed")
  func fillAndFree() throws {
    var random = SeededRandom.make(test: "full disk")
    var serial = 0
    for iteration in 0..<testIterations(12) {
      let context = "iteration \(iteration)"
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      let options = FaultWorkload.options(fileSystem)
      var store = try FaultWorkload.open(options)
      var model: [String: Data] = [:]
      for _ in 0..<Int.random(in: 5...30, using: &random) {
        let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
        try FaultWorkload.run(step, on: &store, options: options)
        model = FaultWorkload.applying(step, to: model)
      }

      // Fill up: puts until one fails, which must be for lack of space.
      fileSystem.setFreeBytes(UInt64.random(in: 0...3000, using: &random))
      var failed: (key: String, value: Data)?
      for _ in 0..<200 {
        let key = FaultWorkload.keys.randomElement(using: &random)!
        let value = FaultWorkload.value(serial: &serial, random: &random)
        do {
          try store.put(value, forKey: key)
          model[key] = value
        } catch let error as CaskError {
          guard case .io(_, _, let code) = error, code == ENOSPC else {
            Issue.record("\(context): expected ENOSPC, got \(error)")
            return
          }
          failed = (key, value)
          break
        }
      }
      let (failedKey, failedValue) = try #require(failed, "\(context): the disk never filled up")
      // Everything acknowledged reads back; the failed put left no trace.
      FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "\(context), full")
      #expect(try store.get(failedKey) != failedValue)

      // Free the space: writes succeed again, across segment boundaries.
      fileSystem.setFreeBytes(nil)
      for _ in 0..<Int.random(in: 1...15, using: &random) {
        let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
        try FaultWorkload.run(step, on: &store, options: options)
        model = FaultWorkload.applying(step, to: model)
      }
      try store.close()
      let reopened = try FaultWorkload.open(options)
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "\(context), reopened")
      let damage = try reopened.verify().damage
      #expect(damage.isEmpty, "\(context): verify found damage: \(damage)")
      try reopened.close()
    }
  }

  @Test("a full disk during compaction fails it and leaves the store as it was")
  func fullDuringCompaction() throws {
    var random = SeededRandom.make(test: "full disk during compaction")
    var serial = 0
    for iteration in 0..<testIterations(8) {
      let context = "iteration \(iteration)"
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      let options = FaultWorkload.options(fileSystem, durability: .never)
      var store = try FaultWorkload.open(options)
      var model: [String: Data] = [:]
      for _ in 0..<60 {
        let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
        try FaultWorkload.run(step, on: &store, options: options)
        model = FaultWorkload.applying(step, to: model)
      }
      fileSystem.setFreeBytes(UInt64.random(in: 0...4000, using: &random))
      do {
        try store.compact()
      } catch let error as CaskError {
        guard case .io(_, _, let code) = error, code == ENOSPC else {
          Issue.record("\(context): expected ENOSPC, got \(error)")
          return
        }
      }
      FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "\(context), after compaction")
      fileSystem.setFreeBytes(nil)
      try store.put(Data("v0:after".utf8), forKey: "after")
      model["after"] = Data("v0:after".utf8)
      try store.close()
      let reopened = try FaultWorkload.open(options)
      FaultWorkload.expect(try FaultWorkload.contents(of: reopened), isOneOf: [model], "\(context), reopened")
      try reopened.close()
    }
  }
}
