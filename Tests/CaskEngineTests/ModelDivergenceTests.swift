import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The model: a plain dictionary keyed by each key's UTF-8 bytes. (A `[String: Data]` would
/// be wrong here: `String` equality is canonical equivalence, so "é" and "e\u{301}" would be one
/// model key, while the store rightly keeps two.)
private typealias Model = [[UInt8]: Data]

@Suite("The store never diverges from a Dictionary model")
struct ModelDivergenceTests {
  /// Keys chosen to trip up an index: normalization twins, prefixes of each other, multibyte,
  /// U+0000 groups, control characters, and long keys. (Keys at the 65,535-byte limit have
  /// their own test, InvalidKeyTests; here they would make every step slow in debug builds.)
  private static let fixedKeys: [String] = [
    "a", "b", "ab", "abc", "k1", "k10", "k2", " ", "key with spaces", "tab\tkey", "line\nkey",
    "caf\u{E9}", "cafe\u{301}", "\u{E9}", "e\u{301}", "e", "\u{C5}", "A\u{30A}", "\u{212B}",
    "ключ", "ключи", "鍵", "鍵の束", "🔑", "🔑🔑", "👩‍👩‍👧", "\u{FEFF}bom",
    "users\u{0}1", "users\u{0}2", "users\u{0}", "users", "users1", "\u{0}", "\u{0}x", "a\u{0}\u{0}b",
    String(repeating: "x", count: 1_000), String(repeating: "x", count: 999) + "y",
    String(repeating: "\u{E9}", count: 300), String(repeating: "L", count: 4_000),
  ]

  private static let prefixes: [String] = [
    "", "a", "ab", "k1", "caf", "cafe", "e", "\u{E9}", "A", "users", "users\u{0}", "\u{0}", "ключ", "鍵",
    "🔑", "x", "xxxxxxxxxx", "L", "nothing-has-this-prefix",
  ]

  private static let alphabet: [Character] = [
    "a", "b", "z", "0", "-", "\u{E9}", "e", "\u{301}", "ж", "語", "🔑", "\u{0}", " ",
  ]

  @Test("random puts, deletes, batches, reopens, compactions and password changes match the model")
  func matchesModel() throws {
    var random = SeededRandom.make(test: "ModelDivergenceTests.matchesModel")
    // Normalization twins must be two keys to the store, one to String's ==.
    #expect("caf\u{E9}" == "cafe\u{301}")
    #expect(Array("caf\u{E9}".utf8) != Array("cafe\u{301}".utf8))
    for run in 0..<testIterations(2) {
      try Self.run(run, steps: 80, random: &random)
    }
  }

  private static func run(_ run: Int, steps: Int, random: inout SeededRandom) throws {
    try withTemporaryDirectory("model") { directory throws in
      let path = directory.file("store.cask")
      // No fsync: this test never crashes the store, and syncs would make it I/O-bound.
      var options = CaskStore.Options(durability: .never, autoCompaction: nil, fileSystem: UnsyncedFileSystem())
      options.segmentSizeLimit = [4 << 10, 8 << 10, 16 << 10, 64 << 10].randomElement(using: &random)!
      if Bool.random(using: &random) {
        // Background compaction races the steps below; it must not change what they see.
        options.autoCompaction = CaskStore.AutoCompaction(deadRatio: 0.3, minimumDeadBytes: 0)
      }
      var keys = fixedKeys
      for _ in 0..<12 {
        let length = Int.random(in: 1...24, using: &random)
        keys.append(String((0..<length).map { _ in alphabet.randomElement(using: &random)! }))
      }
      var password = "first password \(run)"
      var previousPassword: String?
      var store = try CaskStore(path: path, password: password, options: options)
      var model: Model = [:]
      var log: [String] = []
      defer { try? store.close() }

      for step in 0..<steps {
        let roll = Int.random(in: 0..<100, using: &random)
        let key = keys.randomElement(using: &random)!
        switch roll {
        case 0..<32:
          let value = randomValue(&random)
          log.append("put \(describe(key)) (\(value.count) bytes)")
          try store.put(value, forKey: key)
          model[Array(key.utf8)] = value
        case 32..<47:
          // Mostly keys that exist, sometimes ones that do not.
          let target = Bool.random(using: &random) ? existingKey(in: model, &random) ?? key : key
          log.append("delete \(describe(target))")
          let existed = try store.delete(target)
          #expect(existed == (model.removeValue(forKey: Array(target.utf8)) != nil), "step \(step): delete result")
        case 47..<70:
          // With background compaction running, file sizes may change under the check.
          try batchStep(
            store, keys: keys, model: &model, log: &log, random: &random,
            path: options.autoCompaction == nil ? path : nil)
        case 70..<80:
          // Close and open again; sometimes lose the active segment's hint, as a crash would.
          let dropHint = Bool.random(using: &random)
          log.append("reopen\(dropHint ? " without the last hint" : "")")
          try store.close()
          if dropHint, let last = try DamageFixture.segmentNames(in: path).last {
            try? FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: last))")
          }
          if let old = previousPassword {
            #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: old, options: options) }
            previousPassword = nil
          }
          store = try CaskStore(path: path, password: password, options: options)
          #expect(store.stats().recovery.isClean, "step \(step): \(store.stats().recovery)")
        case 80..<90:
          log.append("compact")
          if try store.compact() != nil, options.autoCompaction == nil {
            #expect(store.stats().deadBytes == 0, "step \(step): dead bytes after compaction")
          }
        case 90..<95:
          previousPassword = previousPassword ?? password
          password = "pässwörd \(run).\(step) 🔑"
          log.append("changePassword")
          try store.changePassword(to: password)
        case 95..<97:
          // Many small overwrites: enough writes for the automatic compaction check (every 256
          // writes) to start a background compaction that races the next steps.
          let hot = (0..<4).map { _ in keys.randomElement(using: &random)! }
          log.append("300 overwrites of 4 keys")
          for index in 0..<300 {
            let value = random.bytes(Int.random(in: 0...32, using: &random))
            try store.put(value, forKey: hot[index % hot.count])
            model[Array(hot[index % hot.count].utf8)] = value
          }
        default:
          log.append("verify")
          let report = try store.verify()
          #expect(report.isClean, "step \(step): \(report.damage)")
          #expect(report.recordsChecked >= model.count)
        }
        try expectAgrees(store, model, keys: keys, step: step, log: log)
      }
      let report = try store.verify()
      #expect(report.isClean, "final verify: \(report.damage)")
      try store.close()
      store = try CaskStore(path: path, password: password, options: options)
      try expectAgrees(store, model, keys: keys, step: steps, log: log)
    }
  }

  /// A batch of 1–8 mixed operations, sometimes on one key twice; sometimes its body throws
  /// at the end (then nothing may be written).
  private static func batchStep(
    _ store: CaskStore, keys: [String], model: inout Model, log: inout [String], random: inout SeededRandom,
    path: String?
  ) throws {
    var operations: [(key: String, value: Data?)] = []
    for _ in 0..<Int.random(in: 1...8, using: &random) {
      let key =
        !operations.isEmpty && Int.random(in: 0..<4, using: &random) == 0
        ? operations.randomElement(using: &random)!.key : keys.randomElement(using: &random)!
      operations.append((key, Int.random(in: 0..<3, using: &random) == 0 ? nil : randomValue(&random)))
    }
    let failure = Int.random(in: 0..<6, using: &random)
    log.append("batch of \(operations.count)\(failure < 2 ? " that throws" : "")")
    // The hints of segments earlier puts filled are written in the background: waited for, so
    // that only the batch can change the files compared.
    store.hintQueue.drain()
    let filesBefore = try path.map(fileContents)
    do {
      try store.batch { batch in
        for (key, value) in operations {
          if let value { try batch.put(value, forKey: key) } else { try batch.delete(key) }
        }
        if failure == 0 { throw CancellationError() }
        if failure == 1 { try batch.put(Data("never".utf8), forKey: "") }
      }
      #expect(failure >= 2, "a throwing batch body did not throw")
      for (key, value) in operations { model[Array(key.utf8)] = value }
    } catch is CancellationError {
      #expect(failure == 0)
    } catch CaskError.invalidKey {
      #expect(failure == 1)
    }
    if failure < 2, let path {
      #expect(try fileContents(path) == filesBefore, "a batch whose body threw wrote to the store")
    }
  }

  /// Compares every observable of the store with the model.
  private static func expectAgrees(_ store: CaskStore, _ model: Model, keys: [String], step: Int, log: [String])
    throws
  {
    let context = { "step \(step), after: \(log.suffix(3).joined(separator: "; "))" }
    #expect(store.count == model.count, "\(context())")
    #expect(store.stats().keys == model.count, "\(context())")
    let expectedKeys = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
    #expect(try store.keys().map { Array($0.utf8) } == expectedKeys, "\(context())")
    for prefix in prefixes {
      let bytes = Array(prefix.utf8)
      #expect(
        try store.keys(withPrefix: prefix).map { Array($0.utf8) } == expectedKeys.filter { $0.starts(with: bytes) },
        "prefix \(describe(prefix)), \(context())")
    }
    for key in keys {
      let expected = model[Array(key.utf8)]
      #expect(try store.get(key) == expected, "get \(describe(key)), \(context())")
      #expect(try store.contains(key) == (expected != nil), "contains \(describe(key)), \(context())")
    }
  }

  private static func randomValue(_ random: inout SeededRandom) -> Data {
    let length: Int
    switch Int.random(in: 0..<100, using: &random) {
    case 0..<10: length = 0
    case 10..<50: length = Int.random(in: 1...64, using: &random)
    case 50..<88: length = Int.random(in: 65...4_096, using: &random)
    default: length = Int.random(in: 4_097...100_000, using: &random)
    }
    return random.bytes(length)
  }

  private static func existingKey(in model: Model, _ random: inout SeededRandom) -> String? {
    // Sorted first: a dictionary's order changes from process to process, a replay must not.
    model.keys.sorted { $0.lexicographicallyPrecedes($1) }.randomElement(using: &random).map {
      String(decoding: $0, as: UTF8.self)
    }
  }

  /// The store's files, byte for byte: a write that should not have happened changes one of
  /// them, also one into the zeros reserved ahead of the writer (which leaves sizes alone).
  private static func fileContents(_ path: String) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      contents[name] = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)"))
    }
    return contents
  }

  /// A key for a failure message: short keys as Unicode scalars, long ones by length.
  private static func describe(_ key: String) -> String {
    key.utf8.count > 40
      ? "<\(key.utf8.count)-byte key>" : "\"\(key.unicodeScalars.map { $0.escaped(asASCII: true) }.joined())\""
  }
}
