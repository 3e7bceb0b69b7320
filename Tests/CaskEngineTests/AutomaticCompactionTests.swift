import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Automatic compaction runs on its own thread, so its errors reach the caller through
/// `stats()`.
@Suite("Automatic compaction reports its failures")
struct AutomaticCompactionTests {
  @Test("an automatic compaction that fails (a full disk) is reported in stats, and the store keeps its data")
  func failureIsReportedInStats() throws {
    let fileSystem = FaultyFileSystem(directories: ["/data"])
    var options = CaskStore.Options(durability: .never, fileSystem: fileSystem)
    options.autoCompaction = .init(deadRatio: 0.1, minimumDeadBytes: 1)
    let store = try CaskStore(path: "/data/s.cask", password: testPassword, options: options)
    defer { try? store.close() }
    try store.put(Data("first".utf8), forKey: "k")
    // The writer's segment exists; the compaction's output cannot be made.
    fileSystem.inject(.init([.open], errno: ENOSPC, paths: { $0.hasSuffix(".seg.tmp") }))
    #expect(store.stats().automaticCompactionFailure == nil)
    // The 256th write starts the compaction (it seals the writer's segment; a later write would
    // need a new one, which the fault refuses too).
    for round in 1..<256 { try store.put(Data("value \(round)".utf8), forKey: "k") }
    let deadline = Date().addingTimeInterval(60)
    while store.stats().automaticCompactionFailure == nil && Date() < deadline { usleep(1_000) }
    guard case .io(let operation, _, let code) = store.stats().automaticCompactionFailure else {
      Issue.record("no failure reported: \(String(describing: store.stats().automaticCompactionFailure))")
      return
    }
    #expect(operation == "open" && code == ENOSPC)
    store.waitForCompaction()
    #expect(try store.get("k") == Data("value 255".utf8))
  }
}
