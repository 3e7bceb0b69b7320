import CaskEngine
import CaskTestSupport
import Foundation
import Testing

/// Stores built by the real engine, read by `scripts/read-store.py`, a reader written from
/// Docs/FORMAT.md and Docs/CODEC.md alone. Both must see the same live contents, and the
/// reader must find every CRC, HMAC, header field and hint entry as those pages describe.
@Suite(
  "An independent reader written from Docs/FORMAT.md agrees with the engine",
  .enabled(
    if: IndependentReader.isAvailable,
    "python3 with the `cryptography` module is needed to run scripts/read-store.py"))
struct IndependentReaderTests {
  /// Non-ASCII on purpose: PBKDF2 takes all of the password's UTF-8 bytes (CODEC.md).
  static let password = "correct horse ✓ pässword"

  @Test("several segments, overwrites, deletes, batches, odd keys and large values; then compaction")
  func workloadThenCompaction() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.workloadThenCompaction")
    try withTemporaryDirectory("independent-reader") { directory throws in
      let path = directory.file("store.cask")
      let options = CaskStore.Options(durability: .never, segmentSizeLimit: 16 << 10, autoCompaction: nil)
      var model = Model()

      let store = try CaskStore(path: path, password: Self.password, options: options)
      try Workload.run(on: store, model: &model, operations: 400, random: &random)
      // Large values for certain (the workload adds some at random): one alone, one in a batch
      // that gets a segment of its own, one overwritten, each a few MiB.
      let large = [random.bytes(3 << 20), random.bytes(3 << 19), random.bytes(2 << 20), random.bytes(5 << 19)]
      try store.put(large[0], forKey: "large\u{0}alone")
      try store.batch { batch in
        try batch.put(large[1], forKey: "large-in-batch-é")
        try batch.put(Data(), forKey: "empty-beside-large")
      }
      try store.put(large[2], forKey: "large-overwritten")
      try store.put(large[3], forKey: "large-overwritten")
      model[Data("large\u{0}alone".utf8)] = large[0]
      model[Data("large-in-batch-é".utf8)] = large[1]
      model[Data("empty-beside-large".utf8)] = Data()
      model[Data("large-overwritten".utf8)] = large[3]
      try Workload.run(on: store, model: &model, operations: 50, random: &random)
      try store.close()
      try Self.compare(path, password: Self.password, model: model, checkHints: true, context: "after close")

      let reopened = try CaskStore(path: path, password: Self.password, options: options)
      try Workload.run(on: reopened, model: &model, operations: 150, random: &random)
      _ = try #require(try reopened.compact())
      try reopened.close()
      try Self.compare(path, password: Self.password, model: model, checkHints: true, context: "after compaction")

      // Writes after a compaction: segments with a larger base than the outputs (section 8).
      let third = try CaskStore(path: path, password: Self.password, options: options)
      try Workload.run(on: third, model: &model, operations: 150, random: &random)
      _ = try #require(try third.compact())
      try Workload.run(on: third, model: &model, operations: 100, random: &random)
      try third.close()
      try Self.compare(
        path, password: Self.password, model: model, checkHints: true, context: "after writes around a compaction")
    }
  }

  @Test(
    "a password change from an RNCryptor header to scrypt: the reader needs the new password, the old one is refused")
  func passwordChange() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.passwordChange")
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: 8 << 10, autoCompaction: nil)
    options.keyDerivation = .rncryptor
    var model = Model()
    try withStore(options: options, password: Self.password, label: "independent-reader-pw") { store, path throws in
      try Workload.run(on: store, model: &model, operations: 200, random: &random, largeValues: false)
      try store.close()
      try Self.compare(path, password: Self.password, model: model, checkHints: true, context: "RNCryptor header")
      let reopened = try CaskStore(path: path, password: Self.password, options: options)
      try reopened.changePassword(to: "a new password, ünïcödé", keyDerivation: testKeyDerivation)
      try Workload.run(on: reopened, model: &model, operations: 50, random: &random, largeValues: false)
      try reopened.close()
      try Self.compare(
        path, password: "a new password, ünïcödé", model: model, checkHints: true, context: "after changePassword")
      let refused = try IndependentReader.run(path, password: Self.password, checkHints: false)
      #expect(refused.status == 1, "the old password must be refused; stderr: \(refused.stderr)")
      #expect(refused.stderr.contains("wrong password"), "stderr: \(refused.stderr)")
    }
  }

  @Test("a store after password changes (older key epochs, then rotated by compaction) reads the same")
  func rotatedStore() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.rotatedStore")
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: 8 << 10, autoCompaction: nil)
    options.keyDerivation = testKeyDerivation
    var model = Model()
    try withStore(options: options, password: Self.password, label: "independent-reader-epochs") { store, path throws in
      try Workload.run(on: store, model: &model, operations: 150, random: &random, largeValues: false)
      try store.changePassword(to: "second")
      try Workload.run(on: store, model: &model, operations: 80, random: &random, largeValues: false)
      try store.changePassword(to: "third")
      try Workload.run(on: store, model: &model, operations: 40, random: &random, largeValues: false)
      #expect(store.keyEpochs.olderEpochs == [0, 1])
      try store.close()
      try Self.compare(path, password: "third", model: model, checkHints: true, context: "two older epochs")
      let reopened = try CaskStore(path: path, password: "third", options: options)
      _ = try #require(try reopened.rotateKeys())
      try Workload.run(on: reopened, model: &model, operations: 30, random: &random, largeValues: false)
      #expect(reopened.keyEpochs.isRotated)
      try reopened.close()
      try Self.compare(path, password: "third", model: model, checkHints: true, context: "rotated")
      let refused = try IndependentReader.run(path, password: "second", checkHints: false)
      #expect(refused.status == 1, "an older password must be refused; stderr: \(refused.stderr)")
    }
  }

  @Test("a version 2 store upgraded to version 3 reads the same")
  func upgradedStore() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.upgradedStore")
    try withTemporaryDirectory("independent-reader-upgrade") { directory throws in
      let path = directory.file("store.cask")
      var options = CaskStore.Options(durability: .never, segmentSizeLimit: 8 << 10, autoCompaction: nil)
      options.newStoreFormatVersion = 2
      var model = Model()
      let store = try CaskStore(path: path, password: Self.password, options: options)
      try Workload.run(on: store, model: &model, operations: 150, random: &random, largeValues: false)
      try store.close()
      try Self.compare(path, password: Self.password, model: model, checkHints: true, context: "version 2")
      #expect(try CaskStore.upgrade(at: path, password: Self.password).upgraded)
      try Self.compare(path, password: Self.password, model: model, checkHints: true, context: "upgraded")
    }
  }

  @Test("a store left without close (.always: reserved zeros, no hint for the active segment)")
  func leftWithoutClose() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.leftWithoutClose")
    try withTemporaryDirectory("independent-reader-crash") { directory throws in
      let path = directory.file("store.cask")
      let image = directory.file("image.cask")
      let options = CaskStore.Options(durability: .always, segmentSizeLimit: 64 << 10, autoCompaction: nil)
      var model = Model()
      let store = try CaskStore(path: path, password: Self.password, options: options)
      try Workload.run(on: store, model: &model, operations: 250, random: &random, largeValues: false)
      // The files as a crash would leave them: copied while the store is open.
      try Self.copyStore(from: path, to: image)
      let names = try FileManager.default.contentsOfDirectory(atPath: image)
      let segments = names.filter { $0.hasSuffix(".seg") }.sorted()
      let hints = Set(names.filter { $0.hasSuffix(".hint") })
      let last = try #require(segments.last)
      #expect(!hints.contains(last.replacingOccurrences(of: ".seg", with: ".hint")), "the active segment has no hint")
      try Self.expectSame(store, model: model, context: "the open store")
      try Self.compare(image, password: Self.password, model: model, checkHints: true, context: "crash image")
      let result = try IndependentReader.run(image, password: Self.password, checkHints: false)
      #expect(result.stderr.contains("reserved zeros"), "an .always writer reserves zeros; stderr: \(result.stderr)")
      try store.close()
      try Self.compare(path, password: Self.password, model: model, checkHints: true, context: "after the late close")
    }
  }

  @Test("the reader refuses, as open does, a version 3 store whose segments disagree with its manifest")
  func manifestDisagreementsAreRefused() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.manifestDisagreementsAreRefused")
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 8 << 10, autoCompaction: nil)
    var model = Model()
    try withStore(options: options, password: Self.password, label: "independent-reader-manifest") { store, path in
      try Workload.run(on: store, model: &model, operations: 150, random: &random, largeValues: false)
      try store.close()
      let agreed = try IndependentReader.run(path, password: Self.password, checkHints: false)
      #expect(agreed.status == 0, "stderr: \(agreed.stderr)")
      #expect(agreed.stderr.contains("manifest: generation"), "stderr: \(agreed.stderr)")
      let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
      #expect(segments.count > 1)
      let first = "\(path)/\(try #require(segments.first))"
      try FileDamage.truncate(first, to: try FileDamage.size(of: first) - 1)
      let cut = try IndependentReader.run(path, password: Self.password, checkHints: false)
      #expect(cut.status == 1 && cut.stderr.contains("the manifest says"), "stderr: \(cut.stderr)")
      try FileManager.default.removeItem(atPath: first)
      let missing = try IndependentReader.run(path, password: Self.password, checkHints: false)
      #expect(missing.status == 1 && missing.stderr.contains("missing"), "stderr: \(missing.stderr)")
    }
  }

  @Test("a torn last batch is dropped by the reader exactly as by a read-only open")
  func tornTail() throws {
    var random = SeededRandom.make(test: "IndependentReaderTests.tornTail")
    // Version 2: the tail is cut after a clean close, which a version 3 manifest reports.
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 64 << 10, autoCompaction: nil)
      .creatingVersion2
    var model = Model()
    try withStore(options: options, password: Self.password, label: "independent-reader-torn") { store, path throws in
      try Workload.run(on: store, model: &model, operations: 120, random: &random, largeValues: false)
      try store.close()
      // Cut the last segment by a few bytes, inside its last record, and drop its hint.
      let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
      let last = try #require(segments.last)
      let lastPath = "\(path)/\(last)"
      let cut = Int(random.next() % 40) + 1
      try FileDamage.truncate(lastPath, to: try FileDamage.size(of: lastPath) - cut)
      try? FileManager.default.removeItem(atPath: lastPath.replacingOccurrences(of: ".seg", with: ".hint"))

      let result = try IndependentReader.run(path, password: Self.password, checkHints: true)
      #expect(result.status == 0, "reader failed: \(result.stderr)")
      #expect(result.stderr.contains("torn tail"), "stderr: \(result.stderr)")
      var readOnly = options
      readOnly.readOnly = true
      let engine = try CaskStore(path: path, password: Self.password, options: readOnly)
      let seen = try Self.contents(of: engine)
      try engine.close()
      Self.expectEqual(
        result.entries, seen, context: "reader against a read-only open after a torn tail (cut \(cut) bytes)")
    }
  }

  // MARK: - Helpers

  typealias Model = [Data: Data]

  /// Runs the reader and compares it with the model and with a read-only open of the store.
  static func compare(_ path: String, password: String, model: Model, checkHints: Bool, context: String) throws {
    let result = try IndependentReader.run(path, password: password, checkHints: checkHints)
    #expect(result.status == 0, "\(context): reader failed: \(result.stderr)")
    guard result.status == 0 else { return }
    let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) }
    Self.expectEqual(result.entries, expected, context: "\(context): reader against the model")
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.readOnly = true
    let store = try CaskStore(path: path, password: password, options: options)
    defer { try? store.close() }
    Self.expectEqual(result.entries, try Self.contents(of: store), context: "\(context): reader against the engine")
  }

  static func expectSame(_ store: CaskStore, model: Model, context: String) throws {
    let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) }
    expectEqual(try contents(of: store), expected, context: "\(context): engine against the model")
  }

  /// `keys()` and `get`, sorted by the keys' UTF-8 bytes.
  static func contents(of store: CaskStore) throws -> [(Data, Data)] {
    var result: [(Data, Data)] = []
    for key in try store.keys() {
      guard let value = try store.get(key) else {
        Issue.record("keys() lists \(key.debugDescription) but get returns nil")
        continue
      }
      result.append((Data(key.utf8), value))
    }
    return result.sorted { $0.0.lexicographicallyPrecedes($1.0) }
  }

  static func expectEqual(_ found: [(Data, Data)], _ expected: [(Data, Data)], context: String) {
    #expect(found.count == expected.count, "\(context): \(found.count) keys, expected \(expected.count)")
    let foundMap = Dictionary(found, uniquingKeysWith: { first, _ in first })
    let expectedMap = Dictionary(expected, uniquingKeysWith: { first, _ in first })
    var differences: [String] = []
    for (key, value) in expectedMap where foundMap[key] != value {
      differences.append(
        "\(String(decoding: key, as: UTF8.self).debugDescription): "
          + (foundMap[key].map { "\($0.count) bytes" } ?? "missing") + ", expected \(value.count) bytes")
    }
    for key in foundMap.keys where expectedMap[key] == nil {
      differences.append("\(String(decoding: key, as: UTF8.self).debugDescription): unexpected")
    }
    #expect(differences.isEmpty, "\(context): \(differences.prefix(10).joined(separator: "; "))")
    #expect(found.map(\.0) == expected.map(\.0), "\(context): keys not in the same byte order")
  }

  static func copyStore(from source: String, to destination: String) throws {
    try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
    for name in try FileManager.default.contentsOfDirectory(atPath: source) {
      // The store is open: its hint queue may rename a `.tmp` file between the listing and
      // the read. The image then lacks that file, as a crash before the rename would leave it.
      guard let data = FileManager.default.contents(atPath: "\(source)/\(name)") else {
        #expect(name.hasSuffix(CaskFormat.temporarySuffix), "\(name) vanished from an open store")
        continue
      }
      try data.write(to: URL(fileURLWithPath: "\(destination)/\(name)"))
    }
  }
}

/// A seeded random workload of puts, deletes, batches and transactions.
enum Workload {
  /// Keys with NUL bytes, non-ASCII letters, and both forms of "é" (the format keeps the
  /// exact UTF-8 bytes, without normalisation).
  static func key(_ random: inout SeededRandom) -> String {
    let n = random.next() % 60
    switch random.next() % 8 {
    case 0: return "nul\u{0}key\u{0}\(n)"
    case 1: return "ключ-\(n)-日本"
    case 2: return "caf\u{E9}-\(n % 6)"  // precomposed é
    case 3: return "cafe\u{301}-\(n % 6)"  // e + combining acute
    case 4: return String(repeating: "long-key-", count: Int(n % 12) + 1) + "\(n)"
    case 5: return "\u{1F600}\(n)"
    default: return "k\(n)"
    }
  }

  static func value(_ random: inout SeededRandom, largeValues: Bool) -> Data {
    switch random.next() % 100 {
    case 0..<8: return Data()
    case 8 where largeValues: return random.bytes(1 << 20 + Int(random.next() % (2 << 20)))
    case 9..<20: return random.bytes(Int(random.next() % 4000))
    default: return random.bytes(Int(random.next() % 64))
    }
  }

  static func run(
    on store: CaskStore, model: inout [Data: Data], operations: Int, random: inout SeededRandom,
    largeValues: Bool = true
  ) throws {
    var large = 0
    for _ in 0..<operations {
      switch random.next() % 10 {
      case 0..<5:
        let key = key(&random)
        var data = value(&random, largeValues: largeValues && large < 3)
        if data.count > 1 << 20 { large += 1 }
        if data.count > 4 << 20 { data = data.prefix(4 << 20) }
        try store.put(data, forKey: key)
        model[Data(key.utf8)] = data
      case 5..<7:
        let key = key(&random)
        _ = try store.delete(key)
        model[Data(key.utf8)] = nil
      case 7..<9:
        // A batch, with some keys written several times (only the last operation counts).
        var steps: [(String, Data?)] = []
        for _ in 0..<(Int(random.next() % 6) + 1) {
          let key = key(&random)
          steps.append((key, random.next() % 4 == 0 ? nil : value(&random, largeValues: false)))
          if random.next() % 5 == 0 { steps.append((key, value(&random, largeValues: false))) }
        }
        try store.batch { batch in
          for (key, value) in steps {
            if let value { try batch.put(value, forKey: key) } else { try batch.delete(key) }
          }
        }
        for (key, value) in steps { model[Data(key.utf8)] = value }
      default:
        let key = key(&random)
        let other = self.key(&random)
        let current = try store.transaction { transaction -> Data? in
          let current = try store.get(key)
          try transaction.put((current ?? Data()) + Data("+".utf8), forKey: key)
          try transaction.delete(other)
          return current
        }
        #expect(current == model[Data(key.utf8)], "transaction read of \(key.debugDescription)")
        // In the order the transaction wrote them: if both name the same key, the delete wins.
        model[Data(key.utf8)] = (current ?? Data()) + Data("+".utf8)
        model[Data(other.utf8)] = nil
      }
    }
  }
}

/// Runs `scripts/read-store.py`.
enum IndependentReader {
  struct Result {
    var status: Int32
    var stdout: Data
    var stderr: String
    /// (key bytes, value) in output order.
    var entries: [(Data, Data)] {
      String(decoding: stdout, as: UTF8.self).split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String],
          let key = object["key"], let value = object["value"].flatMap({ Data(base64Encoded: $0) })
        else {
          Issue.record("unreadable output line: \(line)")
          return nil
        }
        return (Data(key.utf8), value)
      }
    }
  }

  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let script = repository.appendingPathComponent("scripts/read-store.py").path

  static let isAvailable: Bool = {
    guard
      let result = try? execute(["python3", "-c", "import cryptography.hazmat.primitives.ciphers"], environment: [:])
    else { return false }
    return result.status == 0
  }()

  static func run(_ path: String, password: String, checkHints: Bool) throws -> Result {
    var arguments = ["python3", script]
    if checkHints { arguments.append("--check-hints") }
    arguments.append(path)
    let result = try execute(arguments, environment: ["CASK_PASSWORD": password])
    if !result.stderr.isEmpty { print("[read-store \(checkHints ? "--check-hints " : "")\(path)] \(result.stderr)") }
    return result
  }

  static func execute(_ arguments: [String], environment: [String: String]) throws -> Result {
    let result = try StoreReaderScript.execute(arguments, environment: environment.mapValues { $0 })
    return Result(status: result.status, stdout: result.stdout, stderr: result.stderr)
  }
}
