import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A process that dies holding the store's lock leaves the LOCK file behind, but not the lock:
/// it is an advisory `flock`, released by the kernel with the process.
@Suite("Stale lock after a crash")
struct StaleLockTests {
  @Test("a writer SIGKILLed while holding the lock leaves LOCK behind, and the next open takes it at once")
  func killedHolder() throws {
    let writer = try CrashWriterBinary.locate()
    let directory = try TemporaryDirectory("stale-lock")
    defer { directory.remove() }
    let path = directory.file("store.cask")
    try CaskStore(path: path, password: "pw", options: CaskStore.Options(durability: .never)).close()

    let seed: UInt64 = 42
    let count = try CrashWriterProcess.run(
      binary: writer, arguments: [path, "pw", String(seed), "0", String(1 << 20)],
      plan: KillPlan(afterAcknowledgements: 5, delayMicroseconds: 0), log: directory.file("writer.log"),
      context: "stale lock")
    #expect(count >= 5)
    #expect(FileManager.default.fileExists(atPath: path + "/" + CaskFormat.lockFileName))

    var workload = CrashWorkload(seed: seed, run: 0)
    var acknowledged: [String: Data] = [:]
    for _ in 0..<count { CrashWorkload.apply(workload.next(), to: &acknowledged) }
    var withInFlight = acknowledged
    CrashWorkload.apply(workload.next(), to: &withInFlight)

    for readOnly in [true, false] {
      let options = CaskStore.Options(durability: .never, autoCompaction: nil, readOnly: readOnly)
      let store = try CaskStore(path: path, password: "pw", options: options)
      var contents: [String: Data] = [:]
      for key in try store.keys() { contents[key] = try store.get(key) }
      #expect(contents == acknowledged || contents == withInFlight, "readOnly: \(readOnly)")
      try store.close()
    }
  }
}
