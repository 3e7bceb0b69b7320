import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

/// Several threads on one store at once. Each writer owns its keys, so it can check every read
/// of them exactly; reads of other writers' keys can only be checked for being a value that was
/// written, which `ThreadValue` makes recognisable.
@Suite("Concurrent use of one store")
struct ConcurrencyTests {
  static let keysPerWriter = 24

  @Test("writers, a reader, repeated compaction and password changes at once keep every writer's keys exact")
  func mixedWorkload() throws {
    var random = SeededRandom.make(test: "concurrency-mixed")
    let seed = random.next()
    // Small segments: the writers keep sealing and starting segments while compaction replaces them.
    let options = CaskStore.Options(
      durability: .periodic(seconds: 0.005), segmentSizeLimit: 4 << 10, autoCompaction: nil)
    try withStore(options: options, password: "pw-0", label: "concurrent") { store, path throws in
      let writers = 4
      let operations = testIterations(300)
      let shared = SharedProgress(writers: writers)

      var bodies: [@Sendable () throws -> Void] = []
      for writer in 0..<writers {
        bodies.append {
          defer { shared.writersRunning.subtract(1, ordering: .releasing) }
          var generator = SeededRandom(seed: seed &+ UInt64(writer) &* 7_919)
          let model = try Self.writerLoop(
            store: store, writer: writer, writers: writers, operations: operations, random: &generator, shared: shared)
          shared.models.withLock { $0[writer] = model }
        }
      }
      bodies.append {
        // Reader: any value it sees must be one that was written under that key; verify must
        // never find damage in what is there, whatever is being appended or compacted.
        var generator = SeededRandom(seed: seed &+ 101)
        var rounds = 0
        repeat {
          let key = Self.key(writer: Int(generator.next() % UInt64(writers)), index: Int(generator.next() % 24))
          if let value = try store.get(key), !ThreadValue.isGenuine(value, for: key) {
            shared.fail("reader: get(\(key)) returned a value never written under that key")
          }
          for listed in try store.keys(withPrefix: "w1/") where !listed.hasPrefix("w1/") {
            shared.fail("reader: keys(withPrefix:) returned \(listed)")
          }
          rounds += 1
          if rounds % 64 == 0 {
            let report = try store.verify()
            if !report.isClean { shared.fail("verify during the run found damage: \(report.damage)") }
          }
        } while shared.writersRunning.load(ordering: .acquiring) > 0
      }
      bodies.append {
        repeat {
          try store.compact()
        } while shared.writersRunning.load(ordering: .acquiring) > 0
      }
      let passwordChanges = testIterations(6)
      bodies.append {
        // Each change holds the writers' lock for two PBKDF2 runs and a header rewrite: a few are
        // enough to land in the middle of appends, segment switches and compactions.
        for next in 1...passwordChanges where shared.writersRunning.load(ordering: .acquiring) > 0 {
          usleep(15_000)
          try store.changePassword(to: "pw-\(next)")
          shared.password.store(next, ordering: .releasing)
        }
      }
      runOnThreads(bodies, failures: shared)

      let problems = shared.failures.withLock { $0 }
      #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
      let models = shared.models.withLock { $0 }
      var expected: [String: Data] = [:]
      for model in models { expected.merge(model) { first, _ in first } }
      let password = "pw-\(shared.password.load(ordering: .acquiring))"
      #expect(store.stats().compactions > 0, "compaction never ran beside the writers")
      print(
        "[concurrency-mixed] \(store.stats().compactions) compactions and "
          + "\(shared.password.load(ordering: .acquiring)) password changes beside \(writers) writers")
      #expect(try Self.contents(of: store) == expected, "contents after the run, seed \(seed)")
      try store.close()

      #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: "pw-0", options: options) }
      let reopened = try CaskStore(path: path, password: password, options: options)
      #expect(try Self.contents(of: reopened) == expected, "contents after reopening, seed \(seed)")
      let report = try reopened.verify()
      #expect(report.isClean, "verify after reopening: \(report.damage)")
      try reopened.close()
    }
  }

  /// One writer's run over its own keys; checks every read of them against its model.
  private static func writerLoop(
    store: CaskStore, writer: Int, writers: Int, operations: Int, random: inout SeededRandom, shared: SharedProgress
  ) throws -> [String: Data] {
    var model: [String: Data] = [:]
    var version = 0
    func ownKey() -> String { key(writer: writer, index: Int(random.next() % UInt64(keysPerWriter))) }
    for _ in 0..<operations {
      version += 1
      switch random.next() % 100 {
      case 0..<40:
        let key = ownKey()
        let value = ThreadValue.make(key: key, version: version)
        try store.put(value, forKey: key)
        model[key] = value
      case 40..<60:
        let key = ownKey()
        let found = try store.get(key)
        if found != model[key] { shared.fail("writer \(writer): get(\(key)) differs from what it wrote last") }
      case 60..<75:
        let key = ownKey()
        let existed = try store.delete(key)
        if existed != (model[key] != nil) { shared.fail("writer \(writer): delete(\(key)) returned \(existed)") }
        model[key] = nil
      case 75..<93:
        var next = model
        try store.batch { batch in
          for step in 0..<Int(2 + random.next() % 4) {
            let key = ownKey()
            if random.next() % 3 == 0 {
              try batch.delete(key)
              next[key] = nil
            } else {
              let value = ThreadValue.make(key: key, version: version * 8 + step)
              try batch.put(value, forKey: key)
              next[key] = value
            }
          }
        }
        model = next
      default:
        let other = key(writer: Int(random.next() % UInt64(writers)), index: Int(random.next() % 24))
        if let value = try store.get(other), !ThreadValue.isGenuine(value, for: other) {
          shared.fail("writer \(writer): get(\(other)) returned a value never written under that key")
        }
      }
    }
    return model
  }

  @Test("a second CaskStore on the same path in the same process fails with alreadyOpen, also while the first is busy")
  func secondOpenIsLocked() throws {
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4 << 10, autoCompaction: nil)
    try withStore(options: options, label: "locked-busy") { store, path throws in
      let shared = SharedProgress(writers: 1)
      let writes = testIterations(400)
      runOnThreads(
        [
          {
            defer { shared.writersRunning.subtract(1, ordering: .releasing) }
            for index in 0..<writes {
              try store.put(ThreadValue.make(key: "k\(index % 50)", version: index), forKey: "k\(index % 50)")
            }
          },
          {
            var attempts = 0
            repeat {
              attempts += 1
              for readOnly in [false, true] {
                var second = options
                second.readOnly = readOnly
                // The lock is taken before the header is read: a wrong password also gets
                // `alreadyOpen` (this process holds the store).
                for password in ["pw", "not the password"] {
                  do {
                    let intruder = try CaskStore(path: path, password: password, options: second)
                    try? intruder.close()
                    shared.fail("a second open (readOnly: \(readOnly)) succeeded while the store was open")
                  } catch let error as CaskError {
                    if error != .alreadyOpen(path: path + "/" + CaskFormat.lockFileName) {
                      shared.fail("a second open (readOnly: \(readOnly)) threw \(error), not alreadyOpen")
                    }
                  }
                }
              }
            } while shared.writersRunning.load(ordering: .acquiring) > 0 || attempts < 3
          },
        ], failures: shared)
      let problems = shared.failures.withLock { $0 }
      #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
      // The refused opens changed nothing: the writer's data is intact, and the lock is free after close.
      for index in writes - 50..<writes {
        #expect(try store.get("k\(index % 50)") == ThreadValue.make(key: "k\(index % 50)", version: index))
      }
      try store.close()
      let reopened = try CaskStore(path: path, password: "pw", options: options)
      #expect(reopened.count == min(50, writes))
      #expect(try reopened.verify().isClean)
      try reopened.close()
    }
  }

  @Test("verify() does not fail when a hint disappears between its check and its open, as beside a compaction")
  func verifyWhileHintsDisappear() throws {
    try withTemporaryDirectory("verify-beside-compaction") { directory throws in
      // Compaction removes a replaced segment's hint, then the segment, while verify may hold the
      // segment and be about to read the hint. The hook removes each hint right after verify saw it.
      let disk = HookedFileSystem(afterFileKind: { path, kind in
        guard kind == .file, path.hasSuffix("." + CaskFormat.hintExtension) else { return }
        try? FileManager.default.removeItem(atPath: path)
      })
      let options = CaskStore.Options(
        durability: .never, segmentSizeLimit: 1 << 10, autoCompaction: nil, fileSystem: disk)
      let store = try CaskStore(path: directory.file("store.cask"), password: "pw", options: options)
      defer { try? store.close() }
      for index in 0..<40 {
        try store.put(ThreadValue.make(key: "k\(index)", version: index), forKey: "k\(index)")
      }
      try #require(store.stats().segments > 2)
      disk.armed.store(true, ordering: .releasing)
      let report = try store.verify()
      disk.armed.store(false, ordering: .releasing)
      #expect(report.isClean)
      #expect(report.recordsChecked == 40)
    }
  }

  static func key(writer: Int, index: Int) -> String { "w\(writer)/\(index)" }

  /// Every key and value of a store.
  static func contents(of store: CaskStore) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }
}

/// Values the concurrency tests write: `key#version|` and bytes derived from both, so any value
/// read back can be checked for being one that was written under that key.
enum ThreadValue {
  static func make(key: String, version: Int) -> Data {
    var generator = SeededRandom(seed: seed(key: key, version: version))
    var data = Data("\(key)#\(version)|".utf8)
    data.append(generator.bytes(Int(generator.next() % 300)))
    return data
  }

  /// Whether `value` is exactly a value `make(key:version:)` produces for `key`.
  static func isGenuine(_ value: Data, for key: String) -> Bool {
    guard let bar = value.firstIndex(of: UInt8(ascii: "|")) else { return false }
    let label = String(decoding: value[value.startIndex..<bar], as: UTF8.self)
    guard let hash = label.lastIndex(of: "#"), label[..<hash] == key,
      let version = Int(label[label.index(after: hash)...])
    else { return false }
    return make(key: key, version: version) == value
  }

  private static func seed(key: String, version: Int) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in key.utf8 {
      hash ^= UInt64(byte)
      hash &*= 0x100_0000_01B3
    }
    return hash ^ UInt64(version) &* 0x9E37_79B9_7F4A_7C15
  }
}

/// What the threads of a concurrency test share.
final class SharedProgress: Sendable {
  let writersRunning: Atomic<Int>
  let password = Atomic(0)
  let models: Locked<[[String: Data]]>
  let failures = Locked<[String]>([])

  init(writers: Int) {
    writersRunning = Atomic(writers)
    models = Locked(Array(repeating: [:], count: writers))
  }

  /// Records a failed check (Swift Testing's `#expect` belongs to the test's own task).
  func fail(_ message: String) {
    failures.withLock { $0.append(message) }
  }
}

/// Runs each body on a thread of its own and waits for all of them. Unlike tasks, every body
/// really runs at once, even on two cores; a body that throws is recorded as a failure, and
/// counts as finished for the loops that wait on `writersRunning`.
func runOnThreads(_ bodies: [@Sendable () throws -> Void], failures: SharedProgress) {
  let group = DispatchGroup()
  for (index, body) in bodies.enumerated() {
    group.enter()
    let thread = Thread {
      defer { group.leave() }
      do {
        try body()
      } catch {
        failures.fail("thread \(index) threw \(error)")
      }
    }
    thread.stackSize = 1 << 22
    thread.start()
  }
  group.wait()
}
